"""Drive one recorded corpus interaction through the real client a user would use.

:func:`drive` makes the call the recording answers — through the anthropic or
openai SDK (stream helpers for streams, ``create`` for JSON, the SDK's own
exception for an error status), or through a plain ``httpx2`` request for
traffic no SDK here speaks (MCP, Gemini, PostHog) — and reduces what the client
got to plain data: the final message the SDK built, the events it saw, the
exception it raised, or the decoded SSE events / JSON / bytes of the body.

The same function runs twice per interaction: once against the plugin's replay
(the default transport, intercepted) and once against the original bytes as
read by the independent ``tests.corpus`` reader and served by
``httpx2.MockTransport``. Equal results mean the replay is faithful.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anthropic
import httpx2
import openai
from openai._streaming import SSEDecoder

from tests.corpus import CorpusInteraction

Result = dict[str, Any]

# Interactions whose 200 stream ends in the provider's in-stream error: the SDK
# raises, on the original bytes and on the replay alike (FORMATS.md pitfall 6).
IN_STREAM_ERRORS = frozenset(
    {
        "other/pydantic-ai__test_tool_use_failed_error_streaming.yaml#0",
        "other/pydantic-ai__test_openrouter_stream_error.yaml#0",
    }
)
_OPENAI_ENDPOINTS = ("/chat/completions", "/responses", "/embeddings", "/conversations")
_DROP = frozenset({"content-length", "transfer-encoding", "content-encoding"})
_RAW_PROVIDER_URL = {
    "anthropic": "https://api.anthropic.com/v1/messages",
    "openai_chat": "https://api.openai.com/v1/chat/completions",
}


def url_of(item: CorpusInteraction) -> str:
    """The recorded URL (raw body fixtures have none: the provider's default)."""
    if item.url is not None:
        return item.url
    return _RAW_PROVIDER_URL[str(item.provider)]


def original(item: CorpusInteraction) -> httpx2.Client:
    """A client whose every request gets the original bytes of ``item``."""
    headers = {k: v for k, v in item.headers.items() if k not in _DROP}

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(item.status, headers=headers, content=item.body)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def _error(exc: openai.APIError | anthropic.APIError) -> Result:
    return {
        "error": type(exc).__name__,
        "status": getattr(exc, "status_code", None),
        "body": exc.body,
        "message": exc.message,
    }


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json")


def drive(item: CorpusInteraction, http_client: httpx2.Client | None) -> Result:
    """What the client got for ``item``'s request (see the module docstring)."""
    with warnings.catch_warnings():
        # The SDKs' models lag the wire (Mistral's list-valued delta.content, new
        # web-search actions): pydantic warns while they are built and dumped, on the
        # original bytes and on the replay alike.
        warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
        return _drive(item, http_client)


def _drive(item: CorpusInteraction, http_client: httpx2.Client | None) -> Result:
    url = url_of(item)
    path = urlsplit(url).path
    try:
        if item.provider == "anthropic" or path.endswith("/v1/messages/count_tokens"):
            return _anthropic(item, url, http_client)
        if any(endpoint in path for endpoint in _OPENAI_ENDPOINTS) and "mcp" not in path:
            return _openai(item, url, http_client)
    except (anthropic.APIError, openai.APIError) as exc:
        return _error(exc)
    return _raw(item, url, http_client)


# --- anthropic ----------------------------------------------------------------------


def _anthropic_client(url: str, http_client: httpx2.Client | None) -> anthropic.Anthropic:
    parts = urlsplit(url)
    kwargs: dict[str, Any] = {"http_client": http_client} if http_client is not None else {}
    return anthropic.Anthropic(
        api_key="test-key", base_url=f"{parts.scheme}://{parts.netloc}", max_retries=0, **kwargs
    )


def _anthropic(item: CorpusInteraction, url: str, http_client: httpx2.Client | None) -> Result:
    client = _anthropic_client(url, http_client)
    messages: Any = client.beta.messages if "beta=true" in url else client.messages
    args: dict[str, Any] = {
        "model": "claude-test",
        "messages": [{"role": "user", "content": "Hello"}],
    }
    if urlsplit(url).path.endswith("/count_tokens"):
        return {"count": _dump(messages.count_tokens(**args))}
    args["max_tokens"] = 1024
    if not item.is_sse or item.status != 200:
        return {"message": _dump(messages.create(**args))}
    events: list[Any] = []
    with messages.stream(**args) as stream:
        events.extend(_dump(event) for event in stream)
        return {"message": _dump(stream.get_final_message()), "events": events}


# --- openai (and OpenAI-compatible hosts) -------------------------------------------------


def _openai_client(url: str, http_client: httpx2.Client | None) -> openai.OpenAI:
    path = urlsplit(url).path
    cut = min(path.find(e) for e in _OPENAI_ENDPOINTS if e in path)
    parts = urlsplit(url)
    kwargs: dict[str, Any] = {"http_client": http_client} if http_client is not None else {}
    return openai.OpenAI(
        api_key="test-key",
        base_url=f"{parts.scheme}://{parts.netloc}{path[:cut]}",
        max_retries=0,
        **kwargs,
    )


def _openai(item: CorpusInteraction, url: str, http_client: httpx2.Client | None) -> Result:
    client = _openai_client(url, http_client)
    path = urlsplit(url).path
    if path.endswith("/embeddings"):
        return {"embeddings": _dump(client.embeddings.create(model="e", input="Hello"))}
    if "/conversations" in path:
        if item.method == "DELETE":
            return {"deleted": _dump(client.conversations.delete(path.rsplit("/", 1)[1]))}
        return {"conversation": _dump(client.conversations.create())}
    if path.endswith("/chat/completions"):
        return _chat(item, client)
    return _responses(item, url, client)


def _streamed(manager: Any, final: Callable[[Any], Any]) -> Result:
    """Run an SDK stream helper: every event it yields, then its final object; an
    in-stream error is the exception plus what was seen before it."""
    events: list[Any] = []
    with manager as stream:
        try:
            events.extend(_dump(event) for event in stream)
        except (anthropic.APIError, openai.APIError) as exc:
            return {**_error(exc), "events": events}
        try:
            return {"final": _dump(final(stream)), "events": events}
        except openai.LengthFinishReasonError as exc:  # .stream() parses, and refuses this
            return {"refused": type(exc).__name__, "final": _dump(exc.completion), "events": events}


def _chat(item: CorpusInteraction, client: openai.OpenAI) -> Result:
    args: dict[str, Any] = {"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}]}
    if not item.is_sse or item.status != 200:
        return {"completion": _dump(client.chat.completions.create(**args))}
    return _streamed(client.chat.completions.stream(**args), lambda s: s.get_final_completion())


def _responses(item: CorpusInteraction, url: str, client: openai.OpenAI) -> Result:
    if not item.is_sse or item.status != 200:
        return {"response": _dump(client.responses.create(model="gpt-test", input="Hi"))}
    if item.method == "GET":
        return _resumed(url, client)
    manager = client.responses.stream(model="gpt-test", input="Hi")
    return _streamed(manager, lambda s: s.get_final_response())


def _resumed(url: str, client: openai.OpenAI) -> Result:
    """A background response resumed (``GET /responses/{id}?stream=true``): it starts
    mid-way (``response.queued``), which the stream helper refuses, so the SDK's
    typed event stream is read, and its ``response.completed`` is the final one."""
    parts = urlsplit(url)
    after = int(parse_qs(parts.query)["starting_after"][0])
    stream = client.responses.retrieve(
        parts.path.rsplit("/", 1)[1], stream=True, starting_after=after
    )
    events = [_dump(event) for event in stream]
    assert events[-1]["type"] == "response.completed"
    return {"final": events[-1]["response"], "events": events}


# --- anything else: a plain httpx2 request --------------------------------------------------


def _events(body: Iterator[bytes]) -> list[tuple[str | None, str, str | None, int | None]]:
    """SSE events as the openai SDK's decoder reads them (independent of ours)."""
    return [(e.event, e.data, e.id, e.retry) for e in SSEDecoder().iter_bytes(body)]


def _raw(item: CorpusInteraction, url: str, http_client: httpx2.Client | None) -> Result:
    client = http_client if http_client is not None else httpx2.Client()
    body = item.request_body
    content = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    with client.stream(
        item.method, url, content=content, headers={"accept": "text/event-stream"}
    ) as response:
        result: Result = {
            "status": response.status_code,
            "content-type": response.headers.get("content-type"),
        }
        if item.is_sse:
            result["events"] = _events(response.iter_bytes())
            return result
        data = response.read()
    try:
        result["json"] = json.loads(data) if data else None
    except ValueError:
        result["bytes"] = data
    return result
