"""Hypothesis strategies used by the test-suite to generate neutral replies."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from pytest_agentreplay.neutral import (
    Citation,
    Reply,
    SearchResult,
    ServerToolCall,
    Text,
    Thinking,
    ToolCall,
    Usage,
)

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


# -- provider-side tools and citations ---------------------------------------------------

_URLS = st.from_regex(r"https://[a-z]{1,8}\.example/[a-z0-9/]{0,12}", fullmatch=True)
_SHORT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)


@st.composite
def citations_for(draw: st.DrawFn, text: str) -> list[Citation]:
    """Citations of ``text``: some of the whole text, some of a span inside it."""
    out = []
    for _ in range(draw(st.integers(0, 2))):
        span: dict[str, int] = {}
        if text and draw(st.booleans()):
            start = draw(st.integers(0, len(text)))
            span = {"start": start, "end": draw(st.integers(start, len(text)))}
        out.append(Citation(url=draw(_URLS), title=draw(_SHORT), cited_text=draw(_SHORT), **span))
    return out


@st.composite
def cited_texts(draw: st.DrawFn) -> Text:
    text = draw(_TEXT)
    return Text(text=text, citations=draw(citations_for(text)))


def search_results() -> st.SearchStrategy[SearchResult]:
    return st.builds(
        SearchResult, url=_URLS, title=_SHORT, page_age=st.none() | st.just("2 hours ago")
    )


def server_tool_calls(
    names: tuple[str, ...] = ("web_search", "code_execution"),
) -> st.SearchStrategy[ServerToolCall]:
    """Provider-side tool calls: searches with results, code runs with output, and
    failed ones (an error code, no result); ids left for the codec, or given."""
    ids = st.none() | st.from_regex(r"srvtoolu_[A-Za-z0-9]{8}", fullmatch=True)
    # Each tool has its own error codes (the SDKs type them as literals).
    search_errors = st.none() | st.sampled_from(["max_uses_exceeded", "unavailable"])
    code_errors = st.none() | st.sampled_from(["execution_time_exceeded", "unavailable"])
    search = st.builds(
        lambda q, r, i, e: ServerToolCall.web_search(q, [] if e else r, id=i, error=e),
        _TEXT,
        st.lists(search_results(), max_size=3),
        ids,
        search_errors,
    )
    code = st.builds(
        lambda c, out, err, rc, i, e: ServerToolCall.code_execution(
            c, stdout=out, stderr=err, return_code=rc, id=i, error=e
        ),
        _TEXT,
        _SHORT,
        _SHORT,
        st.integers(0, 2),
        ids,
        code_errors,
    )
    chosen = [s for n, s in (("web_search", search), ("code_execution", code)) if n in names]
    return st.one_of(*chosen)


def server_tool_replies(
    names: tuple[str, ...] = ("web_search", "code_execution"),
) -> st.SearchStrategy[Reply]:
    """Replies that search (or run code) on the provider's side, then answer with cited
    text and perhaps a tool call of the agent's: the shape of a real web-search turn."""
    body = st.lists(
        st.one_of(server_tool_calls(names), cited_texts(), texts()), min_size=1, max_size=5
    )
    return st.builds(
        lambda lead, parts, calls, u: Reply(parts=_own_ids([*lead, *parts, *calls]), usage=u),
        st.lists(thinkings(), max_size=1),
        body,
        st.lists(tool_calls(), max_size=1),
        st.none() | usages(),
    )


def _own_ids(parts: list[Any]) -> list[Any]:
    """``parts`` with the ids of provider-side tool calls made distinct (a reply may
    not share one: its result block would answer the wrong call)."""
    return [
        p.model_copy(update={"id": f"{p.id}{i}"}) if isinstance(p, ServerToolCall) and p.id else p
        for i, p in enumerate(parts)
    ]
