"""The ``agentreplay`` command: see, check and fix cassettes without writing code.

``agentreplay inspect | lint | fold | redact | convert | diff | import-trace | serve``;
``agentreplay
COMMAND --help`` describes each. This module only builds the argument parser and
dispatches: each subcommand lives in a module of this package (``inspect``,
``lint``, ``redact``, ``convert``, ``diff``) imported when it runs, so
``agentreplay --help`` does not pay for pydantic, PyYAML or the codecs.

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
import math
import os
import sys
import textwrap
import traceback
from collections.abc import Callable, Sequence

from .._version import __version__
from ..cassettes.modes import RECORD_MODES
from .common import EXIT_ERROR, LINT_CHECKS, CLIError, Output, OutputError

__all__ = ["build_parser", "main"]

_BAD_INPUT = (
    "bad input: a file that does not exist, does not load or is not a regular file of at "
    "most 1 GiB, or a wrong option; or a file that cannot be written (a full or read-only "
    "disk); one line 'agentreplay: <file>: <reason>' on stderr"
)


_FORMATS = (
    "Reads agentreplay cassettes, vcrpy / pytest-recording YAML (including pydantic-ai's "
    "and crewAI's serializers), the anthropic SDK's http-snapshot JSON and bare "
    "event-stream bodies."
)


class _Formatter(argparse.HelpFormatter):
    """Wraps one-line paragraphs to the terminal; keeps multi-line ones (lists) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            p
            if "\n" in p
            else textwrap.fill(p, width, initial_indent=indent, subsequent_indent=indent)
            for p in paragraphs
        )


def _exit_codes(ok: str, findings: str) -> str:
    lines = [
        textwrap.fill(f"{code}  {text}", 79, initial_indent="  ", subsequent_indent=" " * 5)
        for code, text in (("0", ok), ("1", findings), ("2", _BAD_INPUT))
    ]
    return "exit codes:\n" + "\n".join(lines)


def _index(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an interaction number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"interaction numbers start at 0, got {value}")
    return value


def _pace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"a finite number >= 0 is needed, got {text!r}")
    return value


def _checks(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in LINT_CHECKS]
    if unknown:
        known = ", ".join(LINT_CHECKS)
        raise argparse.ArgumentTypeError(f"unknown check {unknown[0]!r} (known: {known})")
    return names


def _add_interaction(parser: argparse.ArgumentParser, what: str, default: str = "") -> None:
    parser.add_argument(
        "-i",
        "--interaction",
        metavar="N",
        type=_index,
        help=f"{what}, numbered from 0 in file order{default}",
    )


def _add_scrub_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "scrubbing rules",
        "Added to the default rules of pytest_agentreplay.redact.Scrubber (the "
        "pytest_agentreplay_configure hook of a conftest is not read here).",
    )
    options = (
        ("--extra-header", "NAME", "also redact this header"),
        ("--extra-query-param", "NAME", "also redact this query, fragment or form parameter"),
        ("--extra-body-key", "NAME", "also redact this JSON key, at any depth"),
        ("--allow", "VALUE", "a known-fake value the secret scan accepts, such as a test key"),
    )
    for flag, metavar, text in options:
        group.add_argument(
            flag, metavar=metavar, action="append", default=[], help=f"{text} (repeatable)"
        )


def _subparser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    description: str,
    epilog: str,
) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=_Formatter,
    )


def _inspect(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "inspect",
        "a timeline of each interaction: request, response, events, final message",
        "Show what a cassette holds, one block per interaction: the request (provider, "
        "model, last user message, tools), the status and content type, whether it "
        "streamed, its events counted by type, the time to the first and the last event "
        "(when recorded), how the stream ended, and the final message folded from the "
        "stream (text, thinking, tool calls with their arguments, stop reason, usage). "
        + _FORMATS
        + " Key-shaped secrets in the output are masked.",
        _exit_codes("the cassette was shown", "(not used by this command)"),
    )
    parser.add_argument("path", metavar="PATH", help="the cassette file")
    _add_interaction(parser, "show only interaction N")
    parser.add_argument(
        "--events", action="store_true", help="also list every event: time, type, data"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document instead of text (full texts, nothing cut)",
    )


