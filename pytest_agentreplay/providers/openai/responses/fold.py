"""Folding an OpenAI Responses event stream into the final ``Response`` JSON.

Mirrors the official SDK's ``ResponseStreamState``: the final body is the
``response`` carried by the terminal event (``response.completed``, or
``response.incomplete`` / ``response.failed``), with ``output`` recovered from the
finished items when a terminal snapshot leaves it out. Unlike the SDK, it also
builds every item from its deltas as they arrive, so a stream cut before the
terminal event still folds to the partial body (``complete=False``), and it
checks the bookkeeping the SDK trusts: indexes opened before use, parts opened
in order, ``item_id`` matching the item at ``output_index``, increasing
``sequence_number``, ``event:`` names agreeing with the data's ``type``.

Accepted too: OpenRouter's data-only records and its ``data: [DONE]`` sentinel
(which ends the stream, as in the SDK), a truthy top-level ``error`` on any record
(where the SDK raises too), DeepSeek's ``reasoning_text`` parts,
streams resumed with ``GET /responses/{id}?stream=true`` (which start at
``response.queued``), and both shapes of the ``error`` record (details flat, as
documented, or nested under ``error``, as the live API sends them).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ....errors import CodecError
from ....sse import SSEEvent
from ...base import Codec, Folded
from ...roles import EventFolder
from .events import (
    ITEM_STRINGS,
    KNOWN_EVENT_TYPES,
    LIFECYCLE,
    PART_STRINGS,
    PROGRESS,
    TERMINAL,
)

__all__ = ["fold"]


def fold(codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> Folded:
    """Accumulate ``events`` into the final ``Response`` JSON (see module docs).

    Raises :class:`~....errors.CodecError` naming the event number
    and field for malformed records; unknown event types are listed in
    ``Folded.unknown`` (or raise, with ``strict``).
    """
    return _Fold(codec, events, strict=strict).run()


class _Fold(EventFolder):
    """The accumulator state for one stream."""

    def __init__(self, codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> None:
        super().__init__(codec, events, strict=strict)
        self.snapshot: dict[str, Any] | None = None
        self.items: dict[int, dict[str, Any]] = {}
        self.finished: set[int] = set()
        self.terminal: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.last_sequence: int | None = None
        self.kind = ""

    def fail(self, message: str, field: str) -> CodecError:
        """The error for the current event, naming its type first."""
        return super().fail(f"{self.kind or 'event'}: {message}", field)

    # -- driver ----------------------------------------------------------------------

    def step(self, event: SSEEvent) -> bool:
        if event.data.startswith("[DONE]"):
            return True  # OpenRouter's sentinel: the SDK stops reading here too
        if self.terminal is not None:
            self.kind = ""
            raise self.fail("a record after the terminal event", "type")
        data = self.payload(event)
        # The SDK raises on any record whose top-level `error` is truthy, not only
        # on `error` records (a gateway's `"error": ""` on every event is tolerated).
        if self.kind == "error" or data.get("error"):
            self.error = _error_object(data)
            return True
        self.dispatch(data)
        return False

    def result(self) -> Folded:
        return self.folded(self.body(), complete=self.terminal is not None, error=self.error)

    def payload(self, event: SSEEvent) -> dict[str, Any]:
        self.kind = ""
        data = self.data()
        kind = data.get("type")
        if kind is None and event.event == "error":
            kind = "error"  # a proxy's bare {"error": {...}} record
        if not isinstance(kind, str):
            raise self.fail("data needs a string 'type'", "type")
        self.kind = kind
        if event.event is not None and event.event != kind:
            raise self.fail(f"event name {event.event!r} contradicts the data's type", "event")
        self.check_sequence(data)
        return data

    def check_sequence(self, data: Mapping[str, Any]) -> None:
        if "sequence_number" not in data:
            return
        number = data["sequence_number"]
        if not isinstance(number, int) or isinstance(number, bool):
            raise self.fail("sequence_number must be an integer", "sequence_number")
        if self.last_sequence is not None and number <= self.last_sequence:
            raise self.fail(
                f"sequence_number {number} does not follow {self.last_sequence}", "sequence_number"
            )
        self.last_sequence = number

    def dispatch(self, data: dict[str, Any]) -> None:
        kind = self.kind
        if kind not in KNOWN_EVENT_TYPES:
            self.skip("unknown event type", "type")
            return
        if kind in LIFECYCLE:
            self.lifecycle(data)
            return
        if self.snapshot is None:
            raise self.fail("arrived before response.created", "type")
        handler = self.handler(kind)
        handler(data)

    def handler(self, kind: str) -> Callable[[dict[str, Any]], None]:
        if kind in TERMINAL:
            return self.finish
        if kind in PROGRESS:
            return self.progress
        if kind in ITEM_STRINGS:
            return self.item_string
        if kind in PART_STRINGS:
            return self.part_string
        handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "response.output_item.added": self.item_added,
            "response.output_item.done": self.item_done,
            "response.content_part.added": self.part_added,
            "response.content_part.done": self.part_done,
            "response.output_text.annotation.added": self.annotation_added,
            "response.reasoning_summary_part.added": self.summary_added,
            "response.reasoning_summary_part.done": self.summary_done,
            "response.reasoning_summary_text.delta": self.summary_text,
            "response.reasoning_summary_text.done": self.summary_text,
        }
        return handlers[kind]

    def body(self) -> dict[str, Any]:
        if self.terminal is not None:
            return self.terminal
        if self.snapshot is None:
            return {}
        body = copy.deepcopy(self.snapshot)
        body["output"] = self.output()
        return body

    def output(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(self.items[i]) for i in sorted(self.items)]

    # -- whole-response events ---------------------------------------------------------

    def response(self, data: Mapping[str, Any]) -> dict[str, Any]:
        response = data.get("response")
        if not isinstance(response, dict):
            raise self.fail("needs a 'response' object", "response")
        if self.snapshot is not None and response.get("id") != self.snapshot.get("id"):
            raise self.fail(
                f"response id {response.get('id')!r} differs from "
                f"{self.snapshot.get('id')!r} earlier in the stream",
                "response.id",
            )
        return copy.deepcopy(response)

    def lifecycle(self, data: dict[str, Any]) -> None:
        response = self.response(data)
        if self.snapshot is None and isinstance(response.get("output"), list):
            # A resumed stream may start with items already produced.
            for i, item in enumerate(response["output"]):
                if isinstance(item, dict):
                    self.items[i] = item
                    self.finished.add(i)
        self.snapshot = response

    def finish(self, data: dict[str, Any]) -> None:
        response = self.response(data)
        if response.get("output") is None:
            response["output"] = self.output()  # what the SDK recovers too
        if self.kind == "response.failed":
            error = response.get("error")
            self.error = dict(error) if isinstance(error, Mapping) else {}
        self.terminal = response

    # -- items -------------------------------------------------------------------------

    def output_index(self, data: Mapping[str, Any]) -> int:
        index = data.get("output_index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise self.fail("needs a non-negative integer output_index", "output_index")
        return index

    def open_item(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The item at ``output_index``: opened, not finished, same ``item_id``."""
        index = self.output_index(data)
        item = self.items.get(index)
        if item is None:
            raise self.fail(f"output_index {index} was never opened", "output_index")
        if index in self.finished:
            raise self.fail(f"output_index {index} is already done", "output_index")
        item_id = data.get("item_id")
        if item_id is not None and item.get("id") is not None and item_id != item["id"]:
            raise self.fail(
                f"item_id {item_id!r} is not the item at output_index {index} ({item['id']!r})",
                "item_id",
            )
        return item

    def new_item(self, data: Mapping[str, Any]) -> dict[str, Any] | None:
        item = data.get("item")
        if item is None:
            return None
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            raise self.fail("needs an 'item' object with a string 'type'", "item.type")
        return copy.deepcopy(item)

    def item_added(self, data: dict[str, Any]) -> None:
        index = self.output_index(data)
        item = self.new_item(data)
        if item is None:
            return  # an empty added record: the SDK skips it as well
        if index in self.items:
            raise self.fail(f"output_index {index} was already opened", "output_index")
        self.items[index] = item

    def item_done(self, data: dict[str, Any]) -> None:
        index = self.output_index(data)
        item = self.new_item(data)
        if item is None:
            raise self.fail("needs the finished 'item'", "item")
        before = self.items.get(index)
        if before is not None:
            if before["type"] != item["type"]:
                raise self.fail(
                    f"item type {item['type']!r} differs from the "
                    f"{before['type']!r} opened at output_index {index}",
                    "item.type",
                )
            if before.get("id") is not None and item.get("id") not in (None, before["id"]):
                raise self.fail(
                    f"item id {item.get('id')!r} differs from {before['id']!r}", "item.id"
                )
        self.items[index] = item
        self.finished.add(index)

    def item_string(self, data: dict[str, Any]) -> None:
        item = self.open_item(data)
        field, done_field = ITEM_STRINGS[self.kind]
        self.apply_string(item, field, data, done_field)

    def apply_string(
        self, target: dict[str, Any], field: str, data: Mapping[str, Any], done_field: str | None
    ) -> None:
        """A ``.delta`` appends ``delta`` to ``target[field]``; a ``.done`` sets it."""
        source = done_field or "delta"
        value = data.get(source)
        if not isinstance(value, str):
            raise self.fail(f"needs a string {source!r}", source)
        current = target.get(field) or ""
        if not isinstance(current, str):
            raise self.fail(f"the item's {field!r} is not a string", source)
        target[field] = value if done_field else current + value

    def progress(self, data: dict[str, Any]) -> None:
        if "output_index" in data:
            self.open_item(data)

    # -- content parts -----------------------------------------------------------------

    def content_index(self, data: Mapping[str, Any], field: str = "content_index") -> int:
        index = data.get(field)
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise self.fail(f"needs a non-negative integer {field}", field)
        return index

    def new_part(self, data: Mapping[str, Any]) -> dict[str, Any]:
        part = data.get("part")
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise self.fail("needs a 'part' object with a string 'type'", "part.type")
        return copy.deepcopy(part)

    def part_list(self, item: dict[str, Any], key: str) -> list[Any]:
        parts = item.setdefault(key, [])
        if parts is None:
            parts = item[key] = []
        if not isinstance(parts, list):
            raise self.fail(f"the item's {key!r} is not a list", key)
        return parts

    def open_part(
        self, data: Mapping[str, Any], key: str = "content", field: str = "content_index"
    ) -> tuple[list[Any], int]:
        parts = self.part_list(self.open_item(data), key)
        index = self.content_index(data, field)
        if index >= len(parts):
            raise self.fail(f"{field} {index} was never opened", field)
        return parts, index

    def part_added(self, data: dict[str, Any]) -> None:
        self.add_part(data, "content", "content_index")

    def add_part(self, data: Mapping[str, Any], key: str, field: str) -> None:
        parts = self.part_list(self.open_item(data), key)
        index = self.content_index(data, field)
        if index != len(parts):
            raise self.fail(f"{field} {index} is out of order (next is {len(parts)})", field)
        parts.append(self.new_part(data))

    def part_done(self, data: dict[str, Any]) -> None:
        parts, index = self.open_part(data)
        part = self.new_part(data)
        # content_part.done repeats the text but leaves logprobs empty: keep ours.
        if not part.get("logprobs") and parts[index].get("logprobs"):
            part["logprobs"] = parts[index]["logprobs"]
        parts[index] = part

    def part_string(self, data: dict[str, Any]) -> None:
        parts, index = self.open_part(data)
        part_type, field, done_field = PART_STRINGS[self.kind]
        part = parts[index]
        if part.get("type") != part_type:
            raise self.fail(
                f"content_index {index} is a {part.get('type')!r} part, not {part_type!r}",
                "content_index",
            )
        self.apply_string(part, field, data, done_field)
        logprobs = data.get("logprobs")
        if part_type == "output_text" and isinstance(logprobs, list) and logprobs:
            part["logprobs"] = (
                logprobs if done_field else [*(part.get("logprobs") or []), *logprobs]
            )

    def annotation_added(self, data: dict[str, Any]) -> None:
        parts, index = self.open_part(data)
        annotations = self.part_list(parts[index], "annotations")
        position = self.content_index(data, "annotation_index")
        if position != len(annotations):
            raise self.fail(
                f"annotation_index {position} is out of order (next is {len(annotations)})",
                "annotation_index",
            )
        annotation = data.get("annotation")
        if not isinstance(annotation, dict):
            raise self.fail("needs an 'annotation' object", "annotation")
        annotations.append(copy.deepcopy(annotation))

    # -- reasoning summaries -----------------------------------------------------------

    def summary_added(self, data: dict[str, Any]) -> None:
        self.add_part(data, "summary", "summary_index")

    def summary_done(self, data: dict[str, Any]) -> None:
        parts, index = self.open_part(data, "summary", "summary_index")
        parts[index] = self.new_part(data)

    def summary_text(self, data: dict[str, Any]) -> None:
        parts, index = self.open_part(data, "summary", "summary_index")
        done = self.kind.endswith(".done")
        self.apply_string(parts[index], "text", data, "text" if done else None)


def _error_object(data: Mapping[str, Any]) -> dict[str, Any]:
    """The error details of an ``error`` record, whichever shape it has."""
    nested = data.get("error")
    if isinstance(nested, Mapping):
        return dict(nested)
    if nested:  # a gateway's `"error": "text"` on an ordinary record
        return {"message": str(nested)}
    return {k: v for k, v in data.items() if k not in ("type", "sequence_number")}
