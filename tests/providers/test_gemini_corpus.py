"""Real recorded Gemini traffic: decoded, folded, read back and replayed.

The recordings are the Gemini interactions of ``tests/corpus/real`` and the public
pydantic-ai cassettes in ``tests/corpus/gemini`` (see its PROVENANCE.md). Each
stream is folded by the codec and compared with what the real google-genai SDK
makes of the same bytes chunk by chunk; each body reads back as a reply; each file
replays through the plugin to the SDK exactly as the original bytes do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import errors

from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.providers.catalog import gemini_method
from pytest_agentreplay.providers.gemini import GeminiCodec
from pytest_agentreplay.providers.routes import handles
from pytest_agentreplay.sse import decode
from tests import corpus
from tests.providers import _gemini_sdk as sdk

pytestmark = pytest.mark.sdk

CODEC = GeminiCodec()
HERE = Path(__file__).parent.parent / "corpus"
FILES = [
    *sorted((HERE / "gemini").glob("*.yaml")),
    HERE / "real" / "other" / "pydantic-ai__test_google_model_stream.yaml",
    HERE / "real" / "other" / "crewai__test_google_streaming_returns_usage_metrics.yaml",
]
ITEMS = [
    item for path in FILES for item in corpus.load(path) if handles("gemini", "POST", item.path)
]
STREAMS = [i for i in ITEMS if i.status == 200 and "streamGenerateContent" in i.path]
BODIES = [i for i in ITEMS if i.status == 200 and "streamGenerateContent" not in i.path]
ERRORS = [i for i in ITEMS if i.status >= 400]
_DROP = frozenset({"content-length", "transfer-encoding", "content-encoding"})


def test_the_recordings_are_all_here() -> None:
    assert (len(FILES), len(STREAMS), len(BODIES), len(ERRORS)) == (13, 8, 9, 3)


def _headers(item: corpus.CorpusInteraction) -> dict[str, str]:
    return {k: v for k, v in item.headers.items() if k not in _DROP}


def _original(item: corpus.CorpusInteraction) -> sdk.Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(item.status, headers=_headers(item), content=item.body)

    return handler


def _model(item: corpus.CorpusInteraction) -> str:
    found = gemini_method(item.path)
    assert found is not None
    return found[0]


def _seen(client: Any, item: corpus.CorpusInteraction, *, stream: bool) -> sdk.Seen:
    seen = sdk.Seen()
    if stream:
        for chunk in client.models.generate_content_stream(model=_model(item), contents="Hi"):
            seen.add(chunk)
        return seen
    return seen.add(client.models.generate_content(model=_model(item), contents="Hi"))


@pytest.mark.parametrize("item", STREAMS, ids=lambda i: i.id)
def test_fold_of_a_recorded_stream_is_what_the_sdk_assembles(
    item: corpus.CorpusInteraction,
) -> None:
    decoded = decode(item.body)
    assert decoded.events and not decoded.truncated
    folded = CODEC.fold_detailed(decoded.events)
    assert (folded.complete, folded.error, folded.unknown) == (True, None, [])

    streamed = _seen(sdk.client(_original(item)), item, stream=True)
    whole = sdk.json_handler(folded.body)
    assert _seen(sdk.client(whole), item, stream=False) == _seen_as_one(streamed)

    reply = CODEC.to_reply(folded.body)
    assert reply.text_content == streamed.text
    assert [(c.name, c.args) for c in reply.tool_calls] == [(n, a) for n, a, _ in streamed.calls]
    assert "".join(p.text for p in reply.parts if p.kind == "thinking") == streamed.thoughts


def _seen_as_one(streamed: sdk.Seen) -> sdk.Seen:
    """What the non-streaming call reads: one response, however many chunks."""
    streamed.chunks = 1
    return streamed


@pytest.mark.parametrize("item", BODIES, ids=lambda i: i.id)
@pytest.mark.filterwarnings("ignore:MODEL_ARMOR is not a valid FinishReason")  # the SDK lags
def test_a_recorded_body_reads_back_as_the_sdk_reads_it(item: corpus.CorpusInteraction) -> None:
    body = json.loads(item.body)
    reply = CODEC.to_reply(body)
    seen = _seen(sdk.client(_original(item)), item, stream=False)
    assert reply.text_content == seen.text
    assert [(c.name, c.args) for c in reply.tool_calls] == [(n, a) for n, a, _ in seen.calls]
    if body.get("promptFeedback", {}).get("blockReason") or seen.finish == "SAFETY":
        assert reply.stop == "refusal"
    # A body is its own fold: one event holding it adds up to it.
    assert (
        CODEC.fold(decode(b"data: " + item.body.replace(b"\n", b"") + b"\r\n\r\n").events) == body
    )


@pytest.mark.parametrize("item", ERRORS, ids=lambda i: i.id)
def test_a_recorded_error_raises_the_sdks_client_error(item: corpus.CorpusInteraction) -> None:
    # Google answered 400 with content-type text/event-stream and a plain JSON body
    # (FORMATS.md pitfall 7): the SDK still raises its ClientError from it.
    with pytest.raises(errors.ClientError) as info:
        _seen(sdk.client(_original(item)), item, stream=True)
    assert info.value.code == item.status == json.loads(item.body)["error"]["code"]
    assert info.value.status == "INVALID_ARGUMENT"


def _replay_param(path: Path) -> Any:
    marker = pytest.mark.agentreplay(cassette=str(path), match_on=["method", "path"])
    return pytest.param(path, id=path.name, marks=marker)


@pytest.mark.parametrize("path", [_replay_param(p) for p in FILES])
@pytest.mark.filterwarnings("ignore:MODEL_ARMOR is not a valid FinishReason")
def test_a_recording_replays_to_the_sdk_as_the_original_bytes(
    path: Path, agentreplay: AgentReplay
) -> None:
    for item in corpus.load(path):
        if not handles("gemini", "POST", item.path) or "aiplatform" in (item.url or ""):
            with httpx.Client() as raw:  # the token call, a Vertex call: bytes for bytes
                body = item.request_body
                sent = {"content": body} if isinstance(body, bytes) else {"json": body}
                replayed = raw.post(item.url or "", **sent)
                assert replayed.content == item.body or replayed.json() == json.loads(item.body)
            continue
        stream = "streamGenerateContent" in item.path
        outcomes = []
        for handler in (None, _original(item)):
            # the API version the recording was made with (google-genai 3.0 sends to v1)
            recorded = item.path.split("/")[1]
            client = sdk.client(handler) if handler else sdk.default_client(recorded)
            try:
                outcomes.append(_seen(client, item, stream=stream))
            except errors.APIError as exc:
                outcomes.append((type(exc).__name__, exc.code, exc.status, exc.message))
        assert outcomes[0] == outcomes[1], item.id
    assert agentreplay.unplayed == []
