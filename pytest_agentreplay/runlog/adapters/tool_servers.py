"""The tool side of a run log: the ``tools/call``s the watched fake tool servers received.

A run log watches model sources (fakes, the cassette handle) and tool sources side by
side. A tool source is a :class:`~pytest_agentreplay.mcp.fake.FakeToolServer` (or
anything with ``tool_names`` and a list of ``calls``), or a list of
:class:`~pytest_agentreplay.mcp.fake.ToolServerCall`. Its calls are read, running ones
included, and re-indexed in the order of the sources, so that an index names one call
in the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...mcp.fake.calls import ToolServerCall

__all__ = ["is_tool_source", "served_tools", "tool_calls_of"]


def is_tool_source(source: Any) -> bool:
    """Whether ``source`` is a tool server (or a list of its calls), not a model source."""
    if hasattr(source, "tool_names") and hasattr(source, "calls"):
        return True
    return (
        isinstance(source, (list, tuple))
        and bool(source)
        and all(isinstance(c, ToolServerCall) for c in source)
    )


def tool_calls_of(sources: Iterable[Any]) -> list[ToolServerCall]:
    """Every call of the tool ``sources``, in order, re-indexed to be unique in the log."""
    calls: list[ToolServerCall] = []
    for source in sources:
        calls.extend(source if isinstance(source, (list, tuple)) else source.calls)
    return [c if c.index == i else c.model_copy(update={"index": i}) for i, c in enumerate(calls)]


def served_tools(sources: Iterable[Any]) -> dict[str, list[str]]:
    """The tools each watched server serves, by server name (a list of calls names the
    tools it holds)."""
    served: dict[str, list[str]] = {}
    for source in sources:
        if isinstance(source, (list, tuple)):
            for call in source:
                names = served.setdefault(call.server, [])
                if call.tool not in names:
                    names.append(call.tool)
        else:
            served.setdefault(str(source.name), []).extend(source.tool_names)
    return served
