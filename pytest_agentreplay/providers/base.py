"""What every provider codec offers, and the small helpers they share.

A codec is pure: it turns a neutral :class:`~..neutral.Reply` into
the provider's JSON body or SSE event list, folds an event list back into the
final JSON, renders the provider's error responses, and parses requests. No I/O,
no clocks, no randomness: everything variable (ids, timestamps, how text is cut
into deltas) comes from the :class:`RenderContext`, so the same context renders
the same bytes every time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from .. import jsonparse
from ..errors import CodecError
from ..sse import LineEnd, SSEEncoder, SSEEvent, event_bytes
from .catalog import CATALOG

if TYPE_CHECKING:  # the reply model (pydantic) is loaded by the codecs, not by replay
    from ..neutral import Fault, Provider, Reply, Request, Usage

__all__ = [
    "EAGER_TEXT",
    "ERROR_EVENT_STATUS",
    "CheckedRequest",
    "Codec",
    "ErrorResponse",
    "Folded",
    "IdFactory",
    "RenderContext",
    "RequestFacts",
    "digits",
    "estimate_tokens",
    "iter_text",
    "json_data",
    "split_json",
    "split_text",
    "wire_writer",
]

ERROR_EVENT_STATUS: dict[str, int] = {
    "overloaded_error": 529,
    "api_error": 500,
    "rate_limit_error": 429,
    "server_error": 500,
    "rate_limit_exceeded": 429,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "timeout_error": 504,
}
"""The HTTP status a provider answers with, for an error type its streams send as an
in-stream error event, when the call is not streamed (500 for any other type)."""

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_WORDS = re.compile(r"\s*\S+|\s+")


class IdFactory:
    """Deterministic, realistic-looking ids: ``new("msg_01", 22)`` → ``msg_01Xk3...``.

    Ids derive from a seed and a counter, so two runs of the same script give the
    same ids (stable snapshots) while two fakes with different seeds do not collide.
    """

    def __init__(self, seed: str = "agentreplay") -> None:
        self.seed = seed
        self._count = 0

    def new(self, prefix: str, length: int = 24, alphabet: str = _B62) -> str:
        """The next id: ``prefix`` followed by ``length`` characters of ``alphabet``."""
        self._count += 1
        return prefix + _id_chars(self.seed, self._count, length, alphabet)

    def hex(self, prefix: str, length: int = 32) -> str:
        """The next id made of lowercase hex digits (OpenAI response item ids)."""
        return self.new(prefix, length, "0123456789abcdef")


@functools.lru_cache(maxsize=4096)
def _id_chars(seed: str, count: int, length: int, alphabet: str) -> str:
    """The ``length`` characters of id number ``count`` of ``seed``: the digits of a
    SHA-512 digest (:func:`digits`). Remembered: every fake a test suite builds draws
    the same first ids of the default seed, so most calls are hits (bench/ W5: the
    ids were a tenth of a fake call's cost)."""
    digest = hashlib.sha512(f"{seed}:{count}".encode()).digest()
    return digits(int.from_bytes(digest, "big"), length, alphabet)


def digits(n: int, length: int, alphabet: str = _B62) -> str:
    """The ``length`` lowest digits of ``n`` in base ``len(alphabet)``, least
    significant first: how ids and padding are spelled from a hash. Two digits a
    step, from a table of digit pairs."""
    base = len(alphabet)
    n %= base**length
    pairs = _digit_pairs(alphabet)
    chars = []
    for _ in range((length + 1) // 2):
        n, r = divmod(n, base * base)
        chars.append(pairs[r])
    return "".join(chars)[:length]


@functools.lru_cache(maxsize=8)
def _digit_pairs(alphabet: str) -> list[str]:
    """Every two-digit number in base ``len(alphabet)``, least significant digit first."""
    base = len(alphabet)
    return [alphabet[i % base] + alphabet[i // base] for i in range(base * base)]


EAGER_TEXT = 4096
"""Up to this many characters, :func:`iter_text` cuts a text at once (in one C call,
when no word needs cutting further)."""


def iter_text(text: str, max_chunk: int = 12) -> Iterator[str]:
    """Cut text into delta-sized pieces the way providers do: roughly a word each,
    whitespace kept with the word that follows, long words cut at ``max_chunk``.

    Lazy for a long text, so a stream's first delta does not wait for the whole text
    to be cut; a short one (a reply's usual text) is cut at once by the regex engine
    when no word needs cutting further, not one generator step a word (bench/ W5).
    """
    if len(text) <= EAGER_TEXT:
        words = _WORDS.findall(text)
        if not words or max(map(len, words)) <= max_chunk:
            return iter(words)
    return _iter_pieces(text, max_chunk)


def _iter_pieces(text: str, max_chunk: int) -> Iterator[str]:
    """:func:`iter_text`, a word at a time."""
    for match in _WORDS.finditer(text):
        word = match.group()
        if len(word) <= max_chunk:  # the usual word: one piece
            yield word
            continue
        for i in range(0, len(word), max_chunk):
            yield word[i : i + max_chunk]


def split_text(text: str, max_chunk: int = 12) -> list[str]:
    """:func:`iter_text` as a list: ``"".join(split_text(t)) == t``; ``""`` gives ``[]``."""
    return list(iter_text(text, max_chunk))


_JSON_STEPS = (1, 5, 9, 3, 14, 7, 11, 4)


def split_json(text: str) -> list[str]:
    """Cut a JSON argument string into uneven fragments, as providers stream tool
    arguments (fragments break inside keys, strings and numbers).

    ``"".join(split_json(t)) == t``; an empty string gives ``[]``.
    """
    pieces: list[str] = []
    i = step = 0
    while i < len(text):
        size = _JSON_STEPS[step % len(_JSON_STEPS)]
        pieces.append(text[i : i + size])
        i += size
        step += 1
    return pieces


def estimate_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: about four characters a token."""
    return max(1, (len(text) + 3) // 4)


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(payload, separators=(",", ":"), ensure_ascii=False)``, built once.

    ``json.dumps`` with arguments builds a new encoder on every call, about as much
    work as encoding a small event: a fake's stream encodes one per event (bench/ W5).
    The C encoder is made once, as ``JSONEncoder.iterencode`` makes it. It keeps the
    containers it is inside in ``markers`` (what finds a cycle) and takes each out on
    the way back; a failed encode can leave some in, so they are cleared then."""
    encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return encoder.encode
    markers: dict[int, Any] = {}
    iterencode = make(
        markers, encoder.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )

    def encode(payload: Any) -> str:
        if isinstance(payload, str):  # a bare string: what JSONEncoder.encode does
            return encoder.encode(payload)
        try:
            return "".join(iterencode(payload, 0))
        except BaseException:
            markers.clear()
            raise

    return encode


_encode_compact = _compact_encoder()


def json_data(payload: Any) -> str:
    """Compact JSON for SSE ``data`` and bodies, as providers send it (no spaces,
    non-ASCII kept as UTF-8)."""
    return _encode_compact(payload)


def wire_writer(line_end: LineEnd) -> Callable[..., bytes]:
    """``write(data, name=None)``: the bytes of an event of data and a name only, lines
    ended with ``line_end`` (:func:`~..sse.event_bytes`, called directly: a codec's
    ``iter_wire`` makes each event with it, as its ``iter_events`` makes each with
    ``SSEEvent(data, name)``)."""
    return event_bytes if line_end == "\n" else functools.partial(event_bytes, line_end=line_end)


def _encoded(events: Iterator[SSEEvent], line_end: LineEnd) -> Iterator[bytes]:
    """``events`` as :class:`~..sse.SSEEncoder` writes them, the usual event (no id or
    retry) in one step (:func:`~..sse.event_bytes`); from the first id on, the encoder
    writes every event, as it tracks the last id."""
    encoder = SSEEncoder(line_end=line_end)
    ids = False
    for event in events:
        ids = ids or bool(event.id)
        if ids or event.retry is not None:
            yield encoder.encode(event)
        else:
            yield event_bytes(event.data, event.event, line_end)


class RequestFacts(Protocol):
    """What answering a request reads of it: which format it was in, the model it asked
    for, whether to stream, the body. A :class:`~..neutral.Request` has them, and so has
    a :class:`CheckedRequest`."""

    @property
    def provider(self) -> Provider: ...
    @property
    def model(self) -> str | None: ...
    @property
    def stream(self) -> bool: ...
    @property
    def raw(self) -> Mapping[str, Any]: ...


class CheckedRequest(NamedTuple):
    """A request body checked as :meth:`Codec.parse_call` checks it, without building
    the neutral models: what a fake answers a call from (:meth:`Codec.check_call`).
    ``raw`` is the body itself, not a copy: read it while answering, keep nothing of it."""

    provider: Provider
    model: str | None
    stream: bool
    raw: Mapping[str, Any]


@dataclass
class RenderContext:
    """Everything variable a codec needs to render one reply.

    ``model`` is echoed in bodies when the reply does not name one; ``request``
    (when known) lets a codec honour request options (``stream_options``,
    tools, ...) and estimate input tokens; ``created`` is the Unix timestamp put
    in OpenAI bodies.
    """

    model: str = "fake-model"
    request: RequestFacts | None = None
    ids: IdFactory = field(default_factory=IdFactory)
    created: int = 1_767_225_600  # 2026-01-01T00:00:00Z: fixed so renders are reproducible
    text_chunk: int = 12

    def model_for(self, reply: Reply) -> str:
        """The model name to put in the body: the reply's, else the request's, else ours."""
        if reply.model:
            return reply.model
        if self.request is not None and self.request.model:
            return self.request.model
        return self.model

    def usage_for(self, reply: Reply) -> Usage:
        """The reply's usage, or a deterministic estimate from request and reply sizes."""
        if reply.usage is not None:
            return reply.usage
        raw = ""
        if self.request is not None:  # the conversation only: streaming costs no tokens
            raw = json_data(
                {k: v for k, v in self.request.raw.items() if k not in ("stream", "stream_options")}
            )
        out = "".join(
            getattr(p, "text", "") or json_data(getattr(p, "args", {})) for p in reply.parts
        )
        from ..neutral import Usage  # noqa: PLC0415 - see the imports

        return Usage(input_tokens=estimate_tokens(raw), output_tokens=estimate_tokens(out))


def _offered(tool: str | None) -> str:
    """`` (anthropic and openai_responses can)``: the built-in codecs that can send a
    server tool (``tool``) or citations (``None``), as their catalog entries say."""
    able = [f.name for f in CATALOG.values() if (tool in f.server_tools if tool else f.citations)]
    return f" (only {' and '.join(able)} can)" if able else ""


@dataclass(frozen=True)
class ErrorResponse:
    """An HTTP error response exactly as the provider would send it."""

    status: int
    headers: dict[str, str]
    body: dict[str, Any]

    def content(self) -> bytes:
        """The body bytes."""
        return json_data(self.body).encode("utf-8")


@dataclass
class Folded:
    """The result of folding a stream.

    ``body`` is the final JSON the provider would have returned without streaming
    (as far as the stream got); ``complete`` is whether the stream reached its
    terminal event; ``error`` is an in-stream error payload, if one arrived;
    ``unknown`` lists the indexes of well-formed events of types this codec does
    not know (kept in the stream, not folded into ``body``). A terminal failure
    (OpenAI ``response.failed``) gives ``complete=True`` with ``error`` set.
    """

    body: dict[str, Any]
    complete: bool
    error: dict[str, Any] | None = None
    unknown: list[int] = field(default_factory=list)


class Codec(ABC):
    """One provider's wire format. Subclasses are stateless singletons.

    What a codec can render beyond text, tool calls and thinking is declared, not
    assumed: :attr:`server_tools` and :attr:`citations`. A codec that declares
    nothing (every codec added later, until it does) refuses a reply holding such
    a part with a clear error (:meth:`check_renders`) instead of dropping it.
    """

    provider: ClassVar[Provider]
    event_error_type: ClassVar[str] = "server_error"
    """The error type of an in-stream error event whose fault names none."""
    stream_content_type: ClassVar[str] = "text/event-stream; charset=utf-8"
    json_content_type: ClassVar[str] = "application/json"
    sse_line_end: ClassVar[LineEnd] = "\n"
    """How the provider ends the lines of its streams (Google: CRLF; a client that
    splits events on ``\r\n\r\n`` only would see one endless event otherwise)."""
    server_tools: ClassVar[frozenset[str]] = frozenset()
    """The provider-side tools (``ServerToolCall.name``) this format renders."""
    citations: ClassVar[bool] = False
    """Whether this format renders the citations of text parts."""
    request_id_header: ClassVar[str] = "x-request-id"
    """The response header that carries the provider's request id."""

    @abstractmethod
    def handles(self, method: str, path: str) -> bool:
        """Whether a request to ``path`` is a model call in this format."""

    @abstractmethod
    def parse_request(self, body: Mapping[str, Any]) -> Request:
        """A request body in neutral form; raises :class:`CodecError` naming the field."""

    def parse_call(self, method: str, target: str, body: Mapping[str, Any]) -> Request:
        """A request in neutral form, knowing where it was sent: ``target`` is the path
        with its query (``/v1beta/models/gemini-3.5-flash-lite:streamGenerateContent?alt=sse``).

        Most providers say everything in the body (:meth:`parse_request`); Gemini puts
        the model and whether to stream in the path, so its codec overrides this.
        Callers that know the path use this one."""
        return self.parse_request(body)

    def check_call(self, method: str, target: str, body: Mapping[str, Any]) -> RequestFacts:
        """:meth:`parse_call`'s checks of a request (the same error for the same body)
        and what answering it reads (:class:`RequestFacts`), where a codec can check a
        body without building the neutral models (a fake answers every call so, and
        builds its :class:`~..neutral.Request` when something reads it); the parsed
        request otherwise."""
        return self.parse_call(method, target, body)

    @abstractmethod
    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The non-streaming JSON response body for ``reply``."""

    def body_wire(self, reply: Reply, ctx: RenderContext) -> bytes:
        """:meth:`render_body` as the bytes of the body (compact JSON, UTF-8): what a
        fake sends. A codec may write the bytes without building the body's objects. A
        reply the format cannot send is refused at once (:meth:`check_renders`)."""
        self.check_renders(reply)
        return json_data(self.render_body(reply, ctx)).encode("utf-8")

    @abstractmethod
    def render_events(self, reply: Reply, ctx: RenderContext) -> list[SSEEvent]:
        """The exact SSE event sequence the provider streams for ``reply``."""

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """:meth:`render_events` as an iterator; codecs render lazily where they can,
        so the time to the first event does not grow with the reply."""
        return iter(self.render_events(reply, ctx))

    def iter_wire(self, reply: Reply, ctx: RenderContext) -> Iterator[bytes]:
        """:meth:`iter_events` as the bytes of the stream, event by event (lines ended
        with :attr:`sse_line_end`): what a fake sends when no fault or added field
        changes the events. A codec may write the bytes without building the events."""
        return _encoded(self.iter_events(reply, ctx), self.sse_line_end)

    @abstractmethod
    def fold_detailed(self, events: Sequence[SSEEvent], *, strict: bool = False) -> Folded:
        """Accumulate a stream into the final JSON, as the SDK's accumulator does.

        Raises :class:`CodecError` naming the event number and field for malformed
        events (non-JSON data, a delta for a block that is not open, ...); with
        ``strict``, unknown event types are errors too instead of being kept.
        """

    @abstractmethod
    def to_reply(self, body: Mapping[str, Any]) -> Reply:
        """A final JSON body back to a neutral :class:`Reply`."""

    def compose_request(self, request: Request, *, max_tokens: int | None = None) -> dict[str, Any]:
        """The request body this provider's SDK sends for the neutral ``request``: the
        inverse of :meth:`parse_request`, for requests written from what is known of
        them (a production trace imported as a cassette). A codec that cannot write one
        says so."""
        raise NotImplementedError(f"the {self.provider} codec cannot compose a request body")

    def count_tokens(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The answer to the provider's token-counting call for ``body``
        (:func:`~.routes.token_count` finds the endpoint), or ``None`` when a fake
        does not answer it. Counting is not a model call: no reply is rendered."""
        return None

    @abstractmethod
    def error_response(self, fault: Fault, ctx: RenderContext) -> ErrorResponse:
        """The provider's HTTP error for ``Fault.http(...)``: status, headers, body."""

    @abstractmethod
    def error_event(self, fault: Fault, ctx: RenderContext) -> SSEEvent:
        """The provider's in-stream error event for ``Fault.error_event(...)``."""

    def as_http_error(self, fault: Fault) -> Fault:
        """``Fault.error_event(...)`` on a call that is not streamed: the provider
        answers with the same error as an HTTP error instead (its type, its message,
        its headers, the status :data:`ERROR_EVENT_STATUS` gives the type)."""
        error_type = fault.error_type or self.event_error_type
        status = ERROR_EVENT_STATUS.get(error_type, 500)
        return fault.model_copy(
            update={
                "kind": "http",
                "status": status,
                "error_type": error_type,
                "after_events": None,
            }
        )

    def check_renders(self, reply: Reply) -> None:
        """Refuse ``reply`` when it holds a part this format cannot send.

        Raises :class:`CodecError` naming the part (``parts[i]``), what it is, the
        providers that can send it and what to do; silently dropping the part would
        let a test pass against a reply the agent never saw."""
        part: Any  # read by kind: a server tool call's name, a text's citations
        for i, part in enumerate(reply.parts):
            kind = getattr(part, "kind", None)  # the two kinds a format may not send
            if kind == "server_tool_call" and part.name not in self.server_tools:
                problem = (
                    f"cannot send a provider-side {part.name!r} call in this wire format"
                    f"{_offered(part.name)}; serve this reply only to an agent whose "
                    "provider has the tool, or script a reply without it for this call"
                )
            elif kind == "text" and part.citations and not self.citations:
                problem = (
                    f"cannot send the citations of a text part in this wire format"
                    f"{_offered(None)}; script the text without citations for this call"
                )
            else:
                continue
            raise self.error(problem, field=f"parts[{i}]")

    def fold(self, events: Sequence[SSEEvent]) -> dict[str, Any]:
        """The final JSON body of a stream (see :meth:`fold_detailed`)."""
        return self.fold_detailed(events).body

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Headers of a successful response (content type, request id)."""
        ctype = self.stream_content_type if streaming else self.json_content_type
        return {"content-type": ctype}

    def error(
        self, message: str, *, event_index: int | None = None, field: str | None = None
    ) -> CodecError:
        """A :class:`CodecError` attributed to this provider."""
        return CodecError(message, provider=self.provider, event_index=event_index, field=field)

    def event_json(self, events: Sequence[SSEEvent], index: int) -> Any:
        """``events[index].data`` as JSON, or a :class:`CodecError` naming the event."""
        try:
            return jsonparse.loads(events[index].data)
        except json.JSONDecodeError as exc:
            raise self.error(
                f"data is not JSON ({exc.msg} at char {exc.pos}): {events[index].data[:60]!r}",
                event_index=index,
                field="data",
            ) from None
        except ValueError as exc:  # nests too deeply (issue 27)
            raise self.error(f"data is not JSON: {exc}", event_index=index, field="data") from None
