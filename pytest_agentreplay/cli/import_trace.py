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
from ..redact import SecretLeakError
from ..traces import import_trace
from .common import EXIT_FINDINGS, EXIT_OK, CLIError, Output, reading, write_failed
from .redact import build_scrubber, leak_reason

__all__ = ["run_import_trace"]


def run_import_trace(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay import-trace TRACE -o CASSETTE [--skip-unknown]``."""
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
