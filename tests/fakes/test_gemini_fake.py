"""A scripted fake serving Gemini to the real google-genai SDK, as users run it.

The client is google-genai's own, with its default transports (``httpx2`` for sync
calls from google-genai 3.0, ``httpx`` before; aiohttp for async ones, issue 19): the
fake answers on ``generativelanguage.googleapis.com`` and, through ``serve()``, on
Vertex AI paths. Faults surface as the SDK's own ``ClientError`` / ``ServerError`` and
its retries."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from google import genai
from google.genai import errors, types

from pytest_agentreplay import FakeModel, Fault, Reply, Text, Thinking, ToolCall, Usage
from pytest_agentreplay.invariants import assert_stream_parity
from tests.sdk_raises import GENAI_API_VERSION, GENAI_HTTP

pytestmark = pytest.mark.sdk

MODEL = "gemini-3.5-flash-lite"


def client(**options: Any) -> genai.Client:
    return genai.Client(api_key="test-key", http_options=types.HttpOptions(**options))


def no_wait(attempts: int = 2) -> types.HttpRetryOptions:
    """google-genai's retry (tenacity), with no sleeping between attempts."""
    return types.HttpRetryOptions(attempts=attempts, initial_delay=0, max_delay=0, jitter=0)


def collect(chunks: Any) -> tuple[str, list[types.GenerateContentResponse]]:
    seen = list(chunks)
    return "".join(c.text or "" for c in seen), seen


def call(sdk: genai.Client, *, stream: bool, seen: list[str] | None = None) -> str:
    """One call's text; a stream's chunks go into ``seen`` as they come (kept when
    the stream raises)."""
    if not stream:
        return sdk.models.generate_content(model=MODEL, contents="x").text or ""
    seen = seen if seen is not None else []
    for chunk in sdk.models.generate_content_stream(model=MODEL, contents="x"):
        seen.append(chunk.text or "")
    return "".join(seen)


# -- replies -------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_text_reply_sync(stream: bool, scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply.text("Paris is the capital.", usage=Usage(input_tokens=7, output_tokens=5))
    )
    sdk = client()
    if stream:
        text, chunks = collect(sdk.models.generate_content_stream(model=MODEL, contents="Capital?"))
        last = chunks[-1]
        assert len(chunks) > 1
    else:
        last = sdk.models.generate_content(model=MODEL, contents="Capital?")
        text = last.text or ""
    assert text == "Paris is the capital."
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    assert last.usage_metadata.prompt_token_count == 7
    assert last.usage_metadata.candidates_token_count == 5
    request = scripted_model.requests[0]
    assert (request.model, request.stream) == (MODEL, stream)
    assert request.messages[-1].text == "Capital?"
    assert scripted_model.calls[0].url.startswith(
        f"https://generativelanguage.googleapis.com/{GENAI_API_VERSION}/models/{MODEL}:"
    )


@pytest.mark.parametrize("stream", [False, True])
def test_text_reply_async(
    stream: bool, scripted_model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted_model.script(Reply.text("Bonjour."))
    through_aiohttp: list[str] = []
    request = aiohttp.ClientSession._request

    def spy(self: aiohttp.ClientSession, method: str, url: Any, **kwargs: Any) -> Any:
        through_aiohttp.append(str(url))
        return request(self, method, url, **kwargs)

    monkeypatch.setattr(aiohttp.ClientSession, "_request", spy)

    async def run() -> str:
        sdk = client()  # async calls: aiohttp, google-genai's default when installed
        if stream:
            out = ""
            async for chunk in await sdk.aio.models.generate_content_stream(
                model=MODEL, contents="Hi"
            ):
                out += chunk.text or ""
            return out
        response = await sdk.aio.models.generate_content(model=MODEL, contents="Hi")
        return response.text or ""

    assert asyncio.run(run()) == "Bonjour."
    assert scripted_model.requests[0].stream is stream
    assert len(through_aiohttp) == 1


def test_tool_call_then_function_response(scripted_model: FakeModel) -> None:
    scripted_model.script(
        Reply(
            parts=[
                Thinking(text="Need the weather.", signature="c2ln"),
                ToolCall(name="weather", args={"city": "Leeds"}),
            ]
        ),
        Reply.text("It is raining in Leeds."),
    )
    sdk = client()
    tool = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="weather",
                description="The weather in a city.",
                parameters_json_schema={
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                },
            )
        ]
    )
    config = types.GenerateContentConfig(
        tools=[tool], thinking_config=types.ThinkingConfig(include_thoughts=True)
    )
    first = sdk.models.generate_content(model=MODEL, contents="Weather in Leeds?", config=config)
    call = first.function_calls[0]
    assert (call.name, call.args) == ("weather", {"city": "Leeds"})
    thought = first.candidates[0].content.parts[0]
    assert (thought.thought, thought.text) == (True, "Need the weather.")
    assert first.candidates[0].content.parts[1].thought_signature == b"sig"

    contents = [
        types.Content(role="user", parts=[types.Part(text="Weather in Leeds?")]),
        first.candidates[0].content,
        types.Content(
            role="user",
            parts=[types.Part.from_function_response(name="weather", response={"result": "rain"})],
        ),
    ]
    second = sdk.models.generate_content(model=MODEL, contents=contents, config=config)
    assert second.text == "It is raining in Leeds."

    first_request, second_request = scripted_model.requests
    assert [t.name for t in first_request.tools] == ["weather"]
    kinds = [[p.kind for p in m.parts] for m in second_request.messages]
    assert "tool_call" in kinds[1] and "tool_result" in kinds[2]
    # The signature the SDK got is sent back with the call it rode on.
    assert scripted_model.calls[1].json()["contents"][1]["parts"][-1]["thoughtSignature"] == "c2ln"


