"""The ``Reply`` / ``Fault`` vocabulary as JSON, for the control API of ``agentreplay serve``.

A test in another language scripts the fake with the words a Python test uses:

- a script item is a string (``Reply.text``), or an object: ``{"text": "Hi"}``
  (``Reply.text``), ``{"tool_call": {"name": "weather", "args": {...}}}``
  (``Reply.tool_call``), ``{"parts": [{"kind": "text", "text": "Hi"}, ...]}``
  (``Reply(parts=...)``), each with ``usage``, ``stop``, ``model``, ``fault``,
  ``event_fields`` as :class:`~..model.Reply` has them; ``{"fault": {...}}`` alone
  is a call that only fails;
- a fault is ``{"kind": "cut", "after_events": 2}``: ``kind`` names the class method
  of :class:`~..model.Fault` (``http``, ``cut``, ``error_event``, ``stall``,
  ``timeout``, ``empty``, ``truncate``) and the other fields are its arguments.

Everything is checked before anything is changed: a body that is no JSON, a field no
word has (``after_event``), a value of the wrong type, is a
:class:`~..errors.ControlRequestError` naming the field and what to send, which the
control API answers with a ``400``.
"""

from __future__ import annotations

import difflib
import inspect
import json
from collections.abc import Mapping
from typing import Any, get_args

from pydantic import ValidationError

from ..neutral import Citation, Fault, Reply, Text, Thinking, ToolCall, Usage
from ..neutral.replies import FaultKind
from .errors import ControlRequestError

__all__ = ["fault_of", "parse_body", "reply_of", "take_options"]

FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
_REPLY_FIELDS = tuple(Reply.model_fields)
_SHORTHANDS = ("text", "tool_call")
_MODEL_FIELDS = sorted(
    {name for model in (Usage, Text, ToolCall, Thinking, Citation) for name in model.model_fields}
)


def parse_body(content: bytes) -> dict[str, Any]:
    """A control request's body: a JSON object (an empty body is ``{}``)."""
    if not content.strip():
        return {}
    try:
        body = json.loads(content)
    except UnicodeDecodeError:
        raise ControlRequestError("the body is not UTF-8 text: send a JSON object") from None
    except json.JSONDecodeError as exc:
        raise ControlRequestError(
            f"the body is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; "
            'send a JSON object, such as {"replies": ["Hello"]}'
        ) from None
    if not isinstance(body, dict):
        raise ControlRequestError(
            f"the body must be a JSON object, got {_kind(body)}: wrap it, such as "
            '{"replies": [...]}'
        )
    return body


def take_options(
    body: Mapping[str, Any], allowed: Mapping[str, type | tuple[type, ...]]
) -> dict[str, Any]:
    """``body``'s fields, each one of ``allowed`` and of its type (``None`` is allowed
    for every field: it means the default)."""
    _no_unknown(body, tuple(allowed), "")
    out: dict[str, Any] = {}
    for name, value in body.items():
        wanted = allowed[name]
        if value is not None and (
            isinstance(value, bool) is not (wanted is bool) or not isinstance(value, wanted)
        ):
            raise ControlRequestError(
                f"{name}: expected {_type_name(wanted)}, got {_kind(value)}", field=name
            )
        out[name] = value
    return out


