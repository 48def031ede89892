"""What the LangChain callback adapter (:mod:`.langchain`) remembers while a run goes
on: the turns (outermost chains) and their model steps, which step a failed try
leaves waiting for its verdict, the tool runs still open and the LangGraph tasks
whose write-ahead intents were issued.

A failed model call's terminal event waits (:attr:`Turn.failed`): LangChain reports the
error before anyone knows whether it will be retried. The next model call of the turn
settles it — a retry if it resends the same messages, from the same caller (a
``.with_retry()``, a node's own loop) or the same LangGraph task (a node's
``RetryPolicy``): the failed try ends ``retrying`` and the retry runs at its index —
and so does the end of the turn (``failed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Step", "Turn"]


@dataclass
class Step:
    """A chat model call: one step of a turn."""

    run_id: str
    index: int
    turn_id: str | None
    parent: str | None
    task: str | None  # the LangGraph task (checkpoint namespace) the call ran in
    messages: str  # its input, as comparable text (readers.message_key)
    in_graph: bool  # run by a LangGraph node: what it saved is the node's write
    text: list[str] = field(default_factory=list)
    ended: bool = False

    def retried_by(self, other: Step) -> bool:
        """Whether ``other``, the next call of the turn, is a retry of this failed
        try: the same caller, the same LangGraph task, or the same messages resent."""
        if other.parent is not None and other.parent == self.parent:
            return True
        if other.task is not None and other.task == self.task:
            return True
        return other.messages == self.messages


@dataclass
class Turn:
    """A run of the outermost chain (a graph, an ``AgentExecutor``): one turn."""

    id: str
    next_index: int = 0
    steps: list[Step] = field(default_factory=list)
    failed: Step | None = None  # a failed try whose verdict (retrying / failed) waits
    intents: set[str] = field(default_factory=set)  # LangGraph tasks whose intent was issued
    tools: dict[str, str] = field(default_factory=dict)  # open tool run id: its call id
    paused: bool = False  # a node called interrupt(): the turn goes on after a resume

    def open_steps(self) -> list[Step]:
        """Steps started and not ended (the failed one waiting for its verdict aside)."""
        return [s for s in self.steps if not s.ended and s is not self.failed]
