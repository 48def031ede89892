"""Hypothesis strategies for agent tests: replies, faults, fault plans, chunkings, SSE.

Each strategy is a lowercase function returning a ``SearchStrategy``, documented
by what it generates and how it shrinks, so a failing property is reported with
the smallest case that still fails:

* :func:`replies` — model replies (text, tool calls with JSON arguments,
  thinking, usage, stop reasons); shrinks toward a short plain-text reply.
* :func:`faults` — one :class:`~pytest_agentreplay.model.Fault` of the kinds
  asked for; shrinks toward the first kind, the first status, event 0.
* :func:`fault_plans` — which calls of a run fail and how
  (:class:`~pytest_agentreplay.faults.FaultPlan`); shrinks to the fewest
  calls, the earliest cut, the simplest fault and the simplest reply. Apply a
  plan in one line: ``plan.apply(fake_model)`` or ``plan.apply(agentreplay)``.
* :func:`chunkings` — ways to cut a byte stream into network chunks, inside
  CRLF and inside multi-byte UTF-8 (:class:`Chunking`, a chunker the fakes and
  cassettes accept); shrinks toward the whole body in one chunk.
* :func:`sse_streams` — SSE bodies with the events a spec-exact decoder
  dispatches from them (:class:`SSEStream`).

Importing this module registers the ``agentreplay-ci`` and ``agentreplay-dev``
hypothesis profiles (see :func:`register_profiles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from hypothesis import strategies as st
from hypothesis.strategies import DrawFn, SearchStrategy

from ._chunking import Chunking
from ._hypothesis_profile import CI_PROFILE, DEV_PROFILE, register_profiles
from ._strategies_sse import SSEStream, sse_streams
from .faults import FaultPlan
from .model import Fault, FaultKind, Reply, StopReason, Text, Thinking, ToolCall, Usage

__all__ = [
    "CI_PROFILE",
    "DEFAULT_FAULT_KINDS",
    "DEFAULT_STATUSES",
    "DEV_PROFILE",
    "Chunking",
    "FaultPlan",
    "SSEStream",
    "chunkings",
    "fault_plans",
    "faults",
    "json_objects",
    "register_profiles",
    "replies",
    "sse_streams",
]

DEFAULT_FAULT_KINDS: tuple[FaultKind, ...] = ("http", "cut", "timeout", "error_event", "empty")
"""The kinds :func:`faults` draws by default, simplest first. ``stall`` is left out:
a stalled call holds until the test releases it, which a generic property cannot do."""

DEFAULT_STATUSES: tuple[int, ...] = (500, 429, 529, 503, 401, 400)
"""The HTTP statuses :func:`faults` draws by default, the one shrunk to first."""

_STOPS: tuple[StopReason, ...] = get_args(StopReason)
_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=40)
_KEYS = st.text(st.characters(codec="utf-8"), max_size=8)
_TOOL_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)

register_profiles()


# --- replies ---------------------------------------------------------------------------


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


# --- faults and plans -------------------------------------------------------------------


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
    reply_strategy: SearchStrategy[Reply],
    fault_strategy: SearchStrategy[Fault],
    min_faults: int,
    max_faults: int,
    min_replies: int,
    max_replies: int,
) -> FaultPlan:
    answers = draw(st.lists(reply_strategy, min_size=min_replies, max_size=max_replies))
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
    replies: SearchStrategy[Reply] | None = None,
    *,
    faults: SearchStrategy[Fault] | None = None,
    min_faults: int = 0,
    max_faults: int = 3,
    min_replies: int = 1,
    max_replies: int = 1,
) -> SearchStrategy[FaultPlan]:
    """Fault plans: ``min_replies`` to ``max_replies`` answers, and before each
    one the calls that fail first — ``min_faults`` to ``max_faults`` faults in all,
    drawn from ``faults`` (default: :func:`faults`).

    ``replies`` defaults to replies without tool calls, so that each answer ends a
    turn: a plan then fits an agent that calls the model until it gets an
    answer. Pass ``replies=`` (and ``max_replies``) for agents that loop over tool
    calls. Keep ``max_faults`` within what your agent is meant to survive, or
    let the property accept a clean give-up.

    Apply a plan with ``plan.apply(fake_model)`` (the fake is scripted with it)
    or ``plan.apply(agentreplay)`` (its faults are injected into the replayed
    cassette). Shrinks to the fewest calls, the earliest cut, the simplest fault
    (the first of :data:`DEFAULT_FAULT_KINDS`) and the simplest reply.
    """
    if not 0 <= min_faults <= max_faults:
        raise ValueError(f"need 0 <= min_faults <= max_faults, got {min_faults}, {max_faults}")
    if not 0 <= min_replies <= max_replies:
        raise ValueError(f"need 0 <= min_replies <= max_replies, got {min_replies}, {max_replies}")
    answers = _default_plan_replies() if replies is None else replies
    return _plans(
        reply_strategy=answers,
        fault_strategy=_any_fault() if faults is None else faults,
        min_faults=min_faults,
        max_faults=max_faults,
        min_replies=min_replies,
        max_replies=max_replies,
    )


def _default_plan_replies() -> SearchStrategy[Reply]:
    return replies(tool_calls=False)


# --- streams ------------------------------------------------------------------------------


def chunkings(*, max_size: int = 16, max_sizes: int = 6) -> SearchStrategy[Chunking]:
    """Ways to cut a byte stream into network chunks, as :class:`Chunking` objects —
    chunkers for ``FakeModel(chunking=...)``, ``fake.chunker`` or the cassette
    settings' ``chunking``, and ``chunking.split(data)`` for raw bytes.

    Each cuts at a repeating pattern of up to ``max_sizes`` sizes (1 to
    ``max_size`` bytes), and may also cut at every event boundary, between the
    CR and LF of every CRLF, and after the first byte of every multi-byte UTF-8
    character (a BOM included): the places decoders get wrong. Reassembled, the
    chunks are always the original bytes.

    Shrinks toward ``Chunking()``, the whole body in one chunk, keeping only the
    cuts the failure needs.
    """
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, got {max_size}")
    return st.builds(
        Chunking,
        sizes=st.lists(st.integers(1, max_size), max_size=max_sizes).map(tuple),
        events=st.booleans(),
        crlf=st.booleans(),
        utf8=st.booleans(),
    )
