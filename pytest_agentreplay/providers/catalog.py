"""What the plugin knows about each provider, as data: one :class:`ProviderFacts` entry
per wire format, in :data:`CATALOG`.

Where a provider lives (its origin, the paths of its model calls and how to recognise
them), the smallest request it accepts, what in its bodies is noise to matching, how a
bare stream of it starts, what its streams need (event names, a terminator), how its
SDK is pointed at another server, and what its codec can render beyond text and tool
calls. Cassettes (building, matching, raw SSE files), fakes (the hosts they serve),
run logs (a URL that says "stream"), the ``agentreplay`` command (``serve``'s
upstreams, ``lint``) and the transport (a served fake's environment) read these facts
here instead of keeping copies; :mod:`.routes` and :mod:`.formats` are built on them.

Pure data and small pure functions, one section per provider: no codec and no
pydantic model is imported, so replaying a recording reads the catalog for free. The
codec itself is named (module and class) and imported by
:func:`~pytest_agentreplay.providers.codec_for` on first use. Adding a provider is a
folder beside ``anthropic/`` and a section here (see docs/architecture.md, "Adding a
provider").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:  # the provider names are the model's (pydantic): the catalog loads none
    from ..neutral import Provider

__all__ = [
    "BODY_NOISE",
    "CATALOG",
    "DEFAULT_HOSTS",
    "FALLBACK",
    "PLACEHOLDER_KEY",
    "ProviderFacts",
    "base_url_env",
    "client_env",
    "facts",
    "final_event",
    "gemini_method",
    "stream_guess",
    "unstreamed_url",
]

PLACEHOLDER_KEY = "agentreplay-placeholder-key"
"""The API key a served fake hands its clients: a child never sends a real one."""

Body = Callable[[str, bool], dict[str, Any]]
"""``body(model, stream)``: the smallest request body asking ``model`` "Hi"."""
Route = Callable[[str, str], bool]
"""``route(method, path)``: whether ``method path`` is that kind of call."""


@dataclass(frozen=True)
class ProviderFacts:
    """What the plugin knows about one provider's wire format (see the module docs)."""

    name: Provider
    title: str
    """The format's name for people: ``"Anthropic Messages"``."""
    endpoint: str
    """The endpoint that selects the format, for messages: ``"POST …/v1/messages"``."""
    codec: tuple[str, str]
    """Where the codec lives: (module relative to the providers package, class)."""
    handles: Route
    """Whether ``method path`` is a model call in this format (under any prefix)."""
    origin: str
    """Scheme and host of the provider's own API: ``https://api.anthropic.com``."""
    path: str
    """The path of a model call (``{model}`` filled in where the model is in the path)."""
    minimal_body: Body
    stream_path: str | None = None
    """The path of a streamed call, where streaming is said in the path, not the body."""
    unstream: Callable[[str], str] | None = None
    """A URL as the same call unstreamed is sent, where streaming is in the URL."""
    counts_tokens: Route | None = None
    """The token-counting endpoint a fake answers from the request alone, if any."""
    body_noise: tuple[str, ...] = ()
    """JSON paths dropped from a request body before matching: fields that vary between
    runs or SDK versions without changing the model's answer."""
    stream_marker: str | None = None
    """Text the first events of a bare stream of this format hold (``message_start``):
    how a raw SSE file is told apart. ``None``: not guessed."""
    named_events: str | None = None
    """Why this format's events need their ``event:`` names (``None``: they need none)."""
    terminator: str | None = None
    """The data of the event a stream always ends with (``[DONE]``), if it has one."""
    final_event: Callable[[str | None, str], bool] | None = None
    """``final_event(name, data)``: whether an event is one after which the stream has
    nothing more to say (Anthropic's ``message_delta`` and ``message_stop``). A client
    that hangs up after it has read the whole answer: recorded as complete, not cut."""
    base_url_env: tuple[str, str] | None = None
    """The variable its SDK reads a base URL from, and what follows the server's URL."""
    key_env: tuple[str, ...] = ()
    """The variables its SDK reads an API key from, first the one it prefers."""
    blank_env: tuple[str, ...] = ()
    """Key variables emptied for a child, so that a real key in them is never sent."""
    server_tools: frozenset[str] = frozenset()
    """The provider-side tools (``ServerToolCall.name``) its codec renders."""
    citations: bool = False
    """Whether its codec renders the citations of text parts."""

    @property
    def host(self) -> str:
        """The host of :attr:`origin`: ``api.anthropic.com``."""
        return urlsplit(self.origin).hostname or ""

    def url(self, model: str, *, stream: bool) -> str:
        """The URL of a model call to ``model`` (streamed or not)."""
        path = self.stream_path if stream and self.stream_path is not None else self.path
        return self.origin + path.format(model=model)


