"""The ``agentreplay`` command: its subcommands assembled, and one run of it.

``agentreplay inspect | lint | fold | redact | convert | diff | import-trace | serve |
mcp``; ``agentreplay COMMAND --help`` describes each. Each subcommand is whole in the
module of its name (``inspect.py``, ``serve.py``...): ``configure(parser)`` gives its
description, epilog
and options, ``run(args, output)`` does the work. This module only lists them, with
the one-line summary ``agentreplay --help`` shows, and imports the module of the
command being run, so ``agentreplay --help`` does not pay for pydantic, PyYAML or the
codecs.

Exit codes, for every subcommand: 0 success (clean), 1 findings (``lint``
problems, ``diff`` differences, ``redact --check`` changes, a secret that stopped
a write), 2 bad input (a file that does not load or is no regular file of bounded
size, a wrong option) or a file that cannot be written (a full or read-only disk),
reported as one line ``agentreplay: <file>: <reason>`` on stderr. "Internal error"
is kept for bugs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Collection, Sequence
from typing import Protocol, cast

from .._version import __version__
from .common import EXIT_ERROR, Output
from .errors import CLIError, OutputError
from .options import HelpFormatter, exit_codes

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: dict[str, str] = {
    "inspect": "a timeline of each interaction: request, response, events, final message",
    "lint": "check cassettes: schema, secrets, SSE framing, folding, stale headers",
    "fold": "the final JSON of a streamed interaction, as the provider would have returned it",
    "redact": "re-scrub agentreplay cassettes in place with the current rules",
    "convert": "convert a cassette to agentreplay or vcrpy format",
    "diff": "a semantic diff of two cassettes (for reviewing a re-recording)",
    "import-trace": "turn a production trace (OpenTelemetry GenAI spans) into a cassette",
    "serve": "serve cassettes on a loopback HTTP port, to any process (and record through)",
    "mcp": "record a stdio MCP server into a cassette (a proxy), and replay it",
}
"""Each subcommand, in the order ``agentreplay --help`` lists them, with its summary;
its module is ``pytest_agentreplay.cli.<name>``, with ``_`` for ``-``."""


class Command(Protocol):
    """What the module of a subcommand defines."""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Give the subcommand's parser its description, epilog and options."""

    def run(self, args: argparse.Namespace, output: Output) -> int:
        """Do the work; the exit code."""


def command(name: str) -> Command:
    """The module of subcommand ``name``, imported now."""
    module = name.replace("-", "_")  # import-trace: import_trace.py
    return cast(Command, importlib.import_module(f".{module}", __package__))


def build_parser(complete: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``agentreplay`` argument parser, with every subcommand.

    ``complete`` names the subcommands whose options are defined (default: all); the
    others are listed with their summary only, so that parsing the arguments of one
    command imports that command's module alone.
    """
    parser = argparse.ArgumentParser(
        prog="agentreplay",
        description="See, check and fix pytest-agentreplay cassettes (and vcrpy / "
        "pytest-recording ones) without writing code.",
        epilog="Run 'agentreplay COMMAND --help' for the options of a command.\n\n"
        + exit_codes(
            "success: shown, clean, converted, no differences",
            "findings: lint problems, diff differences, redact --check changes, "
            "a secret that stopped a write",
        ),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agentreplay {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary in COMMANDS.items():
        subparser = commands.add_parser(name, help=summary, formatter_class=HelpFormatter)
        if complete is None or name in complete:
            command(name).configure(subparser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agentreplay`` with ``argv`` (default: the process arguments); the exit code."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    # Only the commands named in the arguments are defined in full: argparse parses
    # the rest of the line with the chosen one, and --help lists only summaries.
    parser = build_parser(COMMANDS.keys() & set(arguments))
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # --help, --version (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    output = Output()
    try:
        code = command(args.command).run(args, output)
        output.flush()  # a full disk under a redirected stdout says so here, at the latest
        return code
    except CLIError as exc:
        output.error(exc)
        return EXIT_ERROR
    except BrokenPipeError:  # `agentreplay inspect x | head`: stop quietly
        _silence_stdout()
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except MemoryError:  # a file's own error names it (common.reading); this is the rest
        output.error(CLIError(None, "out of memory"))
        return EXIT_ERROR
    except OutputError as exc:
        _silence_stdout()
        output.error(CLIError(None, f"cannot write the output: {exc.reason}"))
        return EXIT_ERROR
    except Exception:
        return _internal_error(output)


def _silence_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's own flush
    at exit does not fail a second time (a broken pipe, a full disk)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _internal_error(output: Output) -> int:
    """A bug: show it, masked (an exception message may quote a value)."""
    from ..redact.scrubber import default_scrubber  # noqa: PLC0415 - only for a bug

    output.mask = default_scrubber().mask
    output.note(traceback.format_exc().rstrip())
    output.note("agentreplay: internal error (the traceback above); please report it")
    return EXIT_ERROR
