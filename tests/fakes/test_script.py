"""One script serves every wire format: real SDKs, sync and async, streaming and not."""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay import FakeModel, Reply, Text, Thinking, Usage
from tests import sdk

MODES = [
    pytest.param(p, s, id=f"{p}-{'stream' if s else 'json'}")
    for p in sdk.PROVIDERS
    for s in (False, True)
]


@pytest.mark.parametrize(("provider", "stream"), MODES)
def test_scripted_text_and_usage_sync(
    provider: str, stream: bool, scripted_model: FakeModel
) -> None:
    scripted_model.script(
        Reply.text("The quick brown fox jumps.", usage=Usage(input_tokens=11, output_tokens=7))
    )
    seen = sdk.call(provider, stream=stream)
    assert seen.text == "The quick brown fox jumps."
    assert seen.usage == (11, 7)
    if stream:
        assert len(seen.deltas) > 1, "text must arrive as several deltas"
        assert "".join(seen.deltas) == seen.text
    [entry] = scripted_model.log
    assert (entry.provider, entry.streaming, entry.outcome) == (provider, stream, "completed")
    assert (entry.events_sent > 3) is stream


@pytest.mark.anyio
@pytest.mark.parametrize(("provider", "stream"), MODES)
async def test_scripted_text_and_usage_async(
    provider: str, stream: bool, scripted_model: FakeModel
) -> None:
    scripted_model.script(
        Reply.text("Hello from the async side.", usage=Usage(input_tokens=3, output_tokens=5))
    )
    seen = await sdk.acall(provider, stream=stream)
    assert seen.text == "Hello from the async side."
    assert seen.usage == (3, 5)
    assert [c.outcome for c in scripted_model.log] == ["completed"]


@pytest.mark.parametrize(("provider", "stream"), MODES)
def test_tool_call_arguments_arrive_intact(
    provider: str, stream: bool, scripted_model: FakeModel
) -> None:
    args = {"city": "Leeds", "days": 3, "units": {"temp": "C", "wind": ["mph", "kph"]}}
    scripted_model.script(Reply.tool_call("weather", args, id="call_fixed_1"))
    seen = sdk.call(provider, stream=stream, **sdk.tools_arg(provider))
    assert seen.tool_calls == [("weather", args)]
    assert seen.stop in ("tool_use", "tool_calls", "completed")
    request = scripted_model.last_request
    assert [t.name for t in request.tools] == ["weather"]


@pytest.mark.parametrize("provider", ["anthropic", "openai_chat", "openai_responses"])
def test_tool_arguments_are_streamed_as_several_deltas(
    provider: str, scripted_model: FakeModel
) -> None:
    args = {"city": "Kingston upon Hull", "note": "x" * 40}
    scripted_model.script(Reply.tool_call("weather", args))
    fragments = _argument_fragments(provider, **sdk.tools_arg(provider))
    assert len(fragments) > 2
    assert json.loads("".join(fragments)) == args


def _argument_fragments(provider: str, **extra: object) -> list[str]:
    client = sdk.client(provider)
    if provider == "anthropic":
        with client.messages.stream(
            model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}], **extra
        ) as s:
            return [
                e.delta.partial_json
                for e in s
                if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
            ]
    if provider == "openai_chat":
        stream = client.chat.completions.create(
            model="m", stream=True, messages=[{"role": "user", "content": "hi"}], **extra
        )
        return [
            t.function.arguments
            for chunk in stream
            for c in chunk.choices
            for t in c.delta.tool_calls or []
            if t.function and t.function.arguments
        ]
    stream = client.responses.create(model="m", input="hi", stream=True, **extra)
    return [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]


def test_thinking_reaches_the_anthropic_sdk(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply(parts=[Thinking(text="Let me think.", signature="sig-1"), Text(text="42.")])
    )
    client = sdk.client("anthropic")
    with client.messages.stream(
        model="m", max_tokens=99, messages=[{"role": "user", "content": "?"}]
    ) as s:
        message = s.get_final_message()
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "Let me think."
    assert message.content[0].signature == "sig-1"