def _answer(stream: bool) -> dict[str, Any]:
    """What an agent keeps of one answer, read from the stream or the whole body."""
    sdk = client()
    if stream:
        chunks = list(sdk.models.generate_content_stream(model=MODEL, contents="Weather?"))
    else:
        chunks = [sdk.models.generate_content(model=MODEL, contents="Weather?")]
    parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]
    return {
        "text": "".join(p.text or "" for p in parts if not p.thought),
        "thoughts": "".join(p.text or "" for p in parts if p.thought),
        "calls": [(p.function_call.name, p.function_call.args) for p in parts if p.function_call],
        "finish": chunks[-1].candidates[0].finish_reason.value,
        "usage": chunks[-1].usage_metadata.model_dump(exclude_none=True),
    }


def test_stream_parity_of_a_served_stream() -> None:
    reply = Reply(
        parts=[
            Thinking(text="The user wants weather."),
            Text(text="Let me check. "),
            ToolCall(name="weather", args={"city": ["Leeds", "York"]}),
        ],
        usage=Usage(input_tokens=12, output_tokens=9, reasoning_tokens=4),
    )
    runs = assert_stream_parity(_answer, script=[reply])
    assert [r.label for r in runs] == ["sse/event", "sse/whole", "sse/1-byte", "sse/7-byte", "json"]
    assert runs[0].result["calls"] == [("weather", {"city": ["Leeds", "York"]})]


# -- faults: the SDK's own exceptions and retries -------------------------------------


