"""``agentreplay lint``: keep a repository's cassettes healthy in CI.

Each check (see :data:`~.common.LINT_CHECKS`) yields :class:`~.lint_checks.Finding`
objects naming the file, line, interaction and field: the checks of a whole file are
in :mod:`.lint_checks`, those of each streamed interaction in :mod:`.lint_streams`.
This module runs them on every file given and prints the findings as text, GitHub
annotations or JSON; every line printed goes through the scrubber's ``mask``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from ..cassettes.io import CassetteFormatError, detect_format, loads
from ..redact import Scrubber
from .analysis import Source, decode_source, read_bytes
from .common import EXIT_FINDINGS, EXIT_OK, LINT_CHECKS, Output, cassette_files, reading
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
from .origins import origin_lines
from .redact import build_scrubber

__all__ = ["Finding", "lint_file", "run_lint"]


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


def run_lint(args: argparse.Namespace, output: Output) -> int:
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
