"""A small tool-using agent, one per provider, driven through the real SDKs.

Each run asks for the weather, retries once after a 429 (the SDK's own retries are off,
so the retry is the agent's and the trace sees both calls), runs the tool the model
calls, and streams the final answer. The same code runs against a fake model (the
traced run) and against the imported cassette (the replay).
"""

from __future__ import annotations

import copy
import json
from typing import Any

QUESTION = "What is the weather in Leeds?"
SYSTEM = "Answer in one sentence."
PROVIDERS = ("anthropic", "openai_chat", "openai_responses", "gemini")


def weather(city: str) -> str:
    return f"sunny in {city}"


def _retrying(call: Any, errors: tuple[type[BaseException], ...]) -> Any:
    try:
        return call()
    except errors:
        return call()  # one retry, as an agent loop does after a 429


def run(provider: str) -> str:
    """The agent's final answer."""
    return {
        "anthropic": _anthropic,
        "openai_chat": _chat,
        "openai_responses": _responses,
        "gemini": _gemini,
    }[provider]()


def _anthropic() -> str:
    import anthropic

    client = anthropic.Anthropic(api_key="test-key", max_retries=0)
    tools = [
        {
            "name": "weather",
            "description": "The weather in a city.",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    ask = {"model": "claude-test-1", "max_tokens": 256, "system": SYSTEM, "tools": tools}
    first = _retrying(
        lambda: client.messages.create(**ask, messages=messages), (anthropic.RateLimitError,)
    )
    call = next(b for b in first.content if b.type == "tool_use")
    messages += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call.id, "content": weather(**call.input)}
            ],
        },
    ]
    text = ""
    # Iterated, not used as a context manager: OpenLLMetry's Anthropic instrumentation
    # (0.62.4) never ends the span of a stream closed by `with`, and the call is missing
    # from the trace.
    for event in client.messages.create(**ask, messages=messages, stream=True):
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            text += event.delta.text
    client.close()
    return text


def _chat() -> str:
    import openai

    client = openai.OpenAI(api_key="test-key", max_retries=0)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "The weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
    ]
    first = _retrying(
        lambda: client.chat.completions.create(model="gpt-test-1", messages=messages, tools=tools),
        (openai.RateLimitError,),
    )
    call = first.choices[0].message.tool_calls[0]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {
            "role": "tool",
            "tool_call_id": call.id,
            "content": weather(**json.loads(call.function.arguments)),
        },
    ]
    stream = client.chat.completions.create(
        model="gpt-test-1", messages=messages, tools=tools, stream=True
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    client.close()
    return text


def _responses() -> str:
    import openai

    client = openai.OpenAI(api_key="test-key", max_retries=0)
    tools = [
        {
            "type": "function",
            "name": "weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    # Each call gets its own copy of the items: OpenLLMetry's OpenAI instrumentation
    # (0.62.4) adds "type": "message" to the caller's input items in place, which would
    # change what the traced run sends next (an untraced run sends them as written).
    first = _retrying(
        lambda: client.responses.create(
            model="gpt-test-1", instructions=SYSTEM, input=copy.deepcopy(items), tools=tools
        ),
        (openai.RateLimitError,),
    )
    call = next(o for o in first.output if o.type == "function_call")
    items += [
        {
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": call.arguments,
        },
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": weather(**json.loads(call.arguments)),
        },
    ]
    stream = client.responses.create(
        model="gpt-test-1",
        instructions=SYSTEM,
        input=copy.deepcopy(items),
        tools=tools,
        stream=True,
    )
    text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
    client.close()
    return text


def _gemini() -> str:
    from google import genai
    from google.genai import errors, types

    client = genai.Client(
        api_key="test-key",
        http_options=types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=1)),
    )
    tool = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="weather",
                description="The weather in a city.",
                parameters={"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
            )
        ]
    )
    config = types.GenerateContentConfig(
        tools=[tool],
        system_instruction=SYSTEM,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    first = _retrying(
        lambda: client.models.generate_content(
            model="gemini-test-1", contents=contents, config=config
        ),
        (errors.ClientError,),
    )
    call = first.candidates[0].content.parts[0].function_call
    contents += [
        first.candidates[0].content,
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        name=call.name, response={"result": weather(**call.args)}
                    )
                )
            ],
        ),
    ]
    stream = client.models.generate_content_stream(
        model="gemini-test-1", contents=contents, config=config
    )
    text = "".join(chunk.text or "" for chunk in stream)
    client.close()
    return text


def pydantic_ai_run(tracer_provider: Any = None) -> tuple[str, dict[str, Any]]:
    """A pydantic-ai agent with a tool, traced by pydantic-ai's own instrumentation when
    ``tracer_provider`` is given: its output and its normalized run log."""
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.instrumented import InstrumentationSettings, InstrumentedModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from pytest_agentreplay.runlog import RunLog

    model: Any = AnthropicModel("claude-test-1", provider=AnthropicProvider(api_key="test-key"))
    if tracer_provider is not None:
        model = InstrumentedModel(model, InstrumentationSettings(tracer_provider=tracer_provider))
    agent = Agent(model, system_prompt=SYSTEM, tools=[weather])
    result = agent.run_sync(QUESTION)
    return result.output, RunLog.from_pydantic_ai(result.all_messages()).normalized()
