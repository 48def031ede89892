"""The checks of ``agentreplay lint`` on a whole file, and what every check reports.

A check adds :class:`Finding` objects to a :class:`LintContext`, naming the file,
line, column, interaction and field path. A secret is reported by where it is and
what kind it is, never by its value. The checks of each streamed interaction
(framing, event names, folding) are in :mod:`.lint_streams`.

Interactions left unplayed by the last test run are read from pytest's cache
(``.pytest_cache``, in the cassette's folder or any above it), where the plugin
leaves them at the end of every run that replayed the cassette.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..cassettes.unplayed import last_run_unplayed
from ..cassettes.yaml.nodes import NodeLocator
from ..redact.scrubber import Scrubber
from .analysis import Source
from .raw_file import encoded_as, parse_field_path, raw_responses, source_loc
from .redact import changes

__all__ = [
    "Finding",
    "LintContext",
    "check_hidden_secrets",
    "check_secrets",
    "check_stored_headers",
    "check_unplayed",
    "check_unscrubbed",
]


@dataclass
class Finding:
    """One problem: which check, where (file, line, column, field path), and what."""

    path: str
    check: str
    message: str
    line: int | None = None
    column: int | None = None
    field: str | None = None

    def text(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        field = f"{self.field}: " if self.field else ""
        return f"{where}: {self.check}: {field}{self.message}"

    def github(self) -> str:
        props = [f"file={_escape_property(self.path)}"]
        if self.line is not None:
            props.append(f"line={self.line}")
            if self.column is not None:
                props.append(f"col={self.column}")
        props.append(f"title={_escape_property('agentreplay ' + self.check)}")
        field = f"{self.field}: " if self.field else ""
        return f"::error {','.join(props)}::{_escape_data(field + self.message)}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


class LintContext:
    """One file being linted: its source, located findings, the scrubber."""

    def __init__(self, source: Source, scrubber: Scrubber) -> None:
        self.source = source
        self.scrubber = scrubber
        self.locator = NodeLocator(source.text)
        self.found: list[Finding] = []

    def add(self, check: str, message: str, index: int | None = None, *rest: str | int) -> None:
        field = None
        where = None
        if index is not None:
            field = f"interactions[{index}]" + "".join(
                f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest
            )
            where = self._where(index, rest)
        self.found.append(
            Finding(
                str(self.source.path),
                check,
                message,
                where[0] if where else None,
                where[1] if where else None,
                field,
            )
        )

    def position(self, loc: tuple[str | int, ...]) -> tuple[int, int] | None:
        """Line and column of a field path in the file (header names in any case)."""
        return self.locator.position(loc, any_case=True)

    def _where(self, index: int, rest: tuple[str | int, ...]) -> tuple[int, int] | None:
        if self.source.format != "raw-sse":
            return self.locator.position(
                source_loc(self.source.format, index, *rest), any_case=True
            )
        tail = self.source.cassette.interactions[index].response.tail
        if "tail" in rest and tail and self.source.text.endswith(tail):
            return self.source.text[: -len(tail)].count("\n") + 1, 1
        return None


def check_unplayed(ctx: LintContext) -> None:
    """``unplayed``: interactions no test played in the last run that used the file."""
    for index in last_run_unplayed(ctx.source.path) or ():
        if index < len(ctx.source.cassette.interactions):
            ctx.add(
                "unplayed",
                "no test played this interaction in the last run "
                "(delete it, or re-record the cassette)",
                index,
            )


def check_stored_headers(ctx: LintContext) -> None:
    """``content-length`` / ``content-encoding``: stored headers that disagree with the
    body a replay sends (as vcrpy or http-snapshot sends it, or ``body_b64``)."""
    for raw in raw_responses(ctx.source):
        if raw.sent is None:
            continue
        declared = raw.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) != len(raw.sent):
            ctx.add(
                "content-length",
                f"content-length {declared} but the body a replay sends is {len(raw.sent):,} "
                "bytes: a client that trusts the header reads a cut or incomplete body "
                "(drop the header)",
                raw.index,
                "response",
                "headers",
                "content-length",
            )
        encoding = raw.headers.get("content-encoding", "")
        if raw.raw_body and raw.sent and encoded_as(raw.sent, encoding) is False:
            ctx.add(
                "content-encoding",
                f"content-encoding {encoding!r} but the stored body is not encoded "
                "(httpx fails to decode it; drop the header)",
                raw.index,
                "response",
                "headers",
                "content-encoding",
            )
    _check_b64_encoding(ctx)


def _check_b64_encoding(ctx: LintContext) -> None:
    """A ``body_b64`` whose content-encoding header says it is encoded when it is not."""
    for index, interaction in enumerate(ctx.source.cassette.interactions):
        response = interaction.response
        encoding = response.headers.get("content-encoding", "")
        if response.body_b64 is None or not encoding:
            continue
        if encoded_as(response.content(), encoding) is False:
            ctx.add(
                "content-encoding",
                f"content-encoding {encoding!r} but body_b64 is not encoded that way",
                index,
                "response",
                "headers",
                "content-encoding",
            )


def check_unscrubbed(ctx: LintContext) -> None:
    """``unscrubbed``: what the current rules would redact in an agentreplay file."""
    if ctx.source.format != "agentreplay":
        return
    cassette = ctx.source.cassette
    for change in changes(cassette, ctx.scrubber.scrub(cassette)):
        if change.action != "redacted":
            continue
        parts = parse_field_path(change.where) or ()
        where = ctx.position(parts) if parts else None
        detail = f" ({change.detail})" if change.detail else ""
        ctx.found.append(
            Finding(
                str(ctx.source.path),
                "unscrubbed",
                f"the current scrubbing rules would redact this{detail}: run "
                "'agentreplay redact' on the file",
                where[0] if where else None,
                where[1] if where else None,
                change.where,
            )
        )


def check_secrets(path: Path, text: str, scrubber: Scrubber, fmt: str) -> list[Finding]:
    """``secret``: key-shaped strings in the file's text, located, never shown (run on
    the text, so a file that does not load is scanned too)."""
    locator = NodeLocator(text) if fmt != "raw-sse" else None
    found = []
    for hit in scrubber.scan(text):
        parts = parse_field_path(hit.where)
        where = locator.position(parts, any_case=True) if locator is not None and parts else None
        line = where[0] if where else _line_of(hit.where)
        found.append(
            Finding(
                str(path),
                "secret",
                f"{hit.kind} (value not shown): scrub it, or re-record",
                line,
                where[1] if where else None,
                None if hit.where.startswith("line ") else hit.where,
            )
        )
    return found


def check_hidden_secrets(ctx: LintContext) -> None:
    """``secret``: what the text does not show as text — the decoded bytes of each
    ``body_b64`` (compressed, or a binary upload), and a stream's text as a client
    assembles it from its deltas (a key split across events)."""
    for hit in ctx.scrubber.scan_cassette(ctx.source.cassette):
        parts = parse_field_path(hit.where)
        where = (
            ctx.locator.position(parts, any_case=True)
            if parts and ctx.source.format != "raw-sse"
            else None
        )
        ctx.found.append(
            Finding(
                str(ctx.source.path),
                "secret",
                f"{hit.kind} (value not shown): scrub it, or re-record",
                where[0] if where else None,
                where[1] if where else None,
                hit.where,
            )
        )


def _line_of(where: str) -> int | None:
    text = where.removeprefix("line ")
    return int(text) if where.startswith("line ") and text.isdigit() else None