def _hi() -> list[dict[str, str]]:
    return [{"role": "user", "content": "Hi"}]


def _segments(path: str) -> list[str]:
    """The non-empty segments of a path, without its query or fragment."""
    return [s for s in path.split("?", 1)[0].split("#", 1)[0].split("/") if s]


# -- Anthropic Messages ----------------------------------------------------------------


def _anthropic_call(method: str, path: str) -> bool:
    """``POST .../v1/messages`` under any prefix (proxies, gateways); not
    ``/v1/messages/count_tokens`` or ``/v1/messages/batches...``."""
    if method.upper() != "POST":
        return False
    path = path.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return path == "/v1/messages" or path.endswith("/v1/messages")


def _anthropic_final(name: str | None, data: str) -> bool:
    """``message_delta`` (stop reason and usage: litellm stops reading there) and
    ``message_stop``."""
    return name in ("message_delta", "message_stop")


def _anthropic_body(model: str, stream: bool) -> dict[str, Any]:
    return {"model": model, "max_tokens": 1024, "messages": _hi(), "stream": stream}


_ANTHROPIC = ProviderFacts(
    name="anthropic",
    title="Anthropic Messages",
    endpoint="POST …/v1/messages",
    codec=(".anthropic", "AnthropicCodec"),
    handles=_anthropic_call,
    origin="https://api.anthropic.com",
    path="/v1/messages",
    minimal_body=_anthropic_body,
    # Anthropic's opaque end-user id (Claude Code puts a per-session uuid there).
    body_noise=("metadata.user_id",),
    stream_marker="message_start",
    final_event=_anthropic_final,
    named_events="the Anthropic SDK skips events without a name, so the stream reads as empty",
    base_url_env=("ANTHROPIC_BASE_URL", ""),
    key_env=("ANTHROPIC_API_KEY",),
    server_tools=frozenset({"web_search", "code_execution"}),
    citations=True,
)

# -- OpenAI (both formats) -------------------------------------------------------------

_OPENAI: dict[str, Any] = {
    "origin": "https://api.openai.com",
    "base_url_env": ("OPENAI_BASE_URL", "/v1"),
    "key_env": ("OPENAI_API_KEY",),
    # include_usage / include_obfuscation change only bookkeeping chunks of a stream.
    "body_noise": ("stream_options",),
    "citations": True,
}

# -- OpenAI Chat Completions -----------------------------------------------------------


def _chat_call(method: str, path: str) -> bool:
    """``POST`` to any path ending in ``/chat/completions`` (prefixes allowed);
    not the stored-completion endpoints ``/chat/completions/{id}[/messages]``."""
    segments = path.rstrip("/").split("/")
    return method.upper() == "POST" and segments[-2:] == ["chat", "completions"]


def _chat_final(name: str | None, data: str) -> bool:
    return data.strip() == "[DONE]"


def _chat_body(model: str, stream: bool) -> dict[str, Any]:
    return {"model": model, "messages": _hi(), "stream": stream}


_OPENAI_CHAT = ProviderFacts(
    name="openai_chat",
    title="OpenAI Chat Completions",
    endpoint="POST …/chat/completions",
    codec=(".openai.chat", "OpenAIChatCodec"),
    handles=_chat_call,
    path="/v1/chat/completions",
    minimal_body=_chat_body,
    stream_marker="chat.completion.chunk",
    terminator="[DONE]",
    final_event=_chat_final,
    **_OPENAI,
)

# -- OpenAI Responses ------------------------------------------------------------------

