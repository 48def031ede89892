"""One scripted tool: its name, schemas and the answers it gives in order.

A :class:`ScriptedTool` is what ``FakeToolServer.tool(...)`` declares. Its schemas
are checked when it is declared and every scripted value when it is scripted, so a
wrong script fails on the line that wrote it (:class:`~.errors.ToolScriptError`,
naming the tool and the field). Answers are served in order; past the end, the
``respond`` function answers, and without one the call is a surprise that fails the
test (as a fake model's call after its script ran out).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .faults import ToolFault
from .results import Answer, as_result
from .schemas import check_schema, schema_problems

__all__ = ["ANY_OBJECT", "ScriptedTool"]

ANY_OBJECT: dict[str, Any] = {"type": "object"}
"""The input schema of a tool declared without one: any arguments."""


@dataclass
class ScriptedTool:
    """A tool of a fake tool server; see the module docs."""

    name: str
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(ANY_OBJECT))
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    respond: Answer | None = None
    _answers: deque[Any] = field(default_factory=deque, repr=False)
    _scripted: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"a tool's name must be a non-empty string, got {self.name!r}")
        check_schema(self.name, "input_schema", self.input_schema)
        if self.output_schema is not None:
            check_schema(self.name, "output_schema", self.output_schema)
        if self.respond is not None and not callable(self.respond):
            raise TypeError(f"tool {self.name!r}: respond must be callable, got {self.respond!r}")

    def extend(self, items: Sequence[Any]) -> None:
        """Append answers, each checked now (a function's answer when it is called)."""
        checked = []
        for item in items:
            with self._lock:
                self._scripted += 1
                where = f"result #{self._scripted}"
            if not (callable(item) or isinstance(item, ToolFault)):
                as_result(self.name, item, where, self.output_schema)
            checked.append((where, item))
        with self._lock:
            self._answers.extend(checked)

    def next_answer(self) -> tuple[str, Any] | None:
        """``(where, item)`` of the next scripted answer, the ``respond`` function's
        place past the end, or ``None`` when neither is left."""
        with self._lock:
            if self._answers:
                taken: tuple[str, Any] = self._answers.popleft()
                return taken
        if self.respond is not None:
            return ("respond", self.respond)
        return None

    @property
    def remaining(self) -> list[Any]:
        """Answers not served yet."""
        with self._lock:
            return [item for _, item in self._answers]

    def argument_problems(self, arguments: Any) -> list[str]:
        """What is wrong with ``arguments`` under the input schema (``[]`` when fine)."""
        if not isinstance(arguments, dict):
            return [f"$: the arguments must be a JSON object, got {arguments!r}"]
        return schema_problems(arguments, self.input_schema)

    def listed(self) -> dict[str, Any]:
        """The tool as ``tools/list`` shows it."""
        shown: dict[str, Any] = {"name": self.name, "inputSchema": self.input_schema}
        if self.description is not None:
            shown["description"] = self.description
        if self.output_schema is not None:
            shown["outputSchema"] = self.output_schema
        return shown
