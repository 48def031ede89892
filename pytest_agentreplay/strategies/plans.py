"""Strategies for faults and fault plans (which calls of a run fail, and how)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy

from ..neutral import Fault, FaultKind, FaultPlan, Reply
from .profile import register_profiles
from .reply import replies as _replies

__all__ = ["DEFAULT_FAULT_KINDS", "DEFAULT_STATUSES", "fault_plans", "faults"]

DEFAULT_FAULT_KINDS: tuple[FaultKind, ...] = ("http", "cut", "timeout", "error_event", "empty")
"""The kinds :func:`faults` draws by default, simplest first. ``stall`` is left out:
a stalled call holds until the test releases it, which a generic property cannot do."""

DEFAULT_STATUSES: tuple[int, ...] = (500, 429, 529, 503, 401, 400)
"""The HTTP statuses :func:`faults` draws by default, the one shrunk to first."""

register_profiles()


@st.composite
def _faults(
    draw: DrawFn,
    *,
    kinds: tuple[FaultKind, ...],
    statuses: tuple[int, ...],
    max_after: int,
    retry_after: tuple[float | None, ...],
) -> Fault:
    # Every fault is exactly three choices: its kind and two parameters. Equal
    # lengths make the shrinker order faults by kind first, as ``kinds`` lists them
    # (a kind with fewer choices would count as simpler); few choices let it delete
    # a fault from a plan in one step (it deletes short runs of choices best).
    kind = draw(st.sampled_from(kinds))
    if kind == "http":
        status = draw(st.sampled_from(statuses))
        return Fault.http(status, retry_after=draw(st.sampled_from(retry_after)))
    after = draw(st.integers(0, max_after))
    flag = draw(st.booleans())
    if kind == "timeout":
        return Fault.timeout(after if flag else None)
    if kind == "empty":
        return Fault.empty()
    if kind == "error_event":
        return Fault.error_event(after_events=after)
    if kind == "truncate":
        return Fault.truncate(after)
    return Fault.stall(after) if kind == "stall" else Fault.cut(after)


def faults(
    *,
    kinds: Sequence[FaultKind] = DEFAULT_FAULT_KINDS,
    statuses: Sequence[int] = DEFAULT_STATUSES,
    max_after_events: int = 12,
    retry_after: Sequence[float | None] = (None, 0.01),
) -> SearchStrategy[Fault]:
    """Single faults of the given ``kinds``: ``Fault.http`` with a status from
    ``statuses`` (and a ``retry_after`` from ``retry_after``), ``Fault.cut``,
    ``Fault.error_event``, ``Fault.stall`` and ``Fault.truncate`` after 0 to
    ``max_after_events`` events, ``Fault.timeout`` before the response or after some events, and
    ``Fault.empty``. Errors, message and type are the provider's own defaults.

    Shrinks toward the first kind in ``kinds`` (order them simplest first), the
    first status, no retry-after, and the fewest events before the fault.
    """
    unknown = [k for k in kinds if k not in get_args(FaultKind)]
    if not kinds or unknown:
        raise ValueError(f"kinds must be some of {get_args(FaultKind)}, got {list(kinds)}")
    if "http" in kinds and not (statuses and retry_after):
        raise ValueError("kinds has 'http' but statuses or retry_after is empty")
    return _faults(
        kinds=tuple(dict.fromkeys(kinds)),
        statuses=tuple(statuses),
        max_after=max_after_events,
        retry_after=tuple(retry_after),
    )


_any_fault = faults  # fault_plans() has a parameter of that name


@st.composite
def _plans(
    draw: DrawFn,
    *,
    answer_lists: SearchStrategy[Sequence[Reply]],
    fault_strategy: SearchStrategy[Fault],
    min_faults: int,
    max_faults: int,
) -> FaultPlan:
    answers = list(draw(answer_lists))
    calls: list[Fault | None] = []
    budget = max_faults
    for group in range(max(len(answers), 1)):
        least = min_faults if group == 0 else 0
        before = draw(st.lists(fault_strategy, min_size=least, max_size=budget))
        budget -= len(before)
        calls.extend(before)
        if group < len(answers):
            calls.append(None)
    while calls and calls[-1] is None:
        calls.pop()
    return FaultPlan(faults=tuple(calls), replies=tuple(answers))


def fault_plans(
    replies: SearchStrategy[Reply] | Sequence[Reply | SearchStrategy[Reply]] | None = None,
    *,
    faults: SearchStrategy[Fault] | None = None,
    min_faults: int = 0,
    max_faults: int = 3,
    min_replies: int | None = None,
    max_replies: int | None = None,
) -> SearchStrategy[FaultPlan]:
    """Fault plans: ``min_replies`` to ``max_replies`` answers, and before each
    one the calls that fail first — ``min_faults`` to ``max_faults`` faults in all,
    drawn from ``faults`` (default: :func:`faults`).

    ``replies`` defaults to replies without tool calls, so that each answer ends a
    turn: a plan then fits an agent that calls the model until it gets an
    answer. Pass ``replies=`` (and ``max_replies``) for agents that loop over tool
    calls. Keep ``max_faults`` within what your agent is meant to survive, or
    let the property accept a clean give-up.

    **A fixed conversation shape**: ``replies`` may be a list — one item per answer,
    in order, each a :class:`~..neutral.Reply` or a strategy of replies — and every
    plan then answers with exactly those, only the faults varying:
    ``fault_plans([replies(tools=tools, min_tool_calls=1, max_tool_calls=1),
    Reply.text("Sunny.")])`` is "a tool call, then text" under every mix of faults.
    ``min_replies`` / ``max_replies`` are then the list's length.

    Apply a plan with ``plan.apply(fake_model)`` (the fake is scripted with it)
    or ``plan.apply(agentreplay)`` (its faults are injected into the replayed
    cassette). Shrinks to the fewest calls, the earliest cut, the simplest fault
    (the first of :data:`DEFAULT_FAULT_KINDS`) and the simplest reply.
    """
    if not 0 <= min_faults <= max_faults:
        raise ValueError(f"need 0 <= min_faults <= max_faults, got {min_faults}, {max_faults}")
    return _plans(
        answer_lists=_answer_lists(replies, min_replies, max_replies),
        fault_strategy=_any_fault() if faults is None else faults,
        min_faults=min_faults,
        max_faults=max_faults,
    )


def _answer_lists(
    replies: object,  # checked here: users pass anything
    min_replies: int | None,
    max_replies: int | None,
) -> SearchStrategy[Sequence[Reply]]:
    """The answers of a plan: a list drawn from one reply strategy, or a fixed shape."""
    if replies is None or isinstance(replies, SearchStrategy):
        low = 1 if min_replies is None else min_replies
        high = max(low, 1) if max_replies is None else max_replies
        if not 0 <= low <= high:
            raise ValueError(f"need 0 <= min_replies <= max_replies, got {low}, {high}")
        answers: SearchStrategy[Reply] = _default_plan_replies() if replies is None else replies
        return st.lists(answers, min_size=low, max_size=high)
    if isinstance(replies, (Reply, str)) or not isinstance(replies, Sequence):
        raise TypeError(
            f"replies= takes a strategy of replies or a list of replies (a fixed "
            f"conversation shape), got {type(replies).__name__}"
        )
    shape = [_one_reply(r, i) for i, r in enumerate(replies)]
    for name, value in (("min_replies", min_replies), ("max_replies", max_replies)):
        if value is not None and value != len(shape):
            raise ValueError(
                f"{name}={value} contradicts the fixed shape of {len(shape)} replies given "
                f"in replies=; leave it out"
            )
    return st.tuples(*shape)


def _one_reply(item: object, i: int) -> SearchStrategy[Reply]:
    if isinstance(item, Reply):
        return st.just(item)
    if isinstance(item, SearchStrategy):
        return item
    raise TypeError(
        f"replies[{i}] must be a Reply or a strategy of replies, got {type(item).__name__}"
    )


def _default_plan_replies() -> SearchStrategy[Reply]:
    return _replies(tool_calls=False)
