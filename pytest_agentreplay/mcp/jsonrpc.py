"""JSON-RPC 2.0 messages as MCP sends them: told apart, keyed for matching, re-addressed.

Pure functions over parsed JSON values and body bytes, with no I/O, shared by the
cassettes (matching and replaying Streamable HTTP traffic), the stdio recorder and
replayer, and the scripted fake tool servers.

A **message** is a JSON object with ``"jsonrpc": "2.0"``; a **batch** is a non-empty
array of them. A message is a *request* (``method`` and ``id``), a *notification*
(``method``, no ``id``) or a *response* (``id`` and ``result`` or ``error``).

A request is matched by what decides its answer (:func:`match_view`): its method and
params, without its ``id`` (a counter the client draws), ``params._meta`` (progress
tokens, trace context) and, in ``initialize``, everything but the protocol version
(the client's name, version and capabilities change with every SDK release).

A replayed response carries the recorded request's id; :func:`rewrite_ids` and
:func:`rewrite_event_data` give it the live request's (:func:`id_map` pairs them).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .. import jsonparse

__all__ = [
    "INVALID_REQUEST",
    "JSONRPC",
    "METHOD_NOT_FOUND",
    "NOISE_PATHS",
    "SERVER_ERROR",
    "Kind",
    "Message",
    "answers",
    "error_response",
    "id_map",
    "is_message",
    "kind",
    "match_body",
    "match_view",
    "messages",
    "messages_of",
    "parse",
    "request_ids",
    "response_ids",
    "rewrite_event_data",
    "rewrite_ids",
    "rewrite_value",
]

JSONRPC = "2.0"

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
SERVER_ERROR = -32000
"""The implementation-defined server error code (-32000 to -32099) a miss answers with."""

Message = dict[str, Any]
Kind = Literal["request", "notification", "response"]
Id = str | int

NOISE_PATHS: tuple[str, ...] = ("id", "params._meta", "params.clientInfo")
"""What :func:`match_view` drops from every request or notification by default (and,
in ``initialize``, every param but ``protocolVersion``): JSON paths as
``body_without`` takes them."""

_INITIALIZE_KEPT = ("protocolVersion",)
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
"""Where the 2026-07-28 protocol says the version in each request: kept, as
``initialize`` keeps its ``protocolVersion``."""


def is_message(value: Any) -> bool:
    """Whether ``value`` is one JSON-RPC 2.0 message (request, notification, response)."""
    if not isinstance(value, dict) or value.get("jsonrpc") != JSONRPC:
        return False
    if isinstance(value.get("method"), str):
        return True
    return "id" in value and ("result" in value or "error" in value)


def messages(value: Any) -> list[Message] | None:
    """The messages of a parsed body: one message, or a batch of them, as a list;
    ``None`` when ``value`` is not JSON-RPC (an empty array is not a batch)."""
    if is_message(value):
        return [value]
    if isinstance(value, list) and value and all(is_message(v) for v in value):
        return list(value)
    return None


def parse(body: bytes | str) -> list[Message] | None:
    """The messages of a body's bytes (see :func:`messages`); ``None`` for anything
    that is not JSON, nests too deep, or is JSON but not JSON-RPC."""
    text = body.strip()
    if not text or text[:1] not in ("{", "[", b"{", b"["):
        return None
    try:
        return messages(jsonparse.loads(text))
    except ValueError:
        return None


def messages_of(body: bytes | str) -> Any:
    """A body's bytes as a parsed message (or batch, as a list) when it is JSON-RPC,
    else ``None``: what :func:`request_ids`, :func:`id_map` and :func:`answers` take."""
    found = parse(body)
    if found is None:
        return None
    batch = body.lstrip()[:1] in ("[", b"[")
    return found if batch else found[0]


def kind(message: Message) -> Kind:
    """What a message is: a request (method and id), notification (method, no id) or
    response (an id with a result or an error)."""
    if isinstance(message.get("method"), str):
        return "request" if "id" in message else "notification"
    return "response"


def _valid_id(value: Any) -> bool:
    """A JSON-RPC id: a string or an integer (booleans are not)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def request_ids(value: Any) -> list[Id]:
    """The ids of the requests in a parsed body, in order (none for notifications or a
    body that is not JSON-RPC)."""
    found = messages(value) or []
    return [m["id"] for m in found if kind(m) == "request" and _valid_id(m["id"])]


def response_ids(value: Any) -> list[Id]:
    """The ids of the responses in a parsed body, in order."""
    found = messages(value) or []
    return [m["id"] for m in found if kind(m) == "response" and _valid_id(m["id"])]


def match_view(message: Message, keep: Iterable[str] = ()) -> Message:
    """A request or notification as it is matched: a copy without what
    :data:`NOISE_PATHS` names, except the paths in ``keep`` (``body_with("id")``
    matches ids again). ``initialize`` keeps only its method and
    ``params.protocolVersion`` (``keep`` may name ``params.capabilities`` too); in the
    2026-07-28 protocol, ``params._meta`` keeps its protocol version. Responses are
    returned as they are (copied)."""
    view = copy.deepcopy(message)
    if kind(view) == "response":
        return view
    kept = frozenset(keep)
    if "id" not in kept:
        view.pop("id", None)
    params = view.get("params")
    if isinstance(params, dict):
        view["params"] = _params_view(
            params, initialize=view.get("method") == "initialize", kept=kept
        )
    return view


