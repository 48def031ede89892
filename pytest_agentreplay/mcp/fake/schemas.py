"""JSON Schema checks for scripted tools: the schemas themselves, arguments and results.

The protocol's schemas are JSON Schema (2020-12 unless ``$schema`` says otherwise).
``jsonschema`` comes with the ``mcp`` SDK; it is imported when a fake tool is built,
never by the plugin at start-up. Every problem names its field as a JSON path
(``$.city``), so a message says which argument or which part of a result is wrong.
"""

from __future__ import annotations

from typing import Any

from .errors import ToolScriptError

__all__ = ["check_schema", "schema_problems"]


def _validator_for(schema: dict[str, Any]) -> Any:
    try:
        import jsonschema  # noqa: PLC0415 - imported when a fake tool is built
    except ImportError as exc:  # pragma: no cover - the mcp SDK depends on it
        raise ToolScriptError(
            "fake tool servers check JSON schemas with the jsonschema package (installed "
            "with the mcp SDK): install mcp"
        ) from exc
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def _path(parts: Any) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def check_schema(tool: str, field: str, schema: Any) -> dict[str, Any]:
    """``schema`` if it is a JSON Schema object of type ``object`` (what the protocol
    requires of ``inputSchema`` and ``outputSchema``), else :class:`ToolScriptError`
    naming the tool, the field and the part of the schema that is wrong."""
    if not isinstance(schema, dict):
        raise ToolScriptError(
            f"tool {tool!r}: {field} must be a JSON Schema object (a dict), got {schema!r}"
        )
    if schema.get("type") != "object":
        raise ToolScriptError(
            f'tool {tool!r}: {field} must have "type": "object" (MCP tools take and '
            f"give JSON objects), got type {schema.get('type')!r}"
        )
    import jsonschema  # noqa: PLC0415 - imported when a fake tool is built

    try:
        _validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ToolScriptError(
            f"tool {tool!r}: {field} is not a valid JSON Schema at "
            f"{_path(exc.absolute_path)}: {exc.message}"
        ) from None
    return schema


def schema_problems(value: Any, schema: dict[str, Any]) -> list[str]:
    """What is wrong with ``value`` under ``schema``, one line a problem naming its
    field (``$.city: 3 is not of type 'string'``), in the order of the fields."""
    validator = _validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{_path(e.absolute_path)}: {e.message}" for e in errors]
