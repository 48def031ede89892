"""Masking volatile values in run logs and persisted state, for comparisons and snapshots.

Two runs of the same scenario differ in ids (random UUIDs, provider message ids),
clocks and request ids, and in nothing else that matters. :func:`normalize` maps
each such value to a stable stand-in — the *n*-th distinct id of a kind becomes
``<step-n>``, ``<turn-n>``, ``<call-n>``..., timestamps ``<time>`` — so equal runs
give equal JSON, and a real difference still shows where it is.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel

from ..providers.catalog import unstreamed_url

__all__ = [
    "DURATION_KEYS",
    "REQUEST_ID_KEYS",
    "TIME_KEYS",
    "CallsView",
    "IdMask",
    "Masker",
    "normalize",
    "normalize_log",
    "to_json",
]

TIME_KEYS = frozenset(
    {
        "at",
        "timestamp",
        "created",
        "created_at",
        "updated_at",
        "started_at",
        "completed_at",
        "ended_at",
        "time",
    }
)
DURATION_KEYS = frozenset(
    {"duration", "duration_ms", "duration_s", "elapsed", "elapsed_ms", "latency", "latency_ms"}
)
REQUEST_ID_KEYS = frozenset({"request_id", "request-id", "x-request-id", "x_request_id"})

# Ids providers and frameworks generate: msg_01..., toolu_..., call_..., chatcmpl-...
_PROVIDER_ID = re.compile(
    r"(?:msg|toolu|srvtoolu|call|fc|rs|resp|req|chatcmpl|run|ws|ctc|mcp)[_-][A-Za-z0-9_-]{8,}\Z"
)
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
)
_ISO_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\Z"
)

_MIN_FREE_ID = 4
_ID_FIELDS = frozenset({"session_id", "turn_id", "step_id", "call_id", "key", "id", "tool_call_id"})

# Where the run-log entries keep ids, and the kind each is masked as.
_ENTRY_IDS = (
    ("session_id", "session"),
    ("turn_id", "turn"),
    ("step_id", "step"),
    ("call_id", "call"),
    ("key", "intent"),
)


def to_json(value: Any) -> Any:
    """``value`` as plain JSON data: pydantic models dumped, dataclasses as dicts,
    tuples and sets as lists, datetimes as ISO text, enums as their values."""
    if isinstance(value, BaseModel):
        return to_json(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_json(v) for v in value), key=repr)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Enum):
        return to_json(value.value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value


@dataclasses.dataclass(frozen=True)
class IdMask:
    """An application's own ids, to mask like the ids the plugin knows.

    ``fields`` names keys whose string values are ids (``"turn_id"``,
    ``"traceId"``: matched case-insensitively); ``patterns`` are regular
    expressions whose matches, anywhere in any string, are ids
    (``r"\b[0-9a-f]{8}\b"`` for ``uuid4().hex[:8]``). Each distinct value
    becomes the same stand-in wherever it appears — ``<turn_id-1>`` for a field,
    ``<app-id-1>`` for a pattern match — so "these two entries belong to the same
    turn" survives masking while the random values do not (issue 20: a runtime's
    ``uuid4().hex[:8]`` turn ids broke parity).
    """

    fields: Iterable[str] = ()
    patterns: Iterable[str | re.Pattern[str]] = ()

    def __post_init__(self) -> None:
        fields = (self.fields,) if isinstance(self.fields, str) else tuple(self.fields)
        patterns = (self.patterns,) if isinstance(self.patterns, str) else tuple(self.patterns)
        for field in fields:
            if not isinstance(field, str) or not field:
                raise TypeError(f"IdMask fields are key names (str), got {field!r}")
        try:
            compiled = tuple(re.compile(p) for p in patterns)
        except re.error as exc:
            raise ValueError(f"IdMask pattern {exc.pattern!r} is not a regex: {exc}") from None
        for pattern in compiled:
            if pattern.match(""):
                raise ValueError(
                    f"IdMask pattern {pattern.pattern!r} matches the empty string: it "
                    f"would mask between every character"
                )
        object.__setattr__(self, "fields", frozenset(f.lower() for f in fields))
        object.__setattr__(self, "patterns", compiled)


class Masker:
    """Replaces volatile values by stable stand-ins, numbering ids by first appearance."""

    def __init__(self, ids: IdMask | None = None) -> None:
        self.known: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        ids = ids or IdMask()
        self._id_fields: frozenset[str] = frozenset(ids.fields)
        self._id_patterns: tuple[re.Pattern[str], ...] = tuple(ids.patterns)  # type: ignore[arg-type]

    def learn_fields(self, value: Any) -> None:
        """Learn the values of the application's id fields in ``value`` first, so a
        value is masked alike where it appears before its field does."""
        if not self._id_fields:
            return
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and str(key).lower() in self._id_fields:
                    self.learn(item, str(key).lower())
                else:
                    self.learn_fields(item)
        elif isinstance(value, list):
            for item in value:
                self.learn_fields(item)

    def learn(self, value: Any, kind: str) -> None:
        """Remember ``value`` as an id of ``kind`` (the next free ordinal)."""
        if isinstance(value, str) and value and value not in self.known:
            self.known[value] = self._next(kind)

    def _next(self, kind: str) -> str:
        self._counts[kind] = self._counts.get(kind, 0) + 1
        return f"<{kind}-{self._counts[kind]}>"

    def _uuid(self, match: re.Match[str]) -> str:
        text = match.group(0)
        if text not in self.known:
            self.known[text] = self._next("uuid")
        return self.known[text]

    def string(self, text: str) -> str:
        # Short ids ("1", "a") are only masked in id fields: as values elsewhere they
        # could be anything (a retry-after of "5", a one-word answer).
        known = self.known.get(text) if len(text) >= _MIN_FREE_ID else None
        if known is not None:
            return known
        if _PROVIDER_ID.match(text):
            self.known[text] = self._next("id")
            return self.known[text]
        if _ISO_TIME.match(text):
            return "<time>"
        for pattern in self._id_patterns:
            text = pattern.sub(self._app_id, text)
        return _UUID.sub(self._uuid, text) if len(text) >= 32 else text

    def _app_id(self, match: re.Match[str]) -> str:
        found = match.group(0)
        if found not in self.known:
            self.known[found] = self._next("app-id")
        return self.known[found]

    def walk(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._field(k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, str):
            return self.string(value)
        return value

    def _field(self, key: str, value: Any) -> Any:
        if value is None or isinstance(value, (dict, list)):
            return self.walk(value)
        lowered = key.lower()
        if (
            (lowered in _ID_FIELDS or lowered in self._id_fields)
            and isinstance(value, str)
            and value in self.known
        ):
            return self.known[value]
        if lowered in TIME_KEYS:
            return "<time>"
        if lowered in DURATION_KEYS:
            return "<duration>"
        if lowered in REQUEST_ID_KEYS:
            return "<request-id>"
        return self.walk(value)


def normalize(value: Any, *, ids: IdMask | None = None) -> Any:
    """``value`` (a run log, persisted state, any JSON-like data) as JSON with
    timestamps, durations, request ids, provider ids and UUIDs masked, and the
    application's own ids that ``ids`` names."""
    data = to_json(value)
    masker = Masker(ids)
    masker.learn_fields(data)
    return masker.walk(data)


