"""Strategies for model replies and the JSON arguments of their tool calls."""

from __future__ import annotations

from typing import Any, get_args

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy

from ..model import Reply, StopReason, Text, Thinking, ToolCall, Usage
from .profile import register_profiles

__all__ = ["json_objects", "replies"]

_STOPS: tuple[StopReason, ...] = get_args(StopReason)
_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=40)
_KEYS = st.text(st.characters(codec="utf-8"), max_size=8)
_TOOL_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)

register_profiles()


def json_objects(*, max_leaves: int = 6) -> SearchStrategy[dict[str, Any]]:
    """JSON objects, as tool-call arguments are: nested objects and arrays of
    null, booleans, integers (within ±2**53), finite floats and text. Shrinks
    toward ``{}``."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**53), 2**53)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(st.characters(codec="utf-8"), max_size=12)
    )
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
        max_leaves=max_leaves,
    )
    return st.dictionaries(_KEYS, values, max_size=3)


_USAGES = st.none() | st.builds(
    Usage, input_tokens=st.integers(0, 200_000), output_tokens=st.integers(0, 64_000)
)
_STOP_REASONS = st.none() | st.sampled_from(_STOPS)
_NO_CALLS: SearchStrategy[list[ToolCall]] = st.just([])


@st.composite
def _rich_replies(
    draw: DrawFn,
    *,
    texts: SearchStrategy[str],
    calls: SearchStrategy[list[ToolCall]],
    thinking: bool,
    usage: bool,
    stop: bool,
) -> Reply:
    parts: list[Text | ToolCall | Thinking] = []
    if thinking and draw(st.booleans()):
        parts.append(Thinking(text=draw(texts)))
    text = [Text(text=draw(texts))] if draw(st.booleans()) else []
    called = draw(calls)
    parts.extend(text or ([] if called else [Text(text=draw(texts))]))
    parts.extend(called)
    return Reply(
        parts=parts,
        usage=draw(_USAGES) if usage else None,
        stop=draw(_STOP_REASONS) if stop else None,
    )


def replies(
    *,
    text: SearchStrategy[str] | None = None,
    tool_calls: bool = True,
    thinking: bool = True,
    usage: bool = True,
    stop: bool = True,
    max_tool_calls: int = 2,
) -> SearchStrategy[Reply]:
    """Model replies, in the neutral form every provider's codec renders.

    A reply is either plain text (``Reply.text(...)``) or built part by part, in
    the order providers send them: optional ``Thinking``, text, and — when
    ``tool_calls`` — up to ``max_tool_calls`` tool calls with JSON-object
    arguments (ids left for the fake to generate), with optional ``Usage`` and
    stop reason. Text comes from
    ``text`` (default: 1 to 40 characters of any Unicode text UTF-8 can carry).
    Every reply has content: an empty answer is a fault (``Fault.empty()``).

    Shrinks toward a short plain-text reply: the plain branch first, then the
    fewest parts, no usage, no stop, the shortest text.
    """
    texts = _TEXT if text is None else text
    plain = st.builds(Reply.text, texts)
    if not (tool_calls or thinking or usage or stop):
        return plain
    # Strategies are built once here, not in every draw: building a recursive
    # strategy is costly, and hypothesis caches what it can per strategy object.
    one_call = st.builds(ToolCall, name=_TOOL_NAMES, args=json_objects())
    calls = st.lists(one_call, max_size=max_tool_calls) if tool_calls else _NO_CALLS
    rich = _rich_replies(texts=texts, calls=calls, thinking=thinking, usage=usage, stop=stop)
    return plain | rich