def _lint(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    checks = "\n".join(
        textwrap.fill(f"{name:<17} {text}", 79, initial_indent="  ", subsequent_indent=" " * 20)
        for name, text in LINT_CHECKS.items()
    )
    parser = _subparser(
        commands,
        "lint",
        "check cassettes: schema, secrets, SSE framing, folding, stale headers",
        "Check cassette files, and the cassettes under folders, for the problems below. "
        "In a folder, *.yaml / *.yml files with a top-level 'interactions' key, *.json "
        "files holding an array of exchanges and *.sse / *.sse.txt / *.sse.bin bodies are "
        "checked; other files and hidden folders are left out. A file that does not load "
        "is a finding (check 'schema'), not an error. Findings name the file, line, "
        "interaction and field; secrets are never shown. " + _FORMATS,
        f"checks:\n{checks}\n\n"
        + _exit_codes("no findings", "findings (each printed; a summary line ends the text)"),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="cassette files or folders")
    parser.add_argument(
        "--format",
        choices=("text", "github", "json"),
        default="text",
        help="text: 'file:line:column: check: message' lines and a summary (default); "
        "github: '::error file=...,line=...::' workflow annotations; json: one JSON list",
    )
    parser.add_argument(
        "--ignore",
        metavar="CHECK[,CHECK]",
        type=_checks,
        action="extend",
        default=[],
        help="skip these checks (repeatable)",
    )
    parser.add_argument(
        "--select",
        metavar="CHECK[,CHECK]",
        type=_checks,
        action="extend",
        default=[],
        help="run only these checks (repeatable; default: all)",
    )
    _add_scrub_options(parser)


def _fold(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "fold",
        "the final JSON of a streamed interaction, as the provider would have returned it",
        "Fold the events of a streamed model call (Anthropic Messages, OpenAI Chat "
        "Completions, OpenAI Responses) into the JSON body the provider returns without "
        "streaming, as the SDK's accumulator builds it, and print it. For a model call "
        "that did not stream, its JSON body is printed. A warning on stderr says when the "
        "stream did not reach its terminal event. " + _FORMATS,
        _exit_codes("the body was printed", "(not used by this command)"),
    )
    parser.add_argument("path", metavar="PATH", help="the cassette file")
    _add_interaction(
        parser,
        "the interaction to fold",
        " (default: the only streamed model call; required when there are several)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="treat events of unknown types as errors instead of skipping them",
    )


def _redact(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "redact",
        "re-scrub agentreplay cassettes in place with the current rules",
        "Scrub agentreplay cassettes again with the current rules (credential headers, "
        "query parameters and JSON keys redacted; volatile headers dropped; request ids "
        "normalized) and write each changed file back atomically, under the cassette "
        "lock. Every change is listed by field path, never by value; a file that needs "
        "no change is not rewritten. The secret scan runs on the text before it is "
        "written: a secret the rules cannot remove stops that file's write.\n\n"
        "Other formats are not rewritten in place (a pytest-recording cassette rewritten "
        "as agentreplay YAML would no longer load in vcrpy): named on the command line "
        "they are an error, found in a folder they are skipped with a note. Use "
        "'agentreplay convert FILE --to vcrpy -o FILE' to scrub one and keep its format, "
        "or '--to agentreplay' to switch it over. YAML comments are not kept by a rewrite.",
        _exit_codes(
            "every file is clean now (rewritten or already clean)",
            "--check found files to rewrite, or a secret survived scrubbing (that file "
            "was not written)",
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="cassette files or folders")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing: list what would change and exit 1 if anything would",
    )
    _add_scrub_options(parser)


def _convert(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "convert",
        "convert a cassette to agentreplay or vcrpy format",
        "Convert a cassette to agentreplay YAML or to vcrpy / pytest-recording YAML. "
        + _FORMATS
        + " The conversion is lossless where the target can hold the data; a warning on "
        "stderr lists what it cannot (vcrpy: event arrival times, how a stream ended "
        "other than normally; agentreplay: status reason phrases, repeated header "
        "values, SSE line endings, JSON body whitespace, content-length headers; either: "
        "YAML comments). Both targets go through the scrubber, and the secret scan checks the "
        "text before anything is written; the file is replaced atomically. vcrpy output "
        "keeps each body as one unwrapped string (block style when it can).",
        _exit_codes(
            "converted",
            "a secret survived scrubbing (nothing was written)",
        ),
    )
    parser.add_argument("path", metavar="PATH", help="the cassette to convert")
    parser.add_argument(
        "--to", required=True, choices=("agentreplay", "vcrpy"), help="the target format"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write here (may be PATH itself; an existing file is replaced); "
        "default: standard output",
    )
    _add_scrub_options(parser)


def _diff(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "diff",
        "a semantic diff of two cassettes (for reviewing a re-recording)",
        "Compare two cassettes as conversations, not as text: interactions are paired by "
        "method and URL (in order); for each pair, the request (method, URL, JSON body at "
        "JSON paths, and the headers that shape the API: content-type, *-version, "
        "*-beta), the response status and those headers, the sequence of "
        "events by type, how the stream ended, and the final message folded from the "
        "stream. Both sides are compared scrubbed, as they would be saved. Fields that "
        "change on every recording (ids, timestamps, signatures, obfuscation padding, "
        "event times) are ignored unless --all is given. The files "
        "may be in different formats. " + _FORMATS,
        _exit_codes("no differences", "differences (printed)"),
    )
    parser.add_argument("a", metavar="A", help="the old cassette")
    parser.add_argument("b", metavar="B", help="the new cassette")
    parser.add_argument(
        "--all",
        action="store_true",
        help="compare everything: all headers, volatile fields (ids, timestamps, "
        "signatures), event data and event times; secrets stay redacted, as in every output",
    )
    parser.add_argument(
        "--limit",
        metavar="N",
        type=int,
        default=20,
        help="at most N difference lines per part of an interaction (default: 20)",
    )


def _import_trace(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "import-trace",
        "turn a production trace (OpenTelemetry GenAI spans) into a cassette",
        "Read a trace file - OTLP JSON as the collector's file exporter writes it (one "
        "resourceSpans or resourceLogs document per line, or a list), a JSON list of spans, "
        "or GenAI log events (gen_ai.client.inference.operation.details) - and write a "
        "cassette with one interaction per model call, in the wire format of its provider "
        "(Anthropic Messages, OpenAI Chat, OpenAI Responses, Gemini), streamed or not as "
        "the span says (both forms, served as the live request asks, when it does not). "
        "What the trace cannot know (ids, headers, event boundaries, timings, exact stop "
        "reasons) is filled in and marked in each interaction's origin; known "
        "instrumentation quirks are corrected and listed. The cassette matches requests by "
        "what the trace knows: model, system, messages and streaming. It is scrubbed and "
        "checked for secrets before it is written, atomically.",
        _exit_codes("imported", "a secret survived scrubbing (nothing was written)"),
    )
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
    _add_scrub_options(parser)


def _serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "serve",
        "serve cassettes on a loopback HTTP port, to any process (and record through)",
        "Serve the recorded interactions of cassettes on a real HTTP/1.1 port, so that "
        "a process the plugin cannot patch (an agent in another language, a worker, a "
        "CLI) replays them: streams event by event, recorded cuts as dropped "
        "connections. Each request is matched as if it was sent to the host it was "
        "recorded from (--upstream, else the recorded host of the same path, else the "
        "provider's). A request no recording matches gets a 404 whose body is the "
        "cassette-miss report, also printed on stderr. The first line on stdout is the "
        "server's URL; point ANTHROPIC_BASE_URL or GOOGLE_GEMINI_BASE_URL at it "
        "(OPENAI_BASE_URL at URL/v1). "
        "With a record mode other than none, what the cassette does not answer is sent "
        "on to the upstream and recorded into the cassette, written when the server "
        "stops (Ctrl-C or SIGTERM). " + _FORMATS,
        _exit_codes("stopped; every request was answered", "a request matched no recording"),
    )
    parser.add_argument("cassettes", nargs="+", metavar="CASSETTE", help="cassette files")
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the port to listen on (default: a free one)"
    )
    parser.add_argument(
        "--record-mode",
        choices=RECORD_MODES,
        default="none",
        help="none: replay only (default); once, new_episodes, all, rewrite: as in the "
        "plugin, recording what is sent on to the upstream (one cassette only)",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="the origin requests were recorded from, and are recorded from "
        "(https://api.anthropic.com...; default: the provider's own host)",
    )
    parser.add_argument(
        "--pace",
        type=_pace,
        metavar="X",
        help="replay events at their recorded arrival times, scaled by X (1.0: as recorded)",
    )
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="also serve streams recorded while the recording was stopped (end: incomplete), "
        "which are refused (409) by default",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``agentreplay`` argument parser, with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="agentreplay",
        description="See, check and fix pytest-agentreplay cassettes (and vcrpy / "
        "pytest-recording ones) without writing code.",
        epilog="Run 'agentreplay COMMAND --help' for the options of a command.\n\n"
        + _exit_codes(
            "success: shown, clean, converted, no differences",
            "findings: lint problems, diff differences, redact --check changes, "
            "a secret that stopped a write",
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"agentreplay {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in (_inspect, _lint, _fold, _redact, _convert, _diff, _import_trace, _serve):
        add(commands)
    return parser


# Each subcommand's module and function, imported when it runs.
_COMMANDS: dict[str, tuple[str, str]] = {
    "inspect": (".inspect", "run_inspect"),
    "fold": (".inspect", "run_fold"),
    "lint": (".lint", "run_lint"),
    "redact": (".redact", "run_redact"),
    "convert": (".convert", "run_convert"),
    "diff": (".diff", "run_diff"),
    "import-trace": (".import_trace", "run_import_trace"),
    "serve": (".serve", "run_serve"),
}


def _command(name: str) -> Callable[[argparse.Namespace, Output], int]:
    module_name, function = _COMMANDS[name]
    module = importlib.import_module(module_name, __name__)
    run: Callable[[argparse.Namespace, Output], int] = getattr(module, function)
    return run


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agentreplay`` with ``argv`` (default: the process arguments); the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    output = Output()
    try:
        code = _command(args.command)(args, output)
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
    output.mask = importlib.import_module(".redact", "pytest_agentreplay").default_scrubber().mask
    output.note(traceback.format_exc().rstrip())
    output.note("agentreplay: internal error (the traceback above); please report it")
    return EXIT_ERROR