def test_thinking_reaches_the_responses_sdk_as_reasoning(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply(parts=[Thinking(text="Pondering."), Text(text="Done.")]))
    response = sdk.client("openai_responses").responses.create(model="m", input="?")
    kinds = [o.type for o in response.output]
    assert kinds == ["reasoning", "message"]
    assert response.output[0].summary[0].text == "Pondering."
    assert response.output_text == "Done."


def test_empty_reply_is_a_valid_empty_completion(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply(), Reply(), Reply())
    assert sdk.call("anthropic", stream=True).text == ""
    assert sdk.call("openai_chat", stream=False).text == ""
    assert sdk.call("openai_responses", stream=True).text == ""


# --- multi-turn tool loops, the way an agent drives them -------------------------------


def _anthropic_loop(client: object) -> str:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Weather in Leeds?"}]
    tools = sdk.tools_arg("anthropic")
    while True:
        m = client.messages.create(model="m", max_tokens=99, messages=messages, **tools)  # type: ignore[attr-defined]
        if m.stop_reason != "tool_use":
            return "".join(b.text for b in m.content if b.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump() for b in m.content]})
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": b.id,
                        "content": f"sunny in {b.input['city']}",
                    }
                    for b in m.content
                    if b.type == "tool_use"
                ],
            }
        )


def _chat_loop(client: object) -> str:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Weather in Leeds?"}]
    tools = sdk.tools_arg("openai_chat")
    while True:
        c = client.chat.completions.create(model="m", messages=messages, **tools)  # type: ignore[attr-defined]
        msg = c.choices[0].message
        if not msg.tool_calls:
            return msg.content or ""
        messages.append(msg.model_dump(exclude_none=True))
        for call in msg.tool_calls:
            city = json.loads(call.function.arguments)["city"]
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": f"sunny in {city}"}
            )


def _responses_loop(client: object) -> str:
    items: list[object] = [{"role": "user", "content": "Weather in Leeds?"}]
    tools = sdk.tools_arg("openai_responses")
    while True:
        r = client.responses.create(model="m", input=items, **tools)  # type: ignore[attr-defined]
        calls = [o for o in r.output if o.type == "function_call"]
        if not calls:
            return r.output_text  # type: ignore[no-any-return]
        items.extend(o.model_dump(exclude_none=True) for o in r.output)
        for call in calls:
            city = json.loads(call.arguments)["city"]
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": call.call_id,
                    "output": f"sunny in {city}",
                }
            )


LOOPS = {
    "anthropic": _anthropic_loop,
    "openai_chat": _chat_loop,
    "openai_responses": _responses_loop,
}


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_multi_turn_tool_loop(provider: str, scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply.tool_call("weather", {"city": "Leeds"}),
        Reply.text("It is sunny in Leeds."),
    )
    assert LOOPS[provider](sdk.client(provider)) == "It is sunny in Leeds."
    first, second = scripted_model.requests
    assert first.tool_results == []
    [result] = second.tool_results
    [call] = scripted_model.log[0].reply.tool_calls if scripted_model.log[0].reply else []
    assert result.content == "sunny in Leeds"
    # The id the agent echoes back is the one the fake generated for the call.
    assert result.tool_call_id
    assert any(result.tool_call_id in json.dumps(c.json()) for c in scripted_model.calls[1:])
    assert call.name == "weather"


def test_ids_are_reproducible_from_the_seed() -> None:
    def run() -> list[str]:
        with FakeModel(Reply.tool_call("f", {}), Reply.text("x"), seed="s1") as fake:
            client = sdk.client("anthropic")
            a = client.messages.create(
                model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
            )
            b = client.messages.create(
                model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
            )
        assert len(fake.log) == 2
        return [a.id, a.content[0].id, b.id]

    assert run() == run()
    assert len(set(run())) == 3


