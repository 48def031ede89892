"""Key parts: what of a request each built-in matcher compares, and the body as matched.

A key part is a small hashable value computed from a
:class:`~.cassette.RecordedRequest`. Two requests match when every part
named in ``match_on`` is equal, so each part normalizes away the differences that
do not change what the server answers: host case, default ports, query order,
JSON key order, whitespace, ``1.0`` vs ``1``, and per-provider body noise
(:data:`BODY_NOISE`), and in a JSON-RPC message (MCP) its id, ``_meta`` and the
client's name and version (:func:`~..mcp.jsonrpc.match_view`). Bodies enter keys as
16-byte digests, so an index over a cassette whose requests carry long conversations
stays small.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, parse_qsl, urlsplit

from ..mcp import jsonrpc
from ..providers import detect
from ..providers.catalog import BODY_NOISE
from .conversation import conversation, conversation_key
from .multipart import multipart_parts

if TYPE_CHECKING:
    from .cassette import RecordedRequest

__all__ = [
    "BODY_NOISE",
    "BUILTIN_PARTS",
    "VOLATILE_HEADERS",
    "BodyMatcher",
    "Matcher",
    "Part",
    "body_digest",
    "body_with",
    "body_without",
    "canonical_text",
    "header",
    "normalize_body",
    "parse_json_path",
]

Matcher = Callable[["RecordedRequest"], Hashable]
"""A custom key part: any function of the request returning a hashable value."""

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

VOLATILE_HEADERS = frozenset(
    {
        "accept-encoding",
        "connection",
        "content-length",
        "date",
        "host",
        "idempotency-key",
        "mcp-session-id",
        "request-id",
        "traceparent",
        "tracestate",
        "user-agent",
        "x-request-id",
    }
)
"""Request headers the ``headers`` matcher ignores (as well as every ``x-stainless-*``)."""

_SEGMENT = re.compile(r"(?:^|\.)([^.\[\]]+)|\[(\*|\d+)\]")


def _split(request: RecordedRequest) -> SplitResult:
    """The URL's parts; a URL ``urlsplit`` refuses (bad IPv6 brackets) is all path."""
    try:
        return urlsplit(request.url)
    except ValueError:
        return SplitResult("", "", request.url, "", "")


def _method(request: RecordedRequest) -> Hashable:
    return request.method.upper()


def _scheme(request: RecordedRequest) -> Hashable:
    return _split(request).scheme.lower()


def _host(request: RecordedRequest) -> Hashable:
    """The host name, lower-cased, without port or trailing dot: a local test server
    listening on a fresh port each run still matches its recording."""
    return _host_of(request.url)


@functools.lru_cache(maxsize=1024)
def _host_of(url: str) -> str:
    """:func:`_host` of a URL, worked out once per URL: a cassette's requests, and the
    live ones, go to a few (issue 29: parsing it again was a tenth of the index)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""  # all path: no host, as _split has it
    return (parts.hostname or "").rstrip(".")


def _port(request: RecordedRequest) -> Hashable:
    """The port, with the scheme's default filled in (``:443`` equals no port)."""
    parts = _split(request)
    try:
        port = parts.port
    except ValueError:
        return parts.netloc.rpartition(":")[2]
    return port if port is not None else DEFAULT_PORTS.get(parts.scheme.lower())


def _path(request: RecordedRequest) -> Hashable:
    """The path as sent; a trailing slash is significant (``/v1/messages/`` is another
    route to the providers), an empty path is ``/``."""
    return _split(request).path or "/"


def _query(request: RecordedRequest) -> Hashable:
    """The query parameters, order-insensitive, blank values kept."""
    return tuple(sorted(parse_qsl(_split(request).query, keep_blank_values=True)))


def _query_text(request: RecordedRequest) -> str:
    """The query as a miss report shows it: sorted ``name=value`` pairs."""
    return "&".join(f"{k}={v}" for k, v in _query(request))  # type: ignore[attr-defined]


def _uri_text(request: RecordedRequest) -> str:
    """The URL as matched by ``uri``: normalized host, port and query order."""
    scheme, host, port, path = _scheme(request), _host(request), _port(request), _path(request)
    query = _query_text(request)
    return f"{scheme}://{host}:{port}{path}" + (f"?{query}" if query else "")


def _uri(request: RecordedRequest) -> Hashable:
    """vcrpy's ``uri``: scheme, host, port, path and query together."""
    return tuple(f(request) for f in (_scheme, _host, _port, _path, _query))


def _headers(request: RecordedRequest) -> Hashable:
    """Header names (any case) and values, without :data:`VOLATILE_HEADERS`."""
    return tuple(sorted(_header_map(request).items()))


def _header_map(request: RecordedRequest) -> dict[str, str]:
    return {
        name.lower(): value.strip()
        for name, value in request.headers.items()
        if name.lower() not in VOLATILE_HEADERS and not name.lower().startswith("x-stainless-")
    }


