"""The import: a trace file in, a cassette (and a report of what was filled in) out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..cassettes.cassette import Cassette, Interaction
from ..cassettes.io import save
from ..errors import TraceImportError
from .build import failed_without_answer, span_interactions
from .genai import is_inference
from .read import read_trace
from .spans import TraceSpan

if TYPE_CHECKING:
    from ..redact import Scrubber

__all__ = ["TraceImport", "cassette_from_spans", "import_trace"]


@dataclass
class TraceImport:
    """What an import made: the cassette, and what the report says about it."""

    cassette: Cassette
    calls: int = 0
    """Model calls (inference spans or events) found in the trace."""
    other_spans: int = 0
    """Spans that are no model call (agent runs, tools, HTTP), left out."""
    skipped: list[str] = field(default_factory=list)
    """Model calls that gave no interaction, each with the reason."""

    def report(self) -> list[str]:
        """Human-readable lines: one per interaction with its origin, then what was left."""
        lines = [
            f"{self.calls} model call(s) imported as {len(self.cassette.interactions)} "
            f"interaction(s); {self.other_spans} other span(s) left out"
        ]
        for number, interaction in enumerate(self.cassette.interactions):
            lines.append(describe(number, interaction))
        lines += [f"skipped: {reason}" for reason in self.skipped]
        return lines


def describe(number: int, interaction: Interaction) -> str:
    """One interaction's line of the report: its step, form, and what was corrected."""
    origin = interaction.origin or {}
    status = interaction.response.status
    form = "stream" if interaction.response.is_stream else "json"
    line = (
        f"#{number} step {origin.get('step')} {interaction.request.url} -> {status} {form} "
        f"(serves {origin.get('serves')}; from {origin.get('instrumentation')})"
    )
    corrected = origin.get("corrected") or []
    return line + "".join(f"\n    corrected: {c}" for c in corrected)


def cassette_from_spans(spans: Sequence[TraceSpan], *, skip_unknown: bool = False) -> TraceImport:
    """The cassette of the model calls among ``spans``, in the order they started.

    A span of a provider this plugin does not speak is refused, or left out (and
    reported) with ``skip_unknown``. A trace whose log-event form repeats its spans
    (``span_and_event`` capture) imports each call once.
    """
    calls = [s for s in spans if is_inference(s)]
    spanned = {s.span_id for s in calls if not s.event and s.span_id}
    calls = [s for s in calls if not (s.event and s.span_id in spanned)]
    calls.sort(key=lambda s: s.start)
    result = TraceImport(cassette=Cassette(), calls=len(calls))
    result.other_spans = len(spans) - len([s for s in spans if is_inference(s)])
    interactions: list[Interaction] = []
    for step, span in enumerate(calls, start=1):
        try:
            made = span_interactions(span, step)
        except TraceImportError as exc:
            if not (skip_unknown and "is not one this plugin speaks" in str(exc)):
                raise
            result.skipped.append(str(exc))
            continue
        if not made:
            result.skipped.append(failed_without_answer(span))
        interactions += made
    if not calls:
        raise TraceImportError(
            f"the trace holds {len(spans)} span(s) and no model call: expected spans with "
            "gen_ai.operation.name chat / generate_content (or gen_ai.request.model and "
            "gen_ai.provider.name), or gen_ai.client.inference.operation.details events"
        )
    result.cassette = Cassette(interactions=interactions)
    return result


def import_trace(
    trace: str | Path,
    cassette: str | Path | None = None,
    *,
    skip_unknown: bool = False,
    scrubber: Scrubber | None = None,
) -> TraceImport:
    """Import the trace file ``trace`` (OTLP JSON, a JSON list of spans, or GenAI log
    events) and, with ``cassette``, write it there: scrubbed, checked by the secret
    backstop and written atomically, as any recording is (``scrubber`` as for
    :func:`~..cassettes.io.save`)."""
    result = cassette_from_spans(read_trace(trace), skip_unknown=skip_unknown)
    if cassette is not None:
        save(cassette, result.cassette, scrubber=scrubber)
    return result
