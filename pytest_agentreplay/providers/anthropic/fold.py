"""Fold an Anthropic Messages event stream into the final ``Message`` JSON.

This is the JSON-level twin of the SDK's accumulator
(``anthropic/lib/streaming/_beta_messages.py: accumulate_event``, a superset of
the non-beta one): ``message_start`` gives the snapshot, ``content_block_start``
appends a block, ``content_block_delta`` grows it (text, tool input JSON parsed
in partial mode, citations, thinking, signature, compaction),
``message_delta`` overwrites stop reason / usage totals, ``message_stop`` ends it.

Where the SDK is silent about malformed input (it indexes a list and lets an
``IndexError`` escape, or never notices an index that skips ahead) this folder
raises :class:`~...errors.CodecError` naming the event number and
field. Where the SDK deliberately ignores something (``ping``, events without an
``event:`` name, a delta type it does not know) the folder ignores it too, but
remembers the event in :attr:`Folded.unknown` so nothing a provider adds later
is silently lost.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pydantic_core import from_json

from ... import jsonparse
from ...sse import SSEEvent
from ..base import Codec, Folded
from ..roles import EventFolder

__all__ = ["TOOL_INPUT_BLOCKS", "fold"]

TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
"""Block types whose ``input`` the SDK rebuilds from ``input_json_delta`` fragments."""

_KNOWN = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)

# message_delta usage fields the SDK copies when present (output_tokens always).
_DELTA_USAGE = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "server_tool_use",
    "output_tokens_details",
    "iterations",
    "fallback_credit",
)
# message_delta top-level fields the SDK copies when not null.
_DELTA_EXTRA = ("context_management", "input_transformations")


def fold(codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> Folded:
    """Accumulate ``events`` the way ``MessageStream.get_final_message()`` does."""
    return _Folder(codec, events, strict=strict).run()


class _Folder(EventFolder):
    """One fold: the snapshot being built plus per-block bookkeeping."""

    def __init__(self, codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> None:
        super().__init__(codec, events, strict=strict)
        self.body: dict[str, Any] | None = None
        self.stopped: set[int] = set()
        self.json_bufs: dict[int, str] = {}
        self.complete = False
        self.error: dict[str, Any] | None = None

    # -- driver -------------------------------------------------------------------------

    def step(self, event: SSEEvent) -> bool:
        if event.event == "ping":
            return False  # the SDK drops pings unread
        if event.event == "error":
            self.error = self._error_payload(event)
            return True
        if event.event is None:
            self.skip("event has no `event:` name (the SDK skips such events)")
            return False
        self._apply(event)
        return False

    def result(self) -> Folded:
        body = self.body if self.body is not None else {}
        error = self.error
        return self.folded(body, complete=self.complete and error is None, error=error)

    def _apply(self, event: SSEEvent) -> None:
        data = self.data()
        kind = data.get("type")
        if not isinstance(kind, str):
            raise self.fail("data has no string `type`", "type")
        if kind != event.event:
            raise self.fail(f"event name {event.event!r} contradicts data type {kind!r}", "type")
        if kind not in _KNOWN:
            self.skip(f"unknown event type {kind!r}")
            return
        if self.complete:
            raise self.fail(f"{kind} after message_stop", "type")
        if kind == "message_start":
            self._message_start(data)
            return
        if self.body is None:
            raise self.fail(f"{kind} before message_start", "type")
        getattr(self, "_" + kind)(self.body, data)

    # -- events ---------------------------------------------------------------------------

    def _message_start(self, data: dict[str, Any]) -> None:
        if self.body is not None:
            raise self.fail("second message_start in one stream", "type")
        message = data.get("message")
        if not isinstance(message, dict):
            raise self.fail("message_start needs a `message` object", "message")
        body = copy.deepcopy(message)
        if not isinstance(body.get("content", []), list):
            raise self.fail("message.content must be a list", "message.content")
        body.setdefault("content", [])
        if not isinstance(body.get("usage"), dict):
            raise self.fail("message.usage must be an object", "message.usage")
        self.body = body

    def _content_block_start(self, body: dict[str, Any], data: dict[str, Any]) -> None:
        content: list[Any] = body["content"]
        index = self._index(data)
        if index != len(content):
            raise self.fail(
                f"content_block_start for index {index}, expected {len(content)} "
                "(blocks open in order)",
                "index",
            )
        block = data.get("content_block")
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise self.fail(
                "content_block must be an object with a string `type`", "content_block.type"
            )
        content.append(copy.deepcopy(block))
        if block["type"] == "fallback":  # beta: the final hop names the model that served it
            target = block.get("to")
            if isinstance(target, dict) and "model" in target:
                body["model"] = target["model"]

    def _content_block_delta(self, body: dict[str, Any], data: dict[str, Any]) -> None:
        index = self._open_index(body, data)
        delta = data.get("delta")
        if not isinstance(delta, dict) or not isinstance(delta.get("type"), str):
            raise self.fail("delta must be an object with a string `type`", "delta.type")
        block: dict[str, Any] = body["content"][index]
        handler = getattr(self, "_delta_" + delta["type"], None)
        if handler is None:
            self.skip(f"unknown delta type {delta['type']!r}")
            return
        handler(index, block, delta)

    def _content_block_stop(self, body: dict[str, Any], data: dict[str, Any]) -> None:
        self.stopped.add(self._open_index(body, data))

    def _message_delta(self, body: dict[str, Any], data: dict[str, Any]) -> None:
        delta, usage = data.get("delta"), data.get("usage")
        if not isinstance(delta, dict):
            raise self.fail("message_delta needs a `delta` object", "delta")
        if not isinstance(usage, dict) or not isinstance(usage.get("output_tokens"), int):
            raise self.fail("message_delta needs usage.output_tokens", "usage.output_tokens")
        body["stop_reason"] = delta.get("stop_reason")
        body["stop_sequence"] = delta.get("stop_sequence")
        if "stop_details" in delta or "stop_details" in body:
            body["stop_details"] = delta.get("stop_details")
        if delta.get("container") is not None:
            body["container"] = delta["container"]
        for key in _DELTA_EXTRA:
            if data.get(key) is not None:
                body[key] = data[key]
        totals = body["usage"]
        totals["output_tokens"] = usage["output_tokens"]
        for key in _DELTA_USAGE:
            if usage.get(key) is not None:
                totals[key] = usage[key]

    def _message_stop(self, body: dict[str, Any], data: dict[str, Any]) -> None:
        self.complete = True

    # -- deltas ---------------------------------------------------------------------------

    def _delta_text_delta(self, index: int, block: dict[str, Any], delta: dict[str, Any]) -> None:
        if block["type"] == "text":
            block["text"] = block.get("text", "") + self._str(delta, "text")

    def _delta_thinking_delta(
        self,
        index: int,
        block: dict[str, Any],
        delta: dict[str, Any],
    ) -> None:
        if block["type"] == "thinking":
            block["thinking"] = block.get("thinking", "") + self._str(delta, "thinking")

    def _delta_signature_delta(
        self,
        index: int,
        block: dict[str, Any],
        delta: dict[str, Any],
    ) -> None:
        if block["type"] == "thinking":
            block["signature"] = self._str(delta, "signature")

    def _delta_citations_delta(
        self,
        index: int,
        block: dict[str, Any],
        delta: dict[str, Any],
    ) -> None:
        if "citation" not in delta:
            raise self.fail("citations_delta without `citation`", "delta.citation")
        if block["type"] == "text":
            if block.get("citations"):
                block["citations"].append(delta["citation"])
            else:
                block["citations"] = [delta["citation"]]

    def _delta_compaction_delta(
        self,
        index: int,
        block: dict[str, Any],
        delta: dict[str, Any],
    ) -> None:
        if block["type"] == "compaction":
            block["content"] = delta.get("content")
            block["encrypted_content"] = delta.get("encrypted_content")

    def _delta_input_json_delta(
        self,
        index: int,
        block: dict[str, Any],
        delta: dict[str, Any],
    ) -> None:
        fragment = self._str(delta, "partial_json")
        if block["type"] not in TOOL_INPUT_BLOCKS:
            return
        buf = self.json_bufs.get(index, "") + fragment
        self.json_bufs[index] = buf
        if buf:
            try:
                block["input"] = from_json(buf.encode("utf-8"), allow_partial=True)
            except ValueError as exc:
                raise self.fail(
                    f"tool input is not valid (partial) JSON: {exc}; JSON so far: {buf[:80]!r}",
                    "delta.partial_json",
                ) from None

    # -- helpers --------------------------------------------------------------------------

    def _index(self, data: dict[str, Any]) -> int:
        index = data.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise self.fail(f"index must be a non-negative integer, got {index!r}", "index")
        return index

    def _open_index(self, body: dict[str, Any], data: dict[str, Any]) -> int:
        index = self._index(data)
        if index >= len(body["content"]):
            raise self.fail(f"content block {index} was never opened", "index")
        if index in self.stopped:
            raise self.fail(f"content block {index} was already stopped", "index")
        return index

    def _str(self, delta: dict[str, Any], key: str) -> str:
        value = delta.get(key)
        if not isinstance(value, str):
            raise self.fail(
                f"{delta['type']}.{key} must be a string, got {value!r:.40}", f"delta.{key}"
            )
        return value

    def _error_payload(self, event: SSEEvent) -> dict[str, Any]:
        try:
            payload = jsonparse.loads(event.data)
        except ValueError:
            payload = None
        if isinstance(payload, dict):
            return payload
        # The SDK raises with the raw text as the message in this case; keep it.
        return {"type": "error", "error": {"type": None, "message": event.data}}