@pytest.mark.parametrize(
    ("fault", "error", "code", "status"),
    [
        (Fault.http(400), errors.ClientError, 400, "INVALID_ARGUMENT"),
        (Fault.http(401), errors.ClientError, 401, "UNAUTHENTICATED"),
        (Fault.http(404), errors.ClientError, 404, "NOT_FOUND"),
        (Fault.http(429, retry_after=7), errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        (Fault.http(500), errors.ServerError, 500, "INTERNAL"),
        (Fault.http(503), errors.ServerError, 503, "UNAVAILABLE"),
        (Fault.http(529, error_type="overloaded_error"), errors.ServerError, 529, "UNAVAILABLE"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_http_faults_raise_the_sdks_errors(
    fault: Fault,
    error: type[Exception],
    code: int,
    status: str,
    stream: bool,
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(fault)
    sdk = client()
    with pytest.raises(error) as info:
        call(sdk, stream=stream)
    assert (info.value.code, info.value.status) == (code, status)  # type: ignore[attr-defined]
    if code == 404:
        assert f"models/{MODEL} is not found" in info.value.message  # type: ignore[attr-defined]
    if code == 429:
        details = info.value.details["error"]["details"]  # type: ignore[attr-defined]
        assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"} in details
    assert scripted_model.log[0].outcome == "http_error"


@pytest.mark.parametrize("stream", [False, True])
def test_429_and_503_are_retried_by_the_sdk(stream: bool, scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.http(429), Fault.http(503), Reply.text("ok now"))
    sdk = client(retry_options=no_wait(attempts=3))
    if stream:
        text, _ = collect(sdk.models.generate_content_stream(model=MODEL, contents="x"))
    else:
        text = sdk.models.generate_content(model=MODEL, contents="x").text or ""
    assert text == "ok now"
    assert [c.outcome for c in scripted_model.log] == ["http_error", "http_error", "completed"]
    assert scripted_model.calls[0].content == scripted_model.calls[2].content


def test_a_400_is_not_retried(scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.http(400), Reply.text("unused"))
    scripted_model.configure(check_unused=False)
    sdk = client(retry_options=no_wait(attempts=3))
    with pytest.raises(errors.ClientError):
        call(sdk, stream=False)
    assert len(scripted_model.calls) == 1


def test_in_stream_error_after_partial_text(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("one two three four", fault=Fault.error_event(after_events=2)))
    seen: list[str] = []
    sdk = client()
    with pytest.raises(errors.ServerError) as info:
        call(sdk, stream=True, seen=seen)
    assert (info.value.code, info.value.status) == (503, "UNAVAILABLE")
    assert "".join(seen) == "one two"
    # google-genai raises on the error chunk without closing the response, so the
    # fake's log entry waits for the connection; the call itself was made once.
    assert len(scripted_model.calls) == 1


def test_in_stream_quota_error_is_a_client_error(scripted_model: FakeModel) -> None:
    fault = Fault.error_event(after_events=1, error_type="RESOURCE_EXHAUSTED", message="quota")
    scripted_model.script(Reply.text("a b c", fault=fault))
    sdk = client()
    with pytest.raises(errors.ClientError) as info:
        call(sdk, stream=True)
    assert (info.value.code, info.value.message) == (429, "quota")


def test_error_event_on_a_call_not_streamed_is_the_http_error(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("a b", fault=Fault.error_event(after_events=1)))
    sdk = client()
    with pytest.raises(errors.ServerError) as info:
        call(sdk, stream=False)
    assert info.value.code == 503


def test_a_cut_stream_shows_partial_text_then_a_transport_error(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("one two three four", fault=Fault.cut(after_events=2)))
    seen: list[str] = []
    sdk = client()
    with pytest.raises(GENAI_HTTP.TransportError):
        call(sdk, stream=True, seen=seen)
    assert "".join(seen) == "one two"
    assert scripted_model.log[0].outcome == "cut"


def test_a_cut_stream_is_not_retried_by_the_sdk(scripted_model: FakeModel) -> None:
    # google-genai retries the request (status codes, connection errors), not the
    # reading of a stream whose headers arrived: a cut reaches the caller.
    scripted_model.script(Reply.text("lost", fault=Fault.cut(after_events=0)), Reply.text("unused"))
    scripted_model.configure(check_unused=False)
    sdk = client(retry_options=no_wait())
    with pytest.raises(GENAI_HTTP.RemoteProtocolError):
        collect(sdk.models.generate_content_stream(model=MODEL, contents="x"))
    assert len(scripted_model.calls) == 1


def test_timeout_raises_httpx_timeout(scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.timeout())
    sdk = client()
    with pytest.raises(GENAI_HTTP.TimeoutException):
        call(sdk, stream=False)


@pytest.mark.parametrize("stream", [False, True])
def test_the_empty_candidate(stream: bool, scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.empty())
    sdk = client()
    if stream:
        text, chunks = collect(sdk.models.generate_content_stream(model=MODEL, contents="x"))
        last = chunks[-1]
    else:
        last = sdk.models.generate_content(model=MODEL, contents="x")
        text = last.text or ""
    assert text == ""
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    assert not last.function_calls


def test_a_refusal_is_a_safety_block(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply(stop="refusal"))
    sdk = client()
    response = sdk.models.generate_content(model=MODEL, contents="x")
    assert response.text is None
    assert response.candidates[0].finish_reason == types.FinishReason.SAFETY


# -- countTokens, Vertex, hosts ---------------------------------------------------------


def test_count_tokens_is_answered_and_is_not_a_model_call(scripted_model: FakeModel) -> None:
    sdk = client()
    counted = sdk.models.count_tokens(model=MODEL, contents="How many tokens is this?")
    assert counted.total_tokens and counted.total_tokens > 0
    assert scripted_model.calls == [] and scripted_model.requests == []


def test_vertex_paths_through_serve(scripted_model: FakeModel) -> None:
    scripted_model.serve("https://us-central1-aiplatform.googleapis.com")
    scripted_model.script(Reply.text("from Vertex"), Reply.text("streamed from Vertex"))
    sdk = genai.Client(
        vertexai=True,
        project="my-project",
        location="us-central1",
        credentials=_Anonymous(),
    )
    assert sdk.models.generate_content(model=MODEL, contents="x").text == "from Vertex"
    text, _ = collect(sdk.models.generate_content_stream(model=MODEL, contents="x"))
    assert text == "streamed from Vertex"
    assert (
        "/projects/my-project/locations/us-central1/publishers/google/models/"
        in scripted_model.calls[0].url
    )


class _Anonymous:
    """Credentials that need no refresh and send a fixed token (no network)."""

    token = "test-token"
    valid = True
    expired = False
    quota_project_id = None

    def refresh(self, request: Any) -> None:  # pragma: no cover - never stale
        pass

    def before_request(self, request: Any, method: str, url: str, headers: dict[str, str]) -> None:
        headers["authorization"] = f"Bearer {self.token}"

    def apply(self, headers: dict[str, str], token: str | None = None) -> None:
        headers["authorization"] = f"Bearer {self.token}"
