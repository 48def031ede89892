"""``agentreplay lint``: keep a repository's cassettes healthy in CI.

Each check (see :data:`LINT_CHECKS`) yields :class:`~.lint_checks.Finding`
objects naming the file, line, interaction and field: the checks of a whole file are
in :mod:`.lint_checks`, those of each streamed interaction in :mod:`.lint_streams`.
This module defines the command's options, runs the checks on every file given and
prints the findings as text, GitHub annotations or JSON; every line printed goes
through the scrubber's ``mask``.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from ..cassettes.io import CassetteFormatError, detect_format, loads
from ..redact.scrubber import Scrubber
from .analysis import Source, decode_source, read_bytes
from .common import EXIT_FINDINGS, EXIT_OK, Output, cassette_files, reading
from .lint_checks import (
    Finding,
    LintContext,
    check_hidden_secrets,
    check_secrets,
    check_stored_headers,
    check_unplayed,
    check_unscrubbed,
)
from .lint_streams import check_interactions
from .options import FORMATS, exit_codes
from .origins import origin_lines
from .redact import add_scrub_options, build_scrubber

__all__ = ["LINT_CHECKS", "Finding", "configure", "lint_file", "run"]

LINT_CHECKS: dict[str, str] = {
    "schema": "the file does not load: empty, truncated, invalid UTF-8, unsupported "
    "version, a wrong key or type (with line, column and field path)",
    "secret": "a key-shaped string, or the value of an API-key environment variable "
    "(named by field and kind, never shown)",
    "unscrubbed": "a credential header, query parameter or JSON key that the current "
    "scrubbing rules would redact (agentreplay files; fix with 'agentreplay redact')",
    "sse-tail": "a stream ends without the blank line that closes its last event "
    "(both SDKs drop that event)",
    "sse-event-name": "an Anthropic or OpenAI Responses stream has events without an "
    "'event:' name (the Anthropic SDK skips them)",
    "sse-done": "an OpenAI Chat Completions stream does not end with 'data: [DONE]'",
    "content-type": "a stream whose content-type is not text/event-stream, or an "
    "event-stream body stored under another content-type",
    "fold": "a provider stream does not fold cleanly with its codec (malformed or "
    "unknown events, no terminal event)",
    "incomplete": "a stream recorded while the run was interrupted (end: incomplete; "
    "refused on replay)",
    "content-length": "a stored content-length that disagrees with the body a replayer "
    "sends (vcrpy and http-snapshot files)",
    "content-encoding": "a content-encoding header on a body that is not encoded that way",
    "unplayed": "an interaction no test played the last time pytest ran the tests that "
    "use this cassette (read from pytest's cache, .pytest_cache, when present)",
}
"""The checks of ``agentreplay lint``, by name (``--ignore`` / ``--select`` take these)."""


def _checks(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in LINT_CHECKS]
    if unknown:
        known = ", ".join(LINT_CHECKS)
        raise argparse.ArgumentTypeError(f"unknown check {unknown[0]!r} (known: {known})")
    return names


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay lint``."""
    checks = "\n".join(
        textwrap.fill(f"{name:<17} {text}", 79, initial_indent="  ", subsequent_indent=" " * 20)
        for name, text in LINT_CHECKS.items()
    )
    parser.description = (
        "Check cassette files, and the cassettes under folders, for the problems below. "
        "In a folder, *.yaml / *.yml files with a top-level 'interactions' key, *.json "
        "files holding an array of exchanges and *.sse / *.sse.txt / *.sse.bin bodies are "
        "checked; other files and hidden folders are left out. A file that does not load "
        "is a finding (check 'schema'), not an error. Findings name the file, line, "
        "interaction and field; secrets are never shown. " + FORMATS
    )
    parser.epilog = f"checks:\n{checks}\n\n" + exit_codes(
        "no findings", "findings (each printed; a summary line ends the text)"
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
    add_scrub_options(parser)


def lint_file(path: Path, scrubber: Scrubber) -> list[Finding]:
    """Every finding of every check for one file."""
    raw = read_bytes(path)
    text = decode_source(raw)
    fmt = detect_format(raw)
    found = check_secrets(path, text, scrubber, fmt)
    try:
        cassette = loads(raw, path=str(path))
    except CassetteFormatError as exc:
        schema = Finding(str(path), "schema", exc.problem, exc.line, exc.column, exc.field)
        schema.message += f". {exc.hint}" if exc.hint else ""
        return [schema, *found]
    ctx = LintContext(Source(path, text, fmt, cassette), scrubber)
    check_hidden_secrets(ctx)
    check_interactions(ctx)
    check_stored_headers(ctx)
    check_unscrubbed(ctx)
    check_unplayed(ctx)
    return [*found, *ctx.found]


def _enabled(args: argparse.Namespace) -> set[str]:
    chosen = set(args.select or LINT_CHECKS)
    return chosen - set(args.ignore)


def _findings(args: argparse.Namespace, scrubber: Scrubber) -> Iterator[tuple[Path, list[Finding]]]:
    enabled = _enabled(args)
    for path in cassette_files(args.paths):
        with reading(path):
            found = [f for f in lint_file(path, scrubber) if f.check in enabled]
        found.sort(key=lambda f: (f.line or 0, f.column or 0))
        yield path, found


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay lint PATH...``."""
    scrubber = build_scrubber(args)
    output.mask = scrubber.mask
    files = dirty = total = 0
    collected: list[Finding] = []
    for _path, found in _findings(args, scrubber):
        files += 1
        dirty += bool(found)
        total += len(found)
        if args.format == "json":
            collected.extend(found)
        elif args.format == "github":
            output.lines(f.github() for f in found)
        else:
            output.lines(f.text() for f in found)
        if args.format != "json":
            output.lines(_imported(_path))
    if args.format == "json":
        output.print(json.dumps([asdict(f) for f in collected], indent=2, ensure_ascii=False))
    elif args.format == "text":
        output.print(_summary(files, dirty, total))
    else:
        output.note(_summary(files, dirty, total))
    return EXIT_FINDINGS if total else EXIT_OK


def _imported(path: Path) -> list[str]:
    """``path: interaction #n: origin ...`` for each interaction imported from a trace:
    not a problem, but what a reviewer of a finding about it must know."""
    try:
        cassette = loads(read_bytes(path), path=str(path))
    except CassetteFormatError:
        return []  # reported by the schema check
    return [
        f"{path}: interaction #{n}: {line}"
        for n, interaction in enumerate(cassette.interactions)
        for line in origin_lines(interaction.origin)
    ]


def _summary(files: int, dirty: int, total: int) -> str:
    checked = f"{files} file{'s' * (files != 1)} checked"
    if not total:
        return f"{checked}: no problems found."
    return f"{checked}: {total} problem{'s' * (total != 1)} in {dirty} file{'s' * (dirty != 1)}."
