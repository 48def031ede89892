"""One span (or one GenAI log event) as read from a trace file, in any of its forms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["TraceSpan"]


@dataclass
class TraceSpan:
    """A span as the importer needs it, whatever file form it came from.

    ``attributes`` hold decoded values (OTLP ``AnyValue`` objects unwrapped, GenAI
    message attributes parsed from their JSON text); ``scope`` and ``scope_version``
    name the instrumentation that made it (empty when the form does not say, as
    ``ConsoleSpanExporter`` output does not); ``error`` is the status message of a
    failed span; ``where`` is the file and line it was read from, for messages;
    ``event`` is true for the log-event form (``gen_ai.client.inference.operation.details``).
    """

    name: str
    attributes: dict[str, Any]
    where: str
    scope: str = ""
    scope_version: str = ""
    trace_id: str = ""
    span_id: str = ""
    start: int = 0
    end: int = 0
    failed: bool = False
    error: str | None = None
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    event: bool = False

    @property
    def instrumentation(self) -> str:
        """``scope version``, or what the span's attributes tell of its maker."""
        return f"{self.scope} {self.scope_version}".strip() or "unknown instrumentation"

    def get(self, *names: str) -> Any:
        """The first of ``names`` the span has (conventions renamed attributes)."""
        for name in names:
            if name in self.attributes:
                return self.attributes[name]
        return None