def test_respond_function_sees_the_neutral_request(scripted_model: FakeModel) -> None:
    scripted_model.respond_fn = lambda req: Reply.text(f"echo: {req.last_user_text}")
    assert sdk.call("openai_chat", stream=True, text="ping").text == "echo: ping"
    assert sdk.call("anthropic", stream=False, text="pong").text == "echo: pong"


@pytest.mark.anyio
async def test_async_respond_function() -> None:
    async def respond(req: object) -> Reply:
        return Reply.text("from a coroutine")

    async with FakeModel(respond=respond):
        seen = await sdk.acall("openai_responses", stream=True)
    assert seen.text == "from a coroutine"
    with FakeModel(respond=respond):
        assert sdk.call("anthropic", stream=False).text == "from a coroutine"


def test_script_accepts_plain_strings_and_bare_faults() -> None:
    from pytest_agentreplay import Fault

    fake = FakeModel("hello", Fault.http(503))
    assert [r.text_content for r in fake.remaining] == ["hello", ""]
    assert fake.remaining[1].fault == Fault.http(503)
    with pytest.raises(TypeError, match="Reply, a Fault or a str"):
        fake.script(42)  # type: ignore[arg-type]


def test_serve_adds_a_base_url_with_a_fixed_provider(scripted_model: FakeModel) -> None:
    scripted_model.serve("https://llm.internal.example:8443/proxy", provider="openai_chat")
    scripted_model.script(Reply.text("via proxy"))
    client = sdk.client("openai_chat", base_url="https://llm.internal.example:8443/proxy/v1")
    assert sdk.call("openai_chat", stream=True, sdk=client).text == "via proxy"
    assert scripted_model.log[0].url.startswith("https://llm.internal.example:8443/proxy/")


def test_serve_azure_style_deployment_path(scripted_model: FakeModel) -> None:
    import openai

    scripted_model.serve("https://myres.openai.azure.com")
    scripted_model.script(Reply.text("azure says hi"))
    client = openai.AzureOpenAI(
        api_key="k",
        api_version="2024-10-21",
        azure_endpoint="https://myres.openai.azure.com",
        max_retries=0,
    )
    got = client.chat.completions.create(model="dep1", messages=[{"role": "user", "content": "hi"}])
    assert got.choices[0].message.content == "azure says hi"
    assert "/openai/deployments/dep1/chat/completions" in scripted_model.log[0].url


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_last_user_text_after_a_tool_round_is_the_question_on_every_provider(
    provider: str, scripted_model: FakeModel
) -> None:
    # Issue 20: "" on Anthropic (its tool results travel in a user message), the
    # question on OpenAI.
    scripted_model.script(Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("Sunny."))
    LOOPS[provider](sdk.client(provider))
    assert [r.last_user_text for r in scripted_model.requests] == ["Weather in Leeds?"] * 2


def test_the_call_log_reads_the_same_entries_each_time_and_a_reset_forgets_unread_ones() -> None:
    """A finished call's entry is built when the log is first read (most tests never
    read it): reading again gives the same entries, later calls are added in order,
    and calls finished before a reset are gone whether or not they were read."""
    import httpx2

    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    url = "https://api.anthropic.com/v1/messages"
    with FakeModel("one", "two", Reply.text("three")) as fake, httpx2.Client() as client:
        client.post(url, json=body)
        first = fake.log
        assert [c.outcome for c in first] == ["completed"]
        assert fake.log[0] is first[0]
        client.post(url, json={**body, "stream": True}).read()
        log = fake.log
        assert log[0] is first[0] and [c.index for c in log] == [0, 1]
        assert log[1].streaming and log[1].events_sent > 0 and log[1].reply is not None
        assert log[1].reply.text_content == "two"
        fake.reset()
        fake.script("four")
        client.post(url, json=body)
        assert [(c.index, c.reply and c.reply.text_content) for c in fake.log] == [(0, "four")]