_NOT_RESPONSE_CALLS = frozenset({"input_tokens", "compact", "cancel", "input_items"})


def _responses_call(method: str, path: str) -> bool:
    """``POST .../responses`` (create) and ``GET .../responses/{id}`` (retrieve,
    which streams a background response when the query says ``stream=true``).

    Refuses ``/responses/input_tokens``, ``/responses/compact``,
    ``/responses/{id}/cancel``, ``/responses/{id}/input_items`` and DELETE.
    """
    segments = [s for s in path.split("?", 1)[0].split("/") if s]
    verb = method.upper()
    if verb == "POST":
        return bool(segments) and segments[-1] == "responses"
    if verb == "GET":
        return (
            len(segments) >= 2
            and segments[-2] == "responses"
            and segments[-1] not in _NOT_RESPONSE_CALLS
        )
    return False


_RESPONSES_FINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})


def _responses_final(name: str | None, data: str) -> bool:
    """The event that ends a response: completed, incomplete or failed."""
    return name in _RESPONSES_FINAL


def _responses_body(model: str, stream: bool) -> dict[str, Any]:
    return {"model": model, "input": "Hi", "stream": stream}


_OPENAI_RESPONSES = ProviderFacts(
    name="openai_responses",
    title="OpenAI Responses",
    endpoint="POST …/responses",
    codec=(".openai.responses", "OpenAIResponsesCodec"),
    handles=_responses_call,
    path="/v1/responses",
    minimal_body=_responses_body,
    stream_marker="response.",
    final_event=_responses_final,
    named_events="OpenAI's Responses API names every event after its data 'type' "
    "(this stream was trimmed, or comes from a compatible server)",
    server_tools=frozenset({"web_search"}),
    **_OPENAI,
)

# -- Gemini ----------------------------------------------------------------------------

# The collections a Gemini model lives in: ``models/`` (Gemini API, Vertex publisher
# models), ``tunedModels/`` (Gemini API tuned models), ``endpoints/`` (Vertex deployments).
_GEMINI_COLLECTIONS = frozenset({"models", "tunedModels", "endpoints"})
_GEMINI_CALLS = frozenset({"generateContent", "streamGenerateContent"})
# Gemini says "stream" in the URL, not the body: ``:streamGenerateContent?alt=sse``
# against ``:generateContent`` made every Gemini parity check fail on the URL.
_GEMINI_STREAM = re.compile(r"(:|%3A)streamGenerateContent(\?alt=sse$|\?alt=sse&|(?=\?)|$)")


def gemini_method(path: str) -> tuple[str, str] | None:
    """``(model, method)`` of a Gemini path, ``.../models/{model}:{method}``, or ``None``.

    Any prefix is allowed (``/v1beta``, ``/v1``, Vertex's
    ``/v1/projects/{p}/locations/{l}/publishers/google``, a gateway's); the colon may
    arrive percent-encoded (``%3A``), as some HTTP clients send it."""
    segments = _segments(path)
    if len(segments) < 2 or segments[-2] not in _GEMINI_COLLECTIONS:
        return None
    model, colon, method = unquote(segments[-1]).rpartition(":")
    if not colon or not model or not method:
        return None
    return model, method


def _gemini_call(method: str, path: str) -> bool:
    """``POST .../models/{model}:generateContent`` and ``:streamGenerateContent``;
    not ``:countTokens``, ``:embedContent`` or the rest."""
    found = gemini_method(path)
    return method.upper() == "POST" and found is not None and found[1] in _GEMINI_CALLS


def _gemini_count(method: str, path: str) -> bool:
    """``POST .../models/{model}:countTokens``, which pydantic-ai calls before a request
    to enforce usage limits."""
    found = gemini_method(path)
    return method.upper() == "POST" and found is not None and found[1] == "countTokens"


def _gemini_unstream(url: str) -> str:
    return _GEMINI_STREAM.sub(
        lambda m: m.group(1) + "generateContent" + ("?" if m.group(2).endswith("&") else ""), url
    )


def _gemini_final(name: str | None, data: str) -> bool:
    """The chunk that says why the candidate finished (Gemini has no end event)."""
    return '"finishReason"' in data


