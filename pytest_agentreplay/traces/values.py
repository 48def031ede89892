"""OTLP JSON values: ``AnyValue`` objects, ids, and the GenAI attributes held as JSON text.

The collector's file exporter writes OTLP as protobuf JSON: each attribute value is an
``AnyValue`` object (``{"stringValue": ...}``, ``{"intValue": "12"}`` with 64-bit ints
as strings, ``{"arrayValue": {"values": [...]}}``, ``{"kvlistValue": ...}``), and ids
are hex (the OTLP spec) or base64 (protobuf's own JSON mapping). The GenAI conventions
put messages in attributes as JSON text on spans and as structured values on events;
both come out of here as the same Python values.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["STRUCTURED", "any_value", "attribute_map", "hex_id", "plain_attributes"]

STRUCTURED = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        # pydantic-ai's own names for the same (instrumentation version 1 and 2)
        "all_messages_events",
        "events",
    }
)
"""Attributes whose text is JSON: parsed when read, so spans and events look alike."""

_SCALARS = ("stringValue", "boolValue", "doubleValue")


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` object as a plain Python value (a plain value stays as it is)."""
    if not isinstance(value, Mapping):
        return value
    for key in _SCALARS:
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return attribute_map(value["kvlistValue"].get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None  # an empty AnyValue: OTLP's "no value"


def attribute_map(items: Any) -> dict[str, Any]:
    """OTLP's ``[{"key": k, "value": AnyValue}, ...]`` as a dict, GenAI JSON text parsed."""
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            out[item["key"]] = _parsed(item["key"], any_value(item.get("value")))
    return out


def plain_attributes(items: Any) -> dict[str, Any]:
    """A plain ``{name: value}`` attribute dict (the SDK's ``to_json`` form), GenAI JSON
    text parsed; OTLP's list form is accepted too."""
    if isinstance(items, list):
        return attribute_map(items)
    if not isinstance(items, Mapping):
        return {}
    return {str(k): _parsed(str(k), v) for k, v in items.items()}


def _parsed(key: str, value: Any) -> Any:
    if key in STRUCTURED and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # left as text: the reader of the attribute says what is wrong
    return value


def hex_id(value: Any) -> str:
    """A trace or span id as lowercase hex: OTLP JSON's hex, protobuf JSON's base64 or
    the SDK's ``0x...`` form alike (``""`` when there is none)."""
    if not isinstance(value, str) or not value:
        return ""
    text = value[2:] if value.startswith("0x") else value
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value
