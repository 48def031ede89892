"""A small tool-using agent, one per provider, driven through the real SDKs.

Each run asks for the weather, retries once after a 429, a timeout or a dropped
connection (the SDK's own retries are off, so the retry is the agent's and the trace
sees both calls), runs the tool the model
calls, and streams the final answer. The same code runs against a fake model (the
traced run) and against the imported cassette (the replay).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import Iterator
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
        lambda: client.messages.create(**ask, messages=messages),
        (anthropic.RateLimitError, anthropic.APIConnectionError),
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
        (openai.RateLimitError, openai.APIConnectionError),
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
        (openai.RateLimitError, openai.APIConnectionError),
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
    import httpx
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
        (errors.ClientError, httpx.TransportError),  # google-genai raises httpx's own
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


def ask(provider: str, *, stream: bool, said: list[str] | None = None) -> dict[str, Any]:
    """One call asking a thinking model a question, streamed or not: the reasoning and
    the answer the SDK gives back (``thinking`` is ``None`` where the SDK has no place
    for it: OpenAI Chat Completions). A Chat stream's text is also added to ``said`` as
    it arrives (what a stream that breaks off said first)."""
    if provider == "openai_chat":
        return _ask_chat(stream, [] if said is None else said)
    return {
        "anthropic": _ask_anthropic,
        "openai_responses": _ask_responses,
        "gemini": _ask_gemini,
    }[provider](stream)


def _ask_anthropic(stream: bool) -> dict[str, Any]:
    import anthropic

    client = anthropic.Anthropic(api_key="test-key", max_retries=0)
    ask: dict[str, Any] = {
        "model": "claude-test-1",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": QUESTION}],
    }
    usage: dict[str, Any] = {}
    if stream:
        blocks: dict[int, dict[str, str]] = {}
        for event in client.messages.create(**ask, stream=True):
            if event.type == "message_start":
                usage["input"] = event.message.usage.input_tokens
            elif event.type == "message_delta":
                usage["output"] = event.usage.output_tokens
            elif event.type == "content_block_delta":
                block = blocks.setdefault(event.index, {"thinking": "", "text": ""})
                if event.delta.type == "thinking_delta":
                    block["thinking"] += event.delta.thinking
                elif event.delta.type == "text_delta":
                    block["text"] += event.delta.text
        said = list(blocks.values())
    else:
        message = client.messages.create(**ask)
        usage = {"input": message.usage.input_tokens, "output": message.usage.output_tokens}
        said = [
            {"thinking": getattr(b, "thinking", ""), "text": getattr(b, "text", "")}
            for b in message.content
        ]
    client.close()
    return {
        "thinking": "".join(b["thinking"] for b in said),
        "text": "".join(b["text"] for b in said),
        "usage": usage,
    }


def _ask_chat(stream: bool, said: list[str]) -> dict[str, Any]:
    import openai

    client = openai.OpenAI(api_key="test-key", max_retries=0)
    messages = [{"role": "user", "content": QUESTION}]
    if stream:
        chunks = client.chat.completions.create(
            model="gpt-test-1", messages=messages, stream=True, reasoning_effort="low"
        )
        try:
            for chunk in chunks:
                said.extend(c.delta.content or "" for c in chunk.choices)
        finally:
            # OpenLLMetry's OpenAI instrumentation (0.62.4) ends the span of a stream that
            # broke off when the stream is closed (else only when it is collected).
            chunks.close()
        text = "".join(said)
    else:
        completion = client.chat.completions.create(
            model="gpt-test-1", messages=messages, reasoning_effort="low"
        )
        text = completion.choices[0].message.content or ""
    client.close()
    return {"thinking": None, "text": text}


def _ask_responses(stream: bool) -> dict[str, Any]:
    import openai

    client = openai.OpenAI(api_key="test-key", max_retries=0)
    ask: dict[str, Any] = {
        "model": "gpt-test-1",
        "input": QUESTION,
        "reasoning": {"effort": "low", "summary": "auto"},
    }
    if stream:
        with client.responses.stream(**ask) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**ask)
    client.close()
    summaries = [s.text for o in response.output if o.type == "reasoning" for s in o.summary]
    usage = response.usage
    return {
        "thinking": "".join(summaries),
        "text": response.output_text,
        "usage": [
            usage.input_tokens,
            usage.output_tokens,
            usage.output_tokens_details.reasoning_tokens,
        ],
    }


def _ask_gemini(stream: bool) -> dict[str, Any]:
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key="test-key",
        http_options=types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=1)),
    )
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True)
    )
    ask: dict[str, Any] = {"model": "gemini-test-1", "contents": QUESTION, "config": config}
    if stream:
        chunks = list(client.models.generate_content_stream(**ask))
    else:
        chunks = [client.models.generate_content(**ask)]
    client.close()
    parts = [p for c in chunks for p in c.candidates[0].content.parts or []]
    usage = chunks[-1].usage_metadata
    return {
        "thinking": "".join(p.text or "" for p in parts if p.thought),
        "text": "".join(p.text or "" for p in parts if not p.thought),
        "usage": [
            usage.prompt_token_count,
            usage.candidates_token_count,
            usage.thoughts_token_count,
        ],
    }


def failure(provider: str) -> dict[str, Any]:
    """A streamed :func:`ask` that fails: the text it streamed first, and the error as
    its class name and message (every SDK's error is compared alike)."""
    said: list[str] = []
    try:
        answer = ask(provider, stream=True, said=said)
    except Exception as exc:
        return {"said": "".join(said), "error": f"{type(exc).__name__}: {exc}"}
    return {"said": answer["text"], "error": None}


@contextlib.contextmanager
def openai_agents_traced(path: Any) -> Iterator[None]:
    """openai-agents' own tracing, bridged to OpenTelemetry by logfire
    (``logfire.instrument_openai_agents()``), its spans written to ``path`` as OTLP JSON
    lines, while the block runs. A trace provider of its own, with no processor: nothing
    goes to OpenAI's trace ingest; the one before is back afterwards."""
    import logfire
    from agents.tracing import get_trace_provider, set_trace_provider
    from agents.tracing.provider import DefaultTraceProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from .otlp_file import OTLPJsonFileSpanExporter

    before = get_trace_provider()
    set_trace_provider(DefaultTraceProvider())
    exporter = SimpleSpanProcessor(OTLPJsonFileSpanExporter(path))
    instance = logfire.configure(
        local=True,
        send_to_logfire=False,
        console=False,
        metrics=False,
        additional_span_processors=[exporter],
    )
    instance.instrument_openai_agents()
    try:
        yield
    finally:
        instance.force_flush()
        set_trace_provider(before)


def openai_agents_run() -> tuple[str, dict[str, Any]]:
    """An openai-agents agent with a tool (the Responses API): its output and the
    normalized run log of its model calls."""
    import openai
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool

    from pytest_agentreplay.runlog import RunLog

    client = openai.AsyncOpenAI(api_key="test-key", max_retries=0)
    model = OpenAIResponsesModel(model="gpt-test-1", openai_client=client)
    agent = Agent(name="weather", instructions=SYSTEM, model=model, tools=[function_tool(weather)])
    # A loop of its own (Runner.run_sync reuses one that a run before may have shut down)
    result = asyncio.run(_closing(client, Runner.run(agent, QUESTION)))
    return result.final_output, RunLog.from_openai_agents(result).normalized()


async def _closing(client: Any, run: Any) -> Any:
    try:
        return await run
    finally:
        await client.close()