def reply_of(item: Any, where: str) -> Reply:
    """A script item at ``where`` (``replies[2]``) as the reply it means."""
    if isinstance(item, str):
        return Reply.text(item)
    if not isinstance(item, dict):
        raise ControlRequestError(
            f"{where}: a script item is a string or an object, got {_kind(item)}", field=where
        )
    _no_unknown(item, (*_SHORTHANDS, *_REPLY_FIELDS), where)
    given = [name for name in (*_SHORTHANDS, "parts") if name in item]
    if len(given) > 1:
        raise ControlRequestError(
            f"{where}: give one of text, tool_call and parts, not {' and '.join(given)}",
            field=where,
        )
    fields = dict(item)
    if "text" in fields:
        fields["parts"] = [{"kind": "text", "text": fields.pop("text")}]
    elif "tool_call" in fields:
        call = fields.pop("tool_call")
        if not isinstance(call, dict):
            raise ControlRequestError(
                f"{where}.tool_call: expected an object with name and args, got {_kind(call)}",
                field=f"{where}.tool_call",
            )
        fields["parts"] = [{"kind": "tool_call", **call}]
    if fields.get("fault") is not None:
        fields["fault"] = fault_of(fields["fault"], f"{where}.fault")
    try:
        return Reply.model_validate(fields)
    except ValidationError as exc:
        shorthand = next((name for name in _SHORTHANDS if name in item), None)
        raise _invalid(exc, where, shorthand=shorthand) from None


def fault_of(value: Any, where: str) -> Fault:
    """A fault at ``where``: ``{"kind": ..., ...}``, built by the class method of its kind."""
    if not isinstance(value, dict):
        raise ControlRequestError(
            f'{where}: a fault is an object such as {{"kind": "cut", "after_events": 2}}, '
            f"got {_kind(value)}",
            field=where,
        )
    kind = value.get("kind")
    if kind not in FAULT_KINDS:
        got = "no kind" if kind is None else f"kind {kind!r}"
        raise ControlRequestError(
            f"{where}.kind: {got}; a fault's kind is one of {', '.join(FAULT_KINDS)}",
            field=f"{where}.kind",
        )
    build = getattr(Fault, kind)
    takes = [n for n in inspect.signature(build).parameters if n != "cls"]
    _no_unknown(value, ("kind", *takes), where, what=f"Fault.{kind}")
    arguments = {k: v for k, v in value.items() if k != "kind"}
    try:
        Fault.model_validate(value, strict=True)  # each field's type, named, first
        fault: Fault = build(**arguments)
    except ValidationError as exc:
        raise _invalid(exc, where) from None
    except (TypeError, ValueError) as exc:
        raise ControlRequestError(f"{where}: {exc}", field=where) from None
    return fault


def _no_unknown(
    item: Mapping[str, Any], known: tuple[str, ...], where: str, what: str | None = None
) -> None:
    """A field no word has fails, named with its place and the closest known name."""
    for name in item:
        if name in known:
            continue
        field = f"{where}.{name}" if where else name
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        owner = f"{what} takes" if what else "known fields are"
        raise ControlRequestError(
            f"{field}: unknown field; {hint}{owner} {', '.join(known)}", field=field
        )


def _invalid(
    exc: ValidationError, where: str, *, shorthand: str | None = None
) -> ControlRequestError:
    """The first problem pydantic found (an unknown field first), at its place in the
    request as the client wrote it."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    error = errors[0]
    loc = _as_written([str(p) for p in error["loc"]], shorthand)
    field = where + "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc)
    if error["type"] == "extra_forbidden":
        close = difflib.get_close_matches(loc[-1], _MODEL_FIELDS, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return ControlRequestError(f"{field}: unknown field{hint}", field=field)
    return ControlRequestError(f"{field}: {error['msg']}", field=field)


def _as_written(loc: list[str], shorthand: str | None) -> list[str]:
    """pydantic's place of a problem without the union's tag (``parts.0.text.text`` is
    ``parts[0].text``), and inside a shorthand as written (``text``, ``tool_call.name``)."""
    if len(loc) >= 3 and loc[0] == "parts" and loc[1].isdigit():
        loc = [*loc[:2], *loc[3:]]  # loc[2] is the part's kind, pydantic's tag
        if shorthand == "text" and loc[1] == "0":
            return ["text"]
        if shorthand == "tool_call" and loc[1] == "0":
            return ["tool_call", *loc[2:]]
    return loc


def _kind(value: Any) -> str:
    """The JSON type of ``value``, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _type_name(wanted: type | tuple[type, ...]) -> str:
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }
    kinds = wanted if isinstance(wanted, tuple) else (wanted,)
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))