def _gemini_body(model: str, stream: bool) -> dict[str, Any]:
    """The model and the stream flag are in Gemini's path, not its body."""
    return {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


_GEMINI = ProviderFacts(
    name="gemini",
    title="Gemini",
    endpoint="POST …/models/{model}:generateContent or :streamGenerateContent?alt=sse",
    codec=(".gemini", "GeminiCodec"),
    handles=_gemini_call,
    origin="https://generativelanguage.googleapis.com",
    path="/v1beta/models/{model}:generateContent",
    stream_path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
    unstream=_gemini_unstream,
    counts_tokens=_gemini_count,
    minimal_body=_gemini_body,
    final_event=_gemini_final,
    base_url_env=("GOOGLE_GEMINI_BASE_URL", ""),
    # google-genai reads GOOGLE_API_KEY before GEMINI_API_KEY (and warns when both are
    # set): the placeholder goes in the first, a real one in the second is blanked.
    key_env=("GOOGLE_API_KEY",),
    blank_env=("GEMINI_API_KEY",),
)

# -- the catalog -----------------------------------------------------------------------

_ENTRIES = (_ANTHROPIC, _OPENAI_CHAT, _OPENAI_RESPONSES, _GEMINI)

CATALOG: Mapping[Provider, ProviderFacts] = MappingProxyType({e.name: e for e in _ENTRIES})
"""Every provider the plugin speaks, in the order of :data:`~..neutral.PROVIDERS`."""

FALLBACK: Provider = "openai_chat"
"""The format of a path no provider claims, where one must be picked (its errors
answer the call): most compatible servers speak OpenAI Chat Completions."""

DEFAULT_HOSTS: tuple[str, ...] = tuple(dict.fromkeys(e.host for e in _ENTRIES))
"""The providers' own hosts, each once: what a fake model intercepts by default."""

BODY_NOISE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {e.name: e.body_noise for e in _ENTRIES if e.body_noise}
)
"""Each provider's :attr:`ProviderFacts.body_noise`, for the ones that have any."""


def facts(provider: Provider) -> ProviderFacts:
    """The entry of ``provider``; raises ``KeyError`` listing the known ones."""
    try:
        return CATALOG[provider]
    except KeyError:
        known = ", ".join(CATALOG)
        raise KeyError(f"unknown provider {provider!r}; known: {known}") from None


def final_event(provider: str, name: str | None, data: str) -> bool:
    """Whether an event of ``provider``'s stream ends what it has to say (see
    :attr:`ProviderFacts.final_event`); ``False`` for a provider with no such event."""
    entry = CATALOG.get(provider)  # type: ignore[call-overload]
    return entry is not None and entry.final_event is not None and entry.final_event(name, data)


def stream_guess(sample: str) -> ProviderFacts | None:
    """The provider whose :attr:`~ProviderFacts.stream_marker` ``sample`` (the first
    events of a bare stream, as text) holds, if any."""
    return next((e for e in _ENTRIES if e.stream_marker and e.stream_marker in sample), None)


def unstreamed_url(url: str) -> str:
    """``url`` as the non-streaming call of the same model would be sent (it differs
    only where a provider says "stream" in the URL)."""
    for entry in _ENTRIES:
        if entry.unstream is not None:
            url = entry.unstream(url)
    return url


def _base_url(entry: ProviderFacts, url: str) -> dict[str, str]:
    if entry.base_url_env is None:
        return {}
    name, suffix = entry.base_url_env
    return {name: url + suffix}


def base_url_env(url: str) -> dict[str, str]:
    """The base-URL variable of each SDK, pointing at a server on ``url``."""
    out: dict[str, str] = {}
    for entry in _ENTRIES:
        out.update(_base_url(entry, url))
    return out


def client_env(url: str) -> dict[str, str]:
    """Variables pointing every SDK at a server on ``url``, with placeholder keys."""
    out: dict[str, str] = {}
    for entry in _ENTRIES:
        out.update(_base_url(entry, url))
        out.update(dict.fromkeys(entry.key_env, PLACEHOLDER_KEY))
        out.update(dict.fromkeys(entry.blank_env, ""))
    return out
