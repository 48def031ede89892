"""What a scripted tool answers, as the ``CallToolResult`` JSON an MCP server sends.

A script item is a value, a ready ``CallToolResult`` (of the ``mcp`` SDK's types), a
:class:`~.faults.ToolFault`, or a function of the call's arguments (sync or async)
returning one of those. A value becomes a result as the SDK's own servers make one: a
string is one text block; any other JSON value is its JSON text, and an object is the
``structuredContent`` too. A tool with an ``output_schema`` must answer with an object
that the schema accepts, as the protocol requires.

Every check names the tool, the script item and the field (``$.forecast.days[2]``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .errors import ToolScriptError
from .faults import ToolFault
from .schemas import schema_problems

__all__ = ["Answer", "ToolResultItem", "as_result", "not_json", "tool_error_result"]

ToolResultItem = Any
"""A scripted answer: a value, an ``mcp.types.CallToolResult``, a :class:`ToolFault`, or
a function of the arguments (``dict``) returning one (sync or async)."""

Answer = Callable[[dict[str, Any]], "Any | Awaitable[Any]"]
"""A function answering a call from its arguments."""


def not_json(value: Any, path: str = "$") -> str | None:
    """The first place in ``value`` that JSON cannot hold (``$.when is a datetime``),
    or ``None``."""
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} is {value!r}, which JSON cannot hold"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has the key {key!r}, not a string"
            found = not_json(item, f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = not_json(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    return f"{path} is a {type(value).__name__}, not a JSON value"


def _sdk_result(value: Any) -> dict[str, Any] | None:
    """``value`` dumped as wire JSON, if it is an ``mcp`` SDK ``CallToolResult``."""
    if type(value).__name__ != "CallToolResult" or not hasattr(value, "model_dump"):
        return None
    dumped: dict[str, Any] = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


def as_result(
    tool: str, item: Any, where: str, output_schema: dict[str, Any] | None
) -> dict[str, Any]:
    """``item`` as a ``CallToolResult`` JSON object; :class:`ToolScriptError` naming
    ``tool``, ``where`` (``result #2``) and the field when it cannot be one."""
    sdk = _sdk_result(item)
    if sdk is not None:
        return sdk
    if isinstance(item, ToolFault):
        raise ToolScriptError(f"tool {tool!r}, {where}: a fault is not a result")  # caller's bug
    if isinstance(item, str) and output_schema is None:
        return {"content": [{"type": "text", "text": item}], "isError": False}
    problem = not_json(item)
    if problem is not None:
        raise ToolScriptError(
            f"tool {tool!r}, {where}: {problem}; script a JSON value, a string, or an "
            f"mcp.types.CallToolResult"
        )
    if output_schema is not None:
        _check_structured(tool, item, where, output_schema)
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": json.dumps(item, ensure_ascii=False)}],
        "isError": False,
    }
    if isinstance(item, dict):
        result["structuredContent"] = item
    return result


def _check_structured(tool: str, item: Any, where: str, output_schema: dict[str, Any]) -> None:
    """A tool with an output schema answers with an object that the schema accepts."""
    if not isinstance(item, dict):
        raise ToolScriptError(
            f"tool {tool!r}, {where}: the tool has an output_schema, so its result must be "
            f"a JSON object (its structuredContent), got {type(item).__name__} {item!r}"
        )
    problems = schema_problems(item, output_schema)
    if problems:
        raise ToolScriptError(
            f"tool {tool!r}, {where}: the result does not match the tool's output_schema: "
            + "; ".join(problems)
        )


def tool_error_result(message: str) -> dict[str, Any]:
    """The ``isError`` result of a :meth:`ToolFault.tool_error`."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
