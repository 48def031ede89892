"""``agentreplay import-trace TRACE -o CASSETTE``: a production trace as a cassette.

Reads the trace with :func:`~..traces.import_trace`, writes the cassette scrubbed and
checked by the secret backstop (as every write of the command is), and prints what
was imported: one line per interaction with its step, form and instrumentation, each
correction made, and the model calls that gave no interaction.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..cassettes.io import locked
from ..cassettes.reading import is_regular_file
from ..errors import TraceImportError
from ..redact.errors import SecretLeakError
from ..traces import import_trace
from .common import EXIT_FINDINGS, EXIT_OK, Output, reading, write_failed
from .errors import CLIError
from .options import exit_codes
from .redact import add_scrub_options, build_scrubber, leak_reason

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay import-trace``."""
    parser.description = (
        "Read a trace file - OTLP JSON as the collector's file exporter writes it (one "
        "resourceSpans or resourceLogs document per line, or a list), a JSON list of "
        "spans, or GenAI log events (gen_ai.client.inference.operation.details) - and "
        "write a cassette with one interaction per model call, in the wire format of its "
        "provider (Anthropic Messages, OpenAI Chat, OpenAI Responses, Gemini), streamed or "
        "not as the span says (both forms, served as the live request asks, when it does "
        "not). What the trace cannot know (ids, headers, event boundaries, timings, exact "
        "stop reasons) is filled in and marked in each interaction's origin; known "
        "instrumentation quirks are corrected and listed. The cassette matches requests "
        "by what the trace knows: model, system, messages and streaming. It is scrubbed "
        "and checked for secrets before it is written, atomically."
    )
    parser.epilog = exit_codes("imported", "a secret survived scrubbing (nothing was written)")
    parser.add_argument("trace", metavar="TRACE", help="the trace file")
    parser.add_argument(
        "-o", "--output", metavar="CASSETTE", required=True, help="the cassette to write"
    )
    parser.add_argument("--force", action="store_true", help="replace CASSETTE if it exists")
    parser.add_argument(
        "--skip-unknown",
        action="store_true",
        help="leave out (and list) model calls of providers this plugin does not speak, "
        "instead of refusing the trace",
    )
    add_scrub_options(parser)


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay import-trace TRACE -o CASSETTE [--force] [--skip-unknown]``."""
    scrubber = build_scrubber(args)
    output.mask = scrubber.mask
    target = Path(args.output)
    if os.path.lexists(target) and not is_regular_file(target):
        raise CLIError(target, "is not a regular file; import-trace writes a cassette file")
    if target.exists() and not args.force:
        raise CLIError(
            target, "exists already; pass --force to replace it (the old file is kept on error)"
        )
    with reading(args.trace):
        try:
            with locked(target):
                result = import_trace(
                    args.trace, target, skip_unknown=args.skip_unknown, scrubber=scrubber
                )
        except TraceImportError as exc:
            raise CLIError(None, str(exc)) from None
        except SecretLeakError as exc:
            output.error(CLIError(args.trace, leak_reason(exc)))
            return EXIT_FINDINGS
        except OSError as exc:
            raise write_failed(target, exc) from None
    output.lines(result.report())
    output.note(f"wrote {target}: {len(result.cassette.interactions)} interaction(s)")
    return EXIT_OK
