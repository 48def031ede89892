"""The checks of ``agentreplay lint`` on each interaction: content type, SSE framing,
event names, the terminal ``[DONE]``, folding, interrupted recordings.

Each check looks at one :class:`~.analysis.View` (an interaction with its provider,
events and folded body) and adds what it finds to the file's
:class:`~.lint_checks.LintContext`; :func:`check_interactions` runs them all.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import sse
from ..cassettes.cassette import RecordedEvent
from ..cassettes.fields import looks_like_sse
from ..providers.catalog import CATALOG, ProviderFacts
from .analysis import View, event_label, views
from .lint_checks import LintContext

__all__ = ["check_interactions"]


def _tail_label(tail: str) -> str:
    decoded = sse.decode(tail + "\n\n").events
    if not decoded:
        return "an unterminated line"
    return f"a '{event_label(RecordedEvent.from_sse(decoded[-1]))}' event"


def _check_tail(ctx: LintContext, item: View) -> None:
    response = item.response
    if response.end != "complete" or (response.tail is None and not response.truncated):
        return
    what = _tail_label(response.tail) if response.tail is not None else "its last event"
    ctx.add(
        "sse-tail",
        f"the stream ends with {what} that no blank line closes: both SDKs drop it "
        "(append an empty line)",
        item.index,
        "response",
        "tail" if response.tail is not None else "events",
    )


# A stream's terminator ends it whatever the provider (OpenRouter ends Responses
# streams with Chat's [DONE]): it is no event a name is missing from.
_ENDS = frozenset(e.terminator for e in CATALOG.values() if e.terminator is not None)


def _facts(item: View) -> ProviderFacts | None:
    """What the catalog says about the interaction's provider, if it has one."""
    return CATALOG.get(item.provider) if item.provider is not None else None


def _names_needed(item: View) -> str | None:
    """Why the provider's events need their names (``None``: they need none)."""
    facts = _facts(item)
    return None if facts is None else facts.named_events


def _unnamed(item: View) -> list[int]:
    """Indexes of the events a provider that dispatches on names would not see."""
    if _names_needed(item) is None:
        return []
    events = item.response.events or []
    return [n for n, e in enumerate(events) if e.event is None and e.data.strip() not in _ENDS]


def _check_event_names(ctx: LintContext, item: View) -> None:
    unnamed = _unnamed(item)
    if not unnamed:
        return
    reason = _names_needed(item)
    events = item.response.events or []
    ctx.add(
        "sse-event-name",
        f"{len(unnamed)} of {len(events)} events have no 'event:' name (first: event "
        f"#{unnamed[0]}); {reason}",
        item.index,
        "response",
        "events",
        unnamed[0],
    )


def _check_done(ctx: LintContext, item: View) -> None:
    response = item.response
    events = response.events or []
    facts = _facts(item)
    terminator = None if facts is None else facts.terminator
    if facts is None or terminator is None or response.end != "complete" or response.tail:
        return
    if item.folded is not None and item.folded.error is not None:
        return  # an error stream ends with its error event
    if events and events[-1].data.strip() == terminator:
        return
    ctx.add(
        "sse-done",
        f"the stream does not end with 'data: {terminator}', which {facts.title} "
        "always sends last (clients wait for it)",
        item.index,
        "response",
        "events",
    )


def _check_content_type(ctx: LintContext, item: View) -> None:
    response = item.response
    ctype = item.content_type.lower()
    if item.streaming and "text/event-stream" not in ctype:
        shown = item.content_type or "none"
        ctx.add(
            "content-type",
            f"an event stream served as content-type {shown!r}: SSE clients "
            "(httpx-sse, the SDKs) need text/event-stream",
            item.index,
            "response",
            "headers",
            "content-type",
        )
    elif response.body is not None and looks_like_sse(response.body.encode("utf-8")):
        ctx.add(
            "content-type",
            f"the body is an event stream but its content-type is {item.content_type!r}, "
            "so it is stored as text instead of events",
            item.index,
            "response",
            "headers",
            "content-type",
        )


def _check_fold(ctx: LintContext, item: View) -> None:
    response = item.response
    if item.fold_problem is not None and not _unnamed(item):  # else: sse-event-name says it
        ctx.add(
            "fold",
            f"does not fold with the {item.provider} codec: {item.fold_problem}",
            item.index,
            "response",
            "events",
        )
        return
    folded = item.folded
    quiet = response.end != "complete" or response.tail is not None or response.truncated
    if folded is None or folded.complete or folded.error is not None or quiet:
        return
    facts = _facts(item)
    if facts is not None and facts.terminator is not None:
        return  # its terminal event is the terminator: the sse-done check reports it
    ctx.add(
        "fold",
        f"the stream never reaches the {item.provider} terminal event: the stored "
        "response is incomplete",
        item.index,
        "response",
        "events",
    )


def _check_incomplete(ctx: LintContext, item: View) -> None:
    if item.response.end == "incomplete":
        ctx.add(
            "incomplete",
            "recorded while the run was interrupted: replay refuses it unless "
            "allow_incomplete=True; re-record it",
            item.index,
            "response",
            "end",
        )


_STREAM_CHECKS: tuple[Callable[[LintContext, View], None], ...] = (
    _check_tail,
    _check_event_names,
    _check_done,
    _check_fold,
    _check_incomplete,
)


def check_interactions(ctx: LintContext) -> None:
    """Every check of every interaction of the file (the stream checks on streams)."""
    for item in views(ctx.source.cassette, strict=True):
        _check_content_type(ctx, item)
        if item.streaming:
            for check in _STREAM_CHECKS:
                check(ctx, item)
