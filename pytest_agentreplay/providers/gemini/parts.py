"""Gemini parts, read alike in a request's turns and in an answer's candidates.

Google's JSON accepts each field in camelCase or snake_case (:func:`pick`); a
``thoughtSignature`` on a part that is not a thought stands for the thinking before it
(:func:`neutral_parts`); a ``functionCall`` is a :class:`~...neutral.ToolCall`
(:func:`tool_call`). Errors name the field path, as every request parser's do
(:mod:`..validation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ...neutral import Text, Thinking, ToolCall
from ..validation import Fields, join

__all__ = ["check", "neutral_parts", "pick", "signature_of", "text_or_call", "tool_call"]

P = TypeVar("P")

check = Fields("gemini")
"""The field checks of Gemini bodies."""


def pick(obj: Mapping[str, Any], camel: str) -> Any:
    """``obj[camel]``, or its snake_case spelling (``functionCall`` / ``function_call``)."""
    if camel in obj:
        return obj[camel]
    return obj.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def signature_of(part: Mapping[str, Any], path: str) -> str | None:
    """A part's ``thoughtSignature``, in standard base64: Google reads base64url and
    base64 alike, and google-genai sends back in base64url what it got in base64."""
    value = pick(part, "thoughtSignature")
    if value is None:
        return None
    return check.text(value, f"{path}.thoughtSignature").replace("-", "+").replace("_", "/")


def neutral_parts(
    parts: list[Any],
    path: str,
    convert: Callable[[Mapping[str, Any], str], P | None],
    thinking: Callable[..., P],
) -> list[P]:
    """``parts`` in neutral form, each through ``convert`` (``None``: left out).

    A ``thoughtSignature`` on a part that is not a thought seals the thinking before
    it: it becomes the signature of the :class:`Thinking` just before, when that has
    none, else a :class:`Thinking` with no text (thinking the model did not show)."""
    out: list[P] = []
    for i, raw in enumerate(parts):
        part = check.obj(raw, join(path, i))
        signature = signature_of(part, join(path, i))
        if signature is not None and not part.get("thought"):
            last = out[-1] if out else None
            if isinstance(last, Thinking) and last.signature is None:
                out[-1] = last.model_copy(update={"signature": signature})
            else:
                out.append(thinking(text="", signature=signature))
        converted = convert(part, join(path, i))
        if converted is not None:
            out.append(converted)
    return out


def tool_call(call: Any, path: str) -> ToolCall:
    """A ``functionCall`` (name, ``args`` object, optional ``id``)."""
    call = check.obj(call, path)
    name = check.name(call.get("name"), f"{path}.name")
    args = call.get("args")
    args = {} if args is None else check.obj(args, f"{path}.args")
    return ToolCall(name=name, args=dict(args), id=check.optional_key(call, "id", path))


def text_or_call(
    part: Mapping[str, Any], text: str | None, path: str
) -> Text | Thinking | ToolCall | None:
    """The kinds of part an answer and a request turn share: ``text`` (read by the
    caller: a request is checked strictly, an answer is not) as a thought or a text, else
    a ``functionCall``; ``None`` for any other kind."""
    if text is not None:
        if part.get("thought"):
            return Thinking(text=text, signature=signature_of(part, path))
        return Text(text=text)
    call = pick(part, "functionCall")
    return tool_call(call, f"{path}.functionCall") if call is not None else None