def header(name: str) -> Matcher:
    """A matcher on one header's value (case-insensitive name; ``None`` when absent),
    e.g. ``header("anthropic-beta")``, for headers that change the answer."""
    wanted = name.lower()

    def match(request: RecordedRequest) -> Hashable:
        return next((v.strip() for k, v in request.headers.items() if k.lower() == wanted), None)

    match.__name__ = f"header({name!r})"
    return match


# -- bodies ------------------------------------------------------------------------


def _looks_json(raw: bytes, request: RecordedRequest) -> bool:
    ctype = next((v for k, v in request.headers.items() if k.lower() == "content-type"), "")
    return "json" in ctype.lower() or raw.lstrip()[:1] in (b"{", b"[")


def _number(text: str) -> int | float:
    """A JSON number with a fraction or exponent: an int when it is integral."""
    value = float(text)
    return int(value) if value.is_integer() else value


def _canonical(value: Any) -> Any:
    """A JSON value rebuilt with integral floats as ints (``1.0`` == ``1``) and keys as
    strings; anything that is not JSON (a YAML date) becomes its text."""
    kind = type(value)
    if kind is dict:
        return {k if type(k) is str else str(k): _canonical(v) for k, v in value.items()}
    if kind is list:
        return [_canonical(v) for v in value]
    if value is None or kind is str or kind is int or kind is bool:
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return _canonical(dict(value))
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (str, int)):  # subclasses: plain values
        return str(value) if isinstance(value, str) else int(value)
    return str(value)


def parse_json_path(path: str) -> tuple[str | int, ...]:
    """``"messages[*].cache_control"`` → ``("messages", "*", "cache_control")``;
    ``*`` (or ``[*]``) is every key of an object or every item of a list."""
    segments: list[str | int] = []
    pos = 0
    for match in _SEGMENT.finditer(path):
        if match.start() != pos:
            break
        name, index = match.groups()
        segments.append(name if name is not None else index if index == "*" else int(index))
        pos = match.end()
    if not segments or pos != len(path):
        raise ValueError(f"not a JSON path: {path!r} (write e.g. 'metadata.user_id', 'a[0].b')")
    return tuple(segments)


def _targets(value: Any, head: str | int) -> list[Any]:
    """The keys of a dict or indexes of a list that path segment ``head`` selects."""
    if isinstance(value, dict):
        return list(value) if head == "*" else [head] if head in value else []
    if isinstance(value, list):
        if head == "*":
            return list(range(len(value)))
        return [head] if isinstance(head, int) and head < len(value) else []
    return []


def _drop(value: Any, path: tuple[str | int, ...]) -> None:
    """Remove ``path`` from ``value`` in place; an object emptied by it goes too."""
    head, rest = path[0], path[1:]
    for key in reversed(_targets(value, head)):
        if rest:
            _drop(value[key], rest)
            if value[key] == {} and isinstance(value, dict):
                del value[key]
        else:
            del value[key]


@functools.cache
def _noise_paths(provider: str, keep: frozenset[str]) -> tuple[tuple[str | int, ...], ...]:
    return tuple(parse_json_path(p) for p in BODY_NOISE.get(provider, ()) if p not in keep)


def _provider_noise(body: Any, request: RecordedRequest, keep: frozenset[str] = frozenset()) -> Any:
    """Drop the provider's :data:`BODY_NOISE` (``"stream": false`` equals no
    ``stream``), or a JSON-RPC message's (:func:`~..mcp.jsonrpc.match_view`); the
    paths in ``keep`` stay."""
    provider = detect(request.method, _split(request).path)
    if provider is None:
        return jsonrpc.match_body(body, keep)
    if not isinstance(body, dict):
        return body
    for path in _noise_paths(provider, keep):
        _drop(body, path)
    if body.get("stream") is False and "stream" not in keep:
        del body["stream"]
    return body


def normalize_body(request: RecordedRequest, keep: frozenset[str] = frozenset()) -> Any:
    """The body as matched: ``None`` for no (or an empty) body; for JSON, the parsed
    value with integral floats as ints and the provider's noise dropped (a JSON-RPC
    message's id, ``_meta`` and client info: :mod:`~..mcp.jsonrpc`) but for the paths
    in ``keep``; for multipart, its parts without the random boundary
    (:mod:`.multipart`); for anything else, the exact bytes. A body nested too deeply to
    walk is compared as bytes."""
    try:
        if request.json_body is not None:
            return _provider_noise(_canonical(request.json_body), request, keep)
        raw = request.content()
        ctype = next((v for k, v in request.headers.items() if k.lower() == "content-type"), "")
        parts = multipart_parts(raw, ctype) if raw else None
        if parts is not None:  # random boundaries never match: compare the parts
            return parts
        if raw and _looks_json(raw, request):
            try:
                parsed = json.loads(raw, parse_float=_number)
            except ValueError:
                return raw
            return _provider_noise(parsed, request, keep)
        return raw or None
    except RecursionError:
        return _as_bytes(request)