def _learn_entry_ids(masker: Masker, entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        for name, kind in _ENTRY_IDS:
            if name in entry:
                masker.learn(entry[name], kind)


def _learn_call_ids(masker: Masker, calls: list[dict[str, Any]]) -> None:
    """Tool-call ids inside requests and replies share the ``<call-n>`` numbering
    of the agent's tool entries, so both sides of a log name a call alike."""
    for call in calls:
        for message in call.get("request", {}).get("messages", []):
            for part in message.get("parts", []):
                if part.get("kind") == "tool_call":
                    masker.learn(part.get("id"), "call")
                elif part.get("kind") == "tool_result":
                    masker.learn(part.get("tool_call_id"), "call")
        for part in (call.get("reply") or {}).get("parts", []):
            if part.get("kind") in ("tool_call", "server_tool_call"):
                masker.learn(part.get("id"), "call")


def _without_transport(data: dict[str, Any]) -> dict[str, Any]:
    """Drop what depends on how a response arrived (JSON body or SSE, chunking)."""
    calls = []
    for dumped in data.get("model_calls", []):
        call = {k: v for k, v in dumped.items() if k not in ("streaming", "events_sent")}
        if isinstance(call.get("url"), str):
            call["url"] = unstreamed_url(call["url"])
        request = dict(call.get("request", {}))
        request.pop("stream", None)
        if isinstance(request.get("raw"), dict):
            request["raw"] = {
                k: v for k, v in request["raw"].items() if k not in ("stream", "stream_options")
            }
        calls.append({**call, "request": request})
    entries = [e for e in data.get("entries", []) if e.get("event") != "delta"]
    return {**data, "model_calls": calls, "entries": entries}


def _message_line(message: dict[str, Any]) -> str:
    """``user: Weather in Leeds?`` / ``assistant: [tool_call weather]``: one message, short."""
    bits = []
    for part in message.get("parts", []):
        kind = part.get("kind")
        if kind == "text":
            bits.append(part.get("text", ""))
        elif kind == "tool_call":
            bits.append(f"[tool_call {part.get('name')} {part.get('id', '')}]".replace(" ]", "]"))
        elif kind == "tool_result":
            bits.append(f"[tool_result {part.get('tool_call_id')}: {part.get('content', '')}]")
        elif kind == "server_tool_call":  # the provider ran it: told apart from tool_call
            ident = part.get("id", "")
            bits.append(f"[server_tool_call {part.get('name')} {ident}]".replace(" ]", "]"))
        else:
            bits.append(f"[{part.get('type') or kind}]")
    return f"{message.get('role')}: {''.join(bits)}"


def _brief(call: dict[str, Any]) -> dict[str, Any]:
    """A model call reduced to what a reviewer reads: how it ended, the conversation
    it carried (one line a message), and what the reply said."""
    request = call.get("request", {})
    brief: dict[str, Any] = {
        k: call[k]
        for k in ("index", "provider", "streaming", "status", "outcome", "events_sent")
        if k in call
    }
    brief["model"] = request.get("model")
    brief["messages"] = [_message_line(m) for m in request.get("messages", [])]
    reply = call.get("reply")
    if reply is not None:
        brief["reply"] = _message_line({"role": "assistant", "parts": reply.get("parts", [])})
        if reply.get("fault"):
            brief["fault"] = reply["fault"]
    return {k: v for k, v in brief.items() if v is not None}


CallsView = Literal["full", "brief", "none"]


def normalize_log(
    data: dict[str, Any],
    *,
    transport: bool = True,
    calls: CallsView = "full",
    ids: IdMask | None = None,
) -> dict[str, Any]:
    """A dumped :class:`~.RunLog` with its volatile values masked (see
    :meth:`~.RunLog.normalized`)."""
    if not transport:
        data = _without_transport(data)
    masker = Masker(ids)
    _learn_entry_ids(masker, data.get("entries", []))
    _learn_call_ids(masker, data.get("model_calls", []))
    masker.learn_fields(data)
    if calls == "none":
        data = {k: v for k, v in data.items() if k != "model_calls"}
    result: dict[str, Any] = masker.walk(data)
    if calls == "brief":  # after masking: the one-line messages embed the (masked) ids
        result["model_calls"] = [_brief(c) for c in result.get("model_calls", [])]
    return result
