"""Production traces as cassettes: a traced run becomes a wire-exact regression test.

OpenTelemetry's GenAI conventions put each model call's messages, usage, finish
reasons and response id on a span. :func:`import_trace` reads a trace file
(:mod:`.read`), takes each model call (:mod:`.genai`), and renders it with the
provider's codec as the provider sent it (:mod:`.build`), so the real SDK replays it
event by event. What the trace cannot know is filled in and marked in each
interaction's ``origin``; instrumentation quirks are corrected (:mod:`.quirks`); a span
without content is refused with the setting that captures it (:mod:`.capture`).

    from pytest_agentreplay.traces import import_trace

    result = import_trace("trace.jsonl", "tests/cassettes/test_agent/test_bug.yaml")
    print("\n".join(result.report()))

The command line does the same: ``agentreplay import-trace trace.jsonl -o cassette.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..errors import TraceImportError
    from .importing import TraceImport, cassette_from_spans, import_trace
    from .read import read_trace, spans_from_text
    from .spans import TraceSpan

__all__ = [
    "TraceImport",
    "TraceImportError",
    "TraceSpan",
    "cassette_from_spans",
    "import_trace",
    "read_trace",
    "spans_from_text",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "..errors": ("TraceImportError",),
            ".importing": ("TraceImport", "cassette_from_spans", "import_trace"),
            ".read": ("read_trace", "spans_from_text"),
            ".spans": ("TraceSpan",),
        },
    )