def _as_bytes(request: RecordedRequest) -> bytes:
    """The stored bytes of a body too deep to normalize (only hostile input is)."""
    try:
        return request.content()
    except RecursionError:
        return b"<body nested too deeply to compare>"


# One encoder for every key: json.dumps with options builds a new one per call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _c_canonical() -> Callable[[Any], str]:
    """``_CANONICAL.encode``, calling the C encoder it builds per call straight away (a
    key per recorded and per live request: issue 29). Without the circular-reference
    check: a cycle is a ``RecursionError`` rather than a ``ValueError``, which
    :func:`body_digest` treats alike."""
    make = getattr(json.encoder, "c_make_encoder", None)
    quote = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or quote is None:
        return _CANONICAL.encode
    encode = make(None, _CANONICAL.default, quote, None, ":", ",", True, False, True)
    return lambda value: "".join(encode(value, 0))


_canonical_text = _c_canonical()


def canonical_text(value: Any) -> str:
    """Key order and whitespace ignored: ``json.dumps(sort_keys=True)``, compact."""
    return _canonical_text(value)


def body_digest(value: Any) -> Hashable:
    """A normalized body as a key part: ``None``, or a kind and a 16-byte digest."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return ("bytes", hashlib.blake2b(value, digest_size=16).digest())
    try:
        text = canonical_text(value).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return ("text", hashlib.blake2b(repr(value).encode(), digest_size=16).digest())
    return ("json", hashlib.blake2b(text, digest_size=16).digest())


class BodyMatcher:
    """The ``body`` key part with extra JSON paths ignored (:func:`body_without`), or
    with paths the default drops kept (:func:`body_with`)."""

    def __init__(
        self, ignore: Iterable[str] = (), *, keep: Iterable[str] = (), name: str | None = None
    ) -> None:
        self.ignore = tuple(ignore)
        self.keep = frozenset(keep)
        self._paths = [parse_json_path(p) for p in self.ignore]
        self.__name__ = name or f"body_without({', '.join(map(repr, self.ignore))})"

    def normalize(self, request: RecordedRequest) -> Any:
        """:func:`normalize_body` without the ignored paths, with the kept ones."""
        value = normalize_body(request, self.keep) if self.keep else normalize_body(request)
        if isinstance(value, (dict, list)):
            for path in self._paths:
                _drop(value, path)
        return value

    def __call__(self, request: RecordedRequest) -> Hashable:
        return body_digest(self.normalize(request))

    def __repr__(self) -> str:
        return self.__name__


def body_without(*paths: str) -> BodyMatcher:
    """The ``body`` matcher ignoring ``paths`` too: ``body_without("stream")`` lets a
    streamed request match a recorded non-streamed one (the response is still
    replayed as recorded), ``body_without("messages[*].cache_control")``, ..."""
    return BodyMatcher(paths)


def body_with(*paths: str) -> BodyMatcher:
    """The ``body`` matcher keeping paths the default drops: a provider's body noise
    (``body_with("metadata.user_id")``) or a JSON-RPC message's
    (``body_with("id")`` matches MCP request ids again, ``body_with("params.clientInfo")``
    the client's name and version; see :data:`~..mcp.jsonrpc.NOISE_PATHS`)."""
    for path in paths:
        parse_json_path(path)  # a typo fails here, not as a silent no-op
    return BodyMatcher(keep=paths, name=f"body_with({', '.join(map(repr, paths))})")


def _raw_body(request: RecordedRequest) -> Hashable:
    """The body bytes exactly (a ``json`` body re-serialized compactly, in stored order)."""
    raw = request.content()
    return body_digest(raw) if raw else None


@dataclass(frozen=True)
class Part:
    """One named key part, and how a miss report shows its value."""

    name: str
    key: Callable[[RecordedRequest], Hashable]
    show: Callable[[RecordedRequest], Any] | None = None
    """The value a miss report diffs (a body, a header map); ``None``: the key itself."""


BUILTIN_PARTS: dict[str, Part] = {
    p.name: p
    for p in (
        Part("method", _method),
        Part("scheme", _scheme),
        Part("host", _host),
        Part("port", _port),
        Part("path", _path),
        Part("query", _query, _query_text),
        Part("uri", _uri, _uri_text),
        Part("headers", _headers, _header_map),
        Part("body", BodyMatcher(name="body"), normalize_body),
        Part("raw_body", _raw_body, lambda r: r.content() or None),
        # What a trace knows (model, system, messages, streaming): imported cassettes.
        Part("conversation", conversation_key, conversation),
    )
}
