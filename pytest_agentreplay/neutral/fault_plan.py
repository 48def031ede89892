"""Plans of faults: which calls fail, how, and which replies the others get.

A :class:`FaultPlan` says, call by call, which fault strikes and which replies the
calls that succeed get. It applies in one line to a fake model
(``plan.apply(scripted_model)``, which scripts it) or to a replayed cassette
(``plan.apply(agentreplay)``, which injects the faults). Both read the plan the
same way: a failed call does *not* use up its reply — the call that follows gets
it, exactly as a retried request to a provider (or to a cassette) gets the answer
the failed one would have had. Its ``repr`` is the Python that builds it
(:mod:`.source`). Nothing here imports hypothesis: plans can be written by hand,
stored in a test, or pasted from a falsifying example.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import model_validator

from .parts import Frozen
from .replies import Fault, Reply
from .source import fault_source, reply_source

__all__ = ["FaultPlan"]

T = TypeVar("T")


class FaultPlan(Frozen):
    """Which calls fail and how: ``faults[i]`` strikes call *i* (``None``: no fault).

    ``replies`` are the answers, in order, for the calls that succeed: a faulted
    call plays (the first part of) the reply that is next, without using it up,
    so that a stream cut after *k* events has delivered the start of the answer
    its retry then gets in full. Calls past the end of ``faults`` are answered
    normally. Replies carry no fault of their own: put faults in ``faults``.
    """

    faults: tuple[Fault | None, ...] = ()
    replies: tuple[Reply, ...] = ()

    @model_validator(mode="after")
    def _replies_carry_no_fault(self) -> FaultPlan:
        for i, reply in enumerate(self.replies):
            if reply.fault is not None:
                raise ValueError(
                    f"replies[{i}] carries {reply.fault.describe()}; a plan's faults go in "
                    f"`faults`, one per call"
                )
        served = sum(f is None for f in self.faults)
        if served > len(self.replies):
            raise ValueError(
                f"{served} call(s) in `faults` are served (None) but only "
                f"{len(self.replies)} repl{'y' if len(self.replies) == 1 else 'ies'} given"
            )
        return self

    @property
    def calls(self) -> int:
        """How many calls the plan answers: every fault, plus one call per reply."""
        return sum(f is not None for f in self.faults) + len(self.replies)

    @property
    def fault_count(self) -> int:
        """How many calls fail."""
        return sum(f is not None for f in self.faults)

    def script(self) -> list[Reply]:
        """What a fake model serves, call by call (one item per call)."""
        out: list[Reply] = []
        pending = list(self.replies)
        for fault in self.faults:
            if fault is None:
                out.append(pending.pop(0))
                continue
            base = pending[0] if pending else Reply()
            out.append(base.model_copy(update={"fault": fault}))
        out.extend(pending)
        return out

    def injections(self) -> list[tuple[int, Fault]]:
        """``(call index, fault)`` for every faulted call: what a cassette needs."""
        return [(i, f) for i, f in enumerate(self.faults) if f is not None]

    def apply(self, target: T) -> T:
        """Apply the plan in one line and return ``target``.

        A fake model (anything with ``script()``) is scripted with :meth:`script`;
        the ``agentreplay`` cassette handle (anything with ``inject()``) gets each
        fault injected at its call, the recording answering every call (``replies``
        are not used: the cassette has the answers).
        """
        script = getattr(target, "script", None)
        if callable(script):
            script(*self.script())
            return target
        inject = getattr(target, "inject", None)
        if callable(inject):
            for at_call, fault in self.injections():
                inject(fault, at_call=at_call)
            return target
        raise TypeError(
            f"a FaultPlan applies to a FakeModel (script()) or to the agentreplay "
            f"handle (inject()), not to {type(target).__name__}"
        )

    def describe(self) -> str:
        """One line per call, for failure messages."""
        lines = []
        for i, reply in enumerate(self.script()):
            what = "served" if reply.fault is None else reply.fault.describe()
            shown = reply.model_copy(update={"fault": None})
            lines.append(f"call {i}: {what} — {reply_source(shown)}")
        return "\n".join(lines) or "no calls"

    def __repr__(self) -> str:
        faults = _tuple(fault_source(f) if f is not None else "None" for f in self.faults)
        replies = _tuple(reply_source(r) for r in self.replies)
        return f"FaultPlan(faults={faults}, replies={replies})"

    __str__ = __repr__


def _tuple(items: Any) -> str:
    shown = list(items)
    if len(shown) == 1:
        return f"({shown[0]},)"
    return "(" + ", ".join(shown) + ")"
