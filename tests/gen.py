"""Hypothesis strategies used by the test-suite to generate neutral replies."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from pytest_agentreplay.model import Reply, Text, Thinking, ToolCall, Usage

_IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=80,
)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_IDENT, inner, max_size=3),
    max_leaves=8,
)


def texts() -> st.SearchStrategy[Text]:
    return st.builds(Text, text=_TEXT)


def tool_calls() -> st.SearchStrategy[ToolCall]:
    return st.builds(
        ToolCall,
        name=_IDENT,
        args=st.dictionaries(_IDENT, json_values, max_size=4),
        id=st.none(),
    )


def thinkings() -> st.SearchStrategy[Thinking]:
    return st.builds(
        Thinking,
        text=_TEXT,
        signature=st.none() | st.from_regex(r"[A-Za-z0-9+/]{8,40}", fullmatch=True),
    )


def usages() -> st.SearchStrategy[Usage]:
    optional = st.none() | st.integers(0, 10**5)
    return st.builds(
        Usage,
        input_tokens=st.integers(0, 10**5),
        output_tokens=st.integers(0, 10**5),
        cache_creation_input_tokens=optional,
        cache_read_input_tokens=optional,
        reasoning_tokens=optional,
    )


def replies(*, thinking: bool = True, max_parts: int = 4) -> st.SearchStrategy[Reply]:
    """Replies in the canonical order providers produce: thinking, then text and
    tool calls (tool calls last, as every provider emits them)."""
    lead = st.lists(thinkings(), max_size=1) if thinking else st.just([])
    body = st.lists(texts(), max_size=2)
    calls = st.lists(tool_calls(), max_size=max_parts - 1)
    stops = st.none() | st.sampled_from(["end_turn", "max_tokens", "stop_sequence", "refusal"])
    return st.builds(
        lambda a, b, c, u, s: Reply(parts=[*a, *b, *c], usage=u, stop=s),
        lead,
        body,
        calls,
        st.none() | usages(),
        stops,
    )
