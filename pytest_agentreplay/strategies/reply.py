"""Strategies for model replies and the JSON arguments of their tool calls."""

from __future__ import annotations

from typing import Any, get_args

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy

from ..neutral import Reply, StopReason, Text, Thinking, ToolCall, Usage
from .profile import register_profiles
from .schema import arguments_for, tool_schemas

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
    tools: Any = None,
    min_tool_calls: int = 0,
) -> SearchStrategy[Reply]:
    """Model replies, in the neutral form every provider's codec renders.

    A reply is either plain text (``Reply.text(...)``) or built part by part, in
    the order providers send them: optional ``Thinking``, text, and — when
    ``tool_calls`` — up to ``max_tool_calls`` tool calls with JSON-object
    arguments (ids left for the fake to generate), with optional ``Usage`` and
    stop reason. Text comes from
    ``text`` (default: 1 to 40 characters of any Unicode text UTF-8 can carry).
    Every reply has content: an empty answer is a fault (``Fault.empty()``).

    ``tools`` makes the tool calls those of the agent's tools, as pydantic-ai's
    ``TestModel`` does: a tool named in ``tools`` with arguments valid under its
    JSON schema (see :mod:`.schema` for the keywords understood). It takes a mapping
    of tool name to parameters schema, or a list of tool definitions: the dicts an
    agent sends to Anthropic or OpenAI, pydantic-ai ``Tool`` objects, openai-agents
    ``FunctionTool`` objects. ``min_tool_calls=1`` makes every reply call a tool —
    the first reply of a "tool call, then text" conversation (see
    :func:`~.plans.fault_plans`).

    Shrinks toward a short plain-text reply: the plain branch first, then the
    fewest parts, no usage, no stop, the shortest text; a tool call toward the
    first tool and its simplest valid arguments.
    """
    if not 0 <= min_tool_calls <= max_tool_calls:
        raise ValueError(
            f"need 0 <= min_tool_calls <= max_tool_calls, got {min_tool_calls}, {max_tool_calls}"
        )
    if (tools is not None or min_tool_calls) and not tool_calls:
        raise ValueError("tools= and min_tool_calls= need tool_calls=True")
    texts = _TEXT if text is None else text
    plain = st.builds(Reply.text, texts)
    if not (tool_calls or thinking or usage or stop):
        return plain
    # Strategies are built once here, not in every draw: building a recursive
    # strategy is costly, and hypothesis caches what it can per strategy object.
    one_call = _tool_call(tools)
    calls = (
        st.lists(one_call, min_size=min_tool_calls, max_size=max_tool_calls)
        if tool_calls
        else _NO_CALLS
    )
    rich = _rich_replies(texts=texts, calls=calls, thinking=thinking, usage=usage, stop=stop)
    return rich if min_tool_calls else plain | rich


def _tool_call(tools: Any) -> SearchStrategy[ToolCall]:
    """One tool call: of any name with any JSON-object arguments, or of one of
    ``tools`` with arguments its schema accepts."""
    if tools is None:
        return st.builds(ToolCall, name=_TOOL_NAMES, args=json_objects())
    return st.one_of(
        [
            st.builds(ToolCall, name=st.just(name), args=arguments_for(schema))
            for name, schema in tool_schemas(tools).items()
        ]
    )