def _params_view(
    params: dict[str, Any], *, initialize: bool, kept: frozenset[str]
) -> dict[str, Any]:
    """``params`` without their noise (see :func:`match_view`)."""
    drop = [p.partition(".")[2] for p in NOISE_PATHS if p.startswith("params.") and p not in kept]
    if initialize:
        drop += [k for k in params if k not in _INITIALIZE_KEPT and f"params.{k}" not in kept]
    meta = params.get("_meta")
    out = {k: v for k, v in params.items() if k not in drop}
    if "_meta" in drop and isinstance(meta, dict) and _META_VERSION in meta:
        out["_meta"] = {_META_VERSION: meta[_META_VERSION]}
    return out


def match_body(value: Any, keep: Iterable[str] = ()) -> Any:
    """A parsed body as it is matched: each message through :func:`match_view` (a batch
    stays a list, in order); ``value`` itself when it is not JSON-RPC."""
    found = messages(value)
    if found is None:
        return value
    views = [match_view(m, keep) for m in found]
    return views if isinstance(value, list) else views[0]


def id_map(recorded: Any, live: Any) -> dict[Id, Id]:
    """Recorded request id → live request id, pairing the requests of two parsed
    bodies that matched in order (one message each, or two batches); only ids that
    differ are listed. Bodies that are not both JSON-RPC pair nothing."""
    pairs = zip(request_ids(recorded), request_ids(live), strict=False)
    return {old: new for old, new in pairs if type(old) is not type(new) or old != new}


def _rewritten(message: Any, ids: Mapping[Id, Id]) -> Any:
    """``message`` with a response's id (or a progress notification's token) moved
    to its live value; the same object when nothing changes."""
    if not isinstance(message, dict) or message.get("jsonrpc") != JSONRPC:
        return message
    if kind(message) == "response":
        new = _lookup(ids, message.get("id"))
        return message if new is None else {**message, "id": new}
    params = message.get("params")
    if message.get("method") == "notifications/progress" and isinstance(params, dict):
        new = _lookup(ids, params.get("progressToken"))
        return message if new is None else {**message, "params": {**params, "progressToken": new}}
    return message


def _lookup(ids: Mapping[Id, Id], value: Any) -> Id | None:
    """The live id for a recorded ``value`` (``1`` and ``"1"`` are different ids)."""
    if not _valid_id(value):
        return None
    same = (new for old, new in ids.items() if type(old) is type(value) and old == value)
    return next(same, None)


def rewrite_value(value: Any, ids: Mapping[Id, Id]) -> Any:
    """A parsed message or batch with every response id in ``ids`` replaced by its
    live value (see :func:`id_map`); ``value`` itself when nothing changes."""
    if not ids:
        return value
    if isinstance(value, list):
        new = [_rewritten(v, ids) for v in value]
        return value if all(a is b for a, b in zip(new, value, strict=True)) else new
    return _rewritten(value, ids)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def rewrite_ids(body: bytes, ids: Mapping[Id, Id]) -> bytes:
    """A JSON body (one message or a batch) with its response ids replaced; the same
    bytes when it is not JSON-RPC or no id changes."""
    new = _rewritten_text(body, ids)
    return body if new is None else new.encode("utf-8")


def rewrite_event_data(data: str, ids: Mapping[Id, Id]) -> str:
    """An SSE event's ``data`` with its JSON-RPC response id replaced; the same text
    when it is not JSON-RPC (a priming event with empty data) or no id changes."""
    new = _rewritten_text(data, ids)
    return data if new is None else new


def _rewritten_text(text: str | bytes, ids: Mapping[Id, Id]) -> str | None:
    """``text`` re-serialized with its response ids replaced; ``None`` when nothing
    changes (no ids to move, blank, not JSON-RPC, or no id of ``ids`` in it)."""
    if not ids or not text.strip() or parse(text) is None:
        return None
    value = jsonparse.loads(text)
    new = rewrite_value(value, ids)
    return None if new is value else _dumps(new)


def error_response(id_: Any, code: int, message: str, data: Any = None) -> Message:
    """A JSON-RPC error response to the request with ``id_`` (``None`` when the id is
    unknown, as the spec says)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC, "id": id_ if _valid_id(id_) else None, "error": error}


def answers(ids: Iterable[Id], value: Any) -> bool:
    """Whether parsed ``value`` holds a response to every one of ``ids`` (the final
    event of a Streamable HTTP POST stream: the server sends nothing after it)."""
    wanted = {(type(i), i) for i in ids}
    got = {(type(i), i) for i in response_ids(value)}
    return bool(wanted) and wanted <= got
