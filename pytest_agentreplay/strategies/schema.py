"""Tool-call arguments drawn from a tool's JSON schema, as pydantic-ai's ``TestModel``
makes them: every drawn value validates against the schema the agent sent.

Covers what tool schemas use (those pydantic, pydantic-ai, openai-agents and hand
written provider tool definitions produce): ``type`` (one or a list), ``properties``
/ ``required``, ``enum`` / ``const``, ``anyOf`` / ``oneOf`` / a one-item ``allOf``,
``$ref`` into ``$defs`` / ``definitions`` (recursive ones too), string lengths,
``pattern`` and the common ``format`` values, number bounds and ``multipleOf``, and
arrays (``items``, ``prefixItems``, ``minItems`` / ``maxItems``, ``uniqueItems``). A
keyword outside that set raises :class:`ValueError` naming it and where it is,
rather than drawing values the schema rejects. Values shrink toward the simplest
valid one: required properties only, the shortest strings, numbers nearest zero.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

__all__ = ["arguments_for"]

_ANNOTATIONS = frozenset(
    {
        "$schema", "$id", "$comment", "title", "description", "default", "examples",
        "deprecated", "readOnly", "writeOnly", "discriminator", "additionalProperties",
        "$defs", "definitions", "format",
    }
)  # fmt: skip
"""Keywords that never narrow what the generator draws (``additionalProperties`` is
honoured by drawing only declared properties; ``discriminator`` by the ``const`` of
each ``oneOf`` branch)."""

_HANDLED = frozenset(
    {
        "type", "properties", "required", "enum", "const", "anyOf", "oneOf", "allOf",
        "$ref", "minLength", "maxLength", "pattern", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "items", "prefixItems",
        "minItems", "maxItems", "uniqueItems",
    }
)  # fmt: skip

_TEXT = st.characters(codec="utf-8")
_FORMATS: dict[str, SearchStrategy[str]] = {
    "date-time": st.datetimes(timezones=st.just(dt.timezone.utc)).map(lambda d: d.isoformat()),
    "date": st.dates().map(lambda d: d.isoformat()),
    "time": st.times().map(lambda t: t.isoformat() + "Z"),
    "uuid": st.uuids().map(str),
    "email": st.emails(),
    "uri": st.from_regex(r"https://[a-z]{1,12}\.example/[a-z0-9]{0,8}", fullmatch=True),
}
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(_TEXT, max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)


class _Builder:
    """Turns one root schema into a strategy; ``$ref`` targets are built once each (a
    deferred strategy, so that a recursive model does not recurse here)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, SearchStrategy[Any]] = {}

    def build(self, schema: Any, where: str) -> SearchStrategy[Any]:
        if schema is True or schema == {}:
            return _JSON
        if schema is False:
            raise ValueError(f"tool schema at {where}: `false` admits no value")
        if not isinstance(schema, Mapping):
            raise ValueError(f"tool schema at {where}: expected an object, got {schema!r}")
        unknown = sorted(set(schema) - _HANDLED - _ANNOTATIONS)
        if unknown:
            raise ValueError(
                f"tool schema at {where}: keyword {unknown[0]!r} is not supported by "
                f"replies(tools=...); draw this tool's arguments yourself (Reply.tool_call "
                f"with a strategy of your own)"
            )
        return self._build_known(schema, where)

    def _build_known(self, schema: Mapping[str, Any], where: str) -> SearchStrategy[Any]:
        if "$ref" in schema:
            return self._ref(schema["$ref"], where)
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branches = schema[key]
                return st.one_of(
                    [self.build(b, f"{where}/{key}/{i}") for i, b in enumerate(branches)]
                )
        if "allOf" in schema:
            return self._all_of(schema, where)
        return self._typed(schema, where)

    def _ref(self, ref: str, where: str) -> SearchStrategy[Any]:
        if ref not in self.refs:
            target = self._resolve(ref, where)
            self.refs[ref] = st.deferred(lambda: self.build(target, ref))
        return self.refs[ref]

    def _resolve(self, ref: str, where: str) -> Any:
        node: Any = self.root
        if not ref.startswith("#"):
            raise ValueError(f"tool schema at {where}: only local $ref are supported, got {ref!r}")
        for part in filter(None, ref[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or key not in node:
                raise ValueError(f"tool schema at {where}: $ref {ref!r} points nowhere")
            node = node[key]
        return node

    def _all_of(self, schema: Mapping[str, Any], where: str) -> SearchStrategy[Any]:
        parts = schema["allOf"]
        rest = {k: v for k, v in schema.items() if k != "allOf" and k not in _ANNOTATIONS}
        if len(parts) != 1 or rest:
            raise ValueError(
                f"tool schema at {where}: 'allOf' is supported with one member only "
                f"(as pydantic writes a $ref with a description)"
            )
        return self.build(parts[0], f"{where}/allOf/0")

    def _typed(self, schema: Mapping[str, Any], where: str) -> SearchStrategy[Any]:
        kinds = schema.get("type", _infer_type(schema))
        if isinstance(kinds, list):
            return st.one_of([self._of_type(schema, k, where) for k in kinds])
        return self._of_type(schema, kinds, where)

    def _of_type(self, schema: Mapping[str, Any], kind: Any, where: str) -> SearchStrategy[Any]:
        makers: dict[str, Callable[[Mapping[str, Any], str], SearchStrategy[Any]]] = {
            "object": self._object,
            "array": self._array,
            "string": lambda s, _w: _string(s),
            "integer": _integer,
            "number": _number,
            "boolean": lambda _s, _w: st.booleans(),
            "null": lambda _s, _w: st.none(),
        }
        if kind is None:
            return _JSON
        if kind not in makers:
            raise ValueError(f"tool schema at {where}: unknown type {kind!r}")
        return makers[kind](schema, where)

    def _object(self, schema: Mapping[str, Any], where: str) -> SearchStrategy[Any]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = [k for k in schema.get("required", []) if k in properties]
        missing = [k for k in schema.get("required", []) if k not in properties]
        if missing:
            raise ValueError(
                f"tool schema at {where}: required property {missing[0]!r} has no schema "
                f"under 'properties'"
            )
        build = {k: self.build(v, f"{where}/properties/{k}") for k, v in properties.items()}
        extra = schema.get("additionalProperties")
        if not properties and isinstance(extra, Mapping):  # dict[str, X]: a free mapping
            values = self.build(extra, f"{where}/additionalProperties")
            return st.dictionaries(st.text(_TEXT, max_size=8), values, max_size=3)
        return st.fixed_dictionaries(
            {k: build[k] for k in required},
            optional={k: s for k, s in build.items() if k not in required},
        )

    def _array(self, schema: Mapping[str, Any], where: str) -> SearchStrategy[Any]:
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        prefix = [
            self.build(s, f"{where}/prefixItems/{i}")
            for i, s in enumerate(schema.get("prefixItems", []))
        ]
        items = schema.get("items", True)
        if prefix:
            if items is not False and low > len(prefix):
                raise ValueError(f"tool schema at {where}: minItems beyond prefixItems")
            return st.tuples(*prefix).map(list)
        element = self.build(items, f"{where}/items")
        high = low + 3 if high is None else min(high, low + 3)
        unique = bool(schema.get("uniqueItems"))
        key = _canonical if unique else None
        return st.lists(element, min_size=low, max_size=high, unique_by=key)


def _canonical(value: Any) -> str:
    """A key equal for JSON-equal values (``1`` and ``1.0``, dicts in any order)."""

    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        return {k: norm(x) for k, x in v.items()}

    return json.dumps(norm(value), sort_keys=True)


def _infer_type(schema: Mapping[str, Any]) -> str | None:
    """The type a schema without ``type`` implies by its keywords (``None``: any)."""
    if "properties" in schema or "required" in schema:
        return "object"
    if {"items", "prefixItems", "minItems", "maxItems"} & set(schema):
        return "array"
    if {"minLength", "maxLength", "pattern"} & set(schema):
        return "string"
    if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} & set(schema):
        return "number"
    return None


def _anchored_end(pattern: str) -> str:
    """``pattern`` with a final ``$`` made ``\\Z``: Python's ``$`` also matches before a
    final newline, which pydantic's (Rust) regex engine and most validators do not
    accept ("AAA-00\\n" for ``^[A-Z]{3}-\\d{2}$`` was drawn, and refused)."""
    body = pattern[:-1]
    if pattern.endswith("$") and (len(body) - len(body.rstrip("\\"))) % 2 == 0:
        return body + r"\Z"
    return pattern


def _string(schema: Mapping[str, Any]) -> SearchStrategy[str]:
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    fmt = schema.get("format")
    if "pattern" in schema:
        # JSON Schema patterns match anywhere (re.search), as from_regex draws them.
        base: SearchStrategy[str] = st.from_regex(_anchored_end(schema["pattern"]))
    elif fmt in _FORMATS:
        base = _FORMATS[fmt]
    else:
        return st.text(_TEXT, min_size=low, max_size=min(high or low + 20, low + 20))
    return base.filter(lambda s: len(s) >= low and (high is None or len(s) <= high))


def _int_bounds(schema: Mapping[str, Any], where: str) -> tuple[int | None, int | None]:
    """The inclusive whole-number bounds of a number schema, exclusive bounds folded in."""
    ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(ex_low, bool) or isinstance(ex_high, bool):
        raise ValueError(
            f"tool schema at {where}: boolean exclusiveMinimum/exclusiveMaximum (draft 4) "
            f"is not supported; use the number form"
        )
    lows = [math.ceil(schema["minimum"])] if schema.get("minimum") is not None else []
    highs = [math.floor(schema["maximum"])] if schema.get("maximum") is not None else []
    lows += [math.floor(ex_low) + 1] if ex_low is not None else []
    highs += [math.ceil(ex_high) - 1] if ex_high is not None else []
    return max(lows, default=None), min(highs, default=None)


def _integer(schema: Mapping[str, Any], where: str) -> SearchStrategy[int]:
    lo, hi = _int_bounds(schema, where)
    step = schema.get("multipleOf")
    if step is None:
        return st.integers(lo, hi)
    if not float(step).is_integer() or step <= 0:
        raise ValueError(
            f"tool schema at {where}: multipleOf {step!r} is not supported (a positive "
            f"whole number is)"
        )
    n = int(step)
    first = None if lo is None else -(-lo // n)
    return st.integers(first, None if hi is None else hi // n).map(lambda k: k * n)


def _number(schema: Mapping[str, Any], where: str) -> SearchStrategy[float] | SearchStrategy[int]:
    if schema.get("multipleOf") is not None:
        # A fractional step is left out: 3 * 0.1 is not a float multiple of 0.1, so
        # validators disagree on what is valid.
        return _integer(schema, where)
    _int_bounds(schema, where)  # the draft-4 check
    ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    return st.floats(
        min_value=ex_low if ex_low is not None else schema.get("minimum"),
        max_value=ex_high if ex_high is not None else schema.get("maximum"),
        exclude_min=ex_low is not None,
        exclude_max=ex_high is not None,
        allow_nan=False,
        allow_infinity=False,
    )


def arguments_for(schema: Mapping[str, Any]) -> SearchStrategy[dict[str, Any]]:
    """Tool-call arguments valid under ``schema`` (a JSON schema of type ``object``)."""
    if schema.get("type", "object") != "object":
        raise ValueError(
            f"a tool's parameters schema must be of type 'object', got {schema.get('type')!r}"
        )
    return _Builder(schema).build({"type": "object", **schema}, "#")


def _definition(tool: Any) -> tuple[str, Mapping[str, Any]] | None:
    """(name, parameters schema) of one tool definition in any form agents hand it to
    a provider or a framework: Anthropic's (``name``, ``input_schema``), OpenAI Chat's
    (``function.name``, ``function.parameters``), OpenAI Responses' (``name``,
    ``parameters``), a pydantic-ai ``Tool`` or ``ToolDefinition``, an openai-agents
    ``FunctionTool``."""
    if isinstance(tool, Mapping):
        inner = tool.get("function", tool)
        schema = inner.get("input_schema", inner.get("parameters"))
        name = inner.get("name")
    else:
        inner = getattr(tool, "tool_def", tool)
        name = getattr(inner, "name", None)
        schema = getattr(inner, "parameters_json_schema", None)
        schema = getattr(inner, "params_json_schema", schema)
    if isinstance(name, str) and isinstance(schema, Mapping):
        return name, schema
    return None


def tool_schemas(tools: Any) -> dict[str, Mapping[str, Any]]:
    """``tools`` (a mapping of tool name to parameters schema, or a sequence of tool
    definitions) as a mapping of name to schema; a clear error for anything else."""
    if isinstance(tools, Mapping) and _definition(tools) is None:
        found = dict(tools)
    elif isinstance(tools, (str, bytes)) or not hasattr(tools, "__iter__"):
        raise TypeError(
            f"tools= takes a mapping of tool name to JSON schema or a list of tool "
            f"definitions, got {type(tools).__name__}"
        )
    else:
        found = {}
        for i, tool in enumerate([tools] if isinstance(tools, Mapping) else tools):
            definition = _definition(tool)
            if definition is None:
                raise TypeError(
                    f"tools[{i}] is not a tool definition: expected a provider tool dict "
                    f"(name and input_schema or parameters), a pydantic-ai Tool or an "
                    f"openai-agents FunctionTool, got {tool!r:.80}"
                )
            found[definition[0]] = definition[1]
    if not found:
        raise ValueError("tools= is empty: give at least one tool")
    for name, schema in found.items():
        if not isinstance(schema, Mapping):
            raise TypeError(f"tools[{name!r}]: the schema must be a dict, got {schema!r:.80}")
    return found
