"""``agentreplay lint``: keep a repository's cassettes healthy in CI.

Each check (see :data:`~.common.LINT_CHECKS`) yields
:class:`Finding` objects naming the file, line, interaction and field. A secret is
reported by where it is and what kind it is, never by its value, and every line
printed goes through the scrubber's ``mask`` as well.

Interactions left unplayed by the last test run are read from pytest's cache
(``.pytest_cache``, in the cassette's folder or any above it), where the plugin
leaves them at the end of every run that replayed the cassette.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import sse
from ..cassettes.fields import looks_like_sse
from ..cassettes.io import CassetteFormatError, detect_format, loads
from ..cassettes.model import RecordedEvent
from ..cassettes.unplayed import last_run_unplayed
from ..redact import Scrubber
from .analysis import Source, View, decode_source, event_label, read_bytes, views
from .common import EXIT_FINDINGS, EXIT_OK, LINT_CHECKS, Output, cassette_files
from .raw_file import Locator, encoded_as, parse_field_path, raw_responses, source_loc
from .redact import build_scrubber, changes

__all__ = ["Finding", "lint_file", "run_lint"]


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


class _Context:
    """One file being linted: its source, located findings, the scrubber."""

    def __init__(self, source: Source, scrubber: Scrubber) -> None:
        self.source = source
        self.scrubber = scrubber
        self.locator = Locator(source.text)
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

    def _where(self, index: int, rest: tuple[str | int, ...]) -> tuple[int, int] | None:
        if self.source.format != "raw-sse":
            return self.locator.find(source_loc(self.source.format, index, *rest))
        tail = self.source.cassette.interactions[index].response.tail
        if "tail" in rest and tail and self.source.text.endswith(tail):
            return self.source.text[: -len(tail)].count("\n") + 1, 1
        return None


# --- the checks ------------------------------------------------------------------------


def _tail_label(tail: str) -> str:
    decoded = sse.decode(tail + "\n\n").events
    if not decoded:
        return "an unterminated line"
    return f"a '{event_label(RecordedEvent.from_sse(decoded[-1]))}' event"


def _check_tail(ctx: _Context, item: View) -> None:
    response = item.response
    if response.end != "complete" or (response.tail is None and not response.truncated):
        return
    what = _tail_label(response.tail) if response.tail is not None else "its last event"
    ctx.add(
        "sse-tail",
        f"the stream ends with {what} that no blank line closes: both SDKs drop it "
        "(append an empty line)",
        item.index,
        "response",
        "tail" if response.tail is not None else "events",
    )


_NAME_NEEDED = {
    "anthropic": "the Anthropic SDK skips events without a name, so the stream reads as empty",
    "openai_responses": "OpenAI's Responses API names every event after its data 'type' "
    "(this stream was trimmed, or comes from a compatible server)",
}


def _unnamed(item: View) -> list[int]:
    """Indexes of the events a provider that dispatches on names would not see."""
    if item.provider not in _NAME_NEEDED:
        return []
    events = item.response.events or []
    return [n for n, e in enumerate(events) if e.event is None and e.data.strip() != "[DONE]"]


def _check_event_names(ctx: _Context, item: View) -> None:
    unnamed = _unnamed(item)
    if not unnamed:
        return
    reason = _NAME_NEEDED[item.provider or ""]
    events = item.response.events or []
    ctx.add(
        "sse-event-name",
        f"{len(unnamed)} of {len(events)} events have no 'event:' name (first: event "
        f"#{unnamed[0]}); {reason}",
        item.index,
        "response",
        "events",
        unnamed[0],
    )


def _check_done(ctx: _Context, item: View) -> None:
    response = item.response
    events = response.events or []
    if item.provider != "openai_chat" or response.end != "complete" or response.tail:
        return
    if item.folded is not None and item.folded.error is not None:
        return  # an error stream ends with its error event
    if events and events[-1].data.strip() == "[DONE]":
        return
    ctx.add(
        "sse-done",
        "the stream does not end with 'data: [DONE]', which OpenAI Chat Completions "
        "always sends last (clients wait for it)",
        item.index,
        "response",
        "events",
    )


def _check_content_type(ctx: _Context, item: View) -> None:
    response = item.response
    ctype = item.content_type.lower()
    if item.streaming and "text/event-stream" not in ctype:
        shown = item.content_type or "none"
        ctx.add(
            "content-type",
            f"an event stream served as content-type {shown!r}: SSE clients "
            "(httpx-sse, the SDKs) need text/event-stream",
            item.index,
            "response",
            "headers",
            "content-type",
        )
    elif response.body is not None and looks_like_sse(response.body.encode("utf-8")):
        ctx.add(
            "content-type",
            f"the body is an event stream but its content-type is {item.content_type!r}, "
            "so it is stored as text instead of events",
            item.index,
            "response",
            "headers",
            "content-type",
        )


def _check_fold(ctx: _Context, item: View) -> None:
    response = item.response
    if item.fold_problem is not None and not _unnamed(item):  # else: sse-event-name says it
        ctx.add(
            "fold",
            f"does not fold with the {item.provider} codec: {item.fold_problem}",
            item.index,
            "response",
            "events",
        )
        return
    folded = item.folded
    quiet = response.end != "complete" or response.tail is not None or response.truncated
    if folded is None or folded.complete or folded.error is not None or quiet:
        return
    if item.provider == "openai_chat":
        return  # its terminal event is [DONE]: the sse-done check reports it
    ctx.add(
        "fold",
        f"the stream never reaches the {item.provider} terminal event: the stored "
        "response is incomplete",
        item.index,
        "response",
        "events",
    )


def _check_incomplete(ctx: _Context, item: View) -> None:
    if item.response.end == "incomplete":
        ctx.add(
            "incomplete",
            "recorded while the run was interrupted: replay refuses it unless "
            "allow_incomplete=True; re-record it",
            item.index,
            "response",
            "end",
        )


_STREAM_CHECKS: tuple[Callable[[_Context, View], None], ...] = (
    _check_tail,
    _check_event_names,
    _check_done,
    _check_fold,
    _check_incomplete,
)


def _check_interactions(ctx: _Context) -> None:
    for item in views(ctx.source.cassette, strict=True):
        _check_content_type(ctx, item)
        if item.streaming:
            for check in _STREAM_CHECKS:
                check(ctx, item)


def _check_unplayed(ctx: _Context) -> None:
    for index in last_run_unplayed(ctx.source.path) or ():
        if index < len(ctx.source.cassette.interactions):
            ctx.add(
                "unplayed",
                "no test played this interaction in the last run "
                "(delete it, or re-record the cassette)",
                index,
            )


def _check_stored_headers(ctx: _Context) -> None:
    """content-length / content-encoding as a vcrpy or http-snapshot replay sends them."""
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


def _check_b64_encoding(ctx: _Context) -> None:
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


def _check_unscrubbed(ctx: _Context) -> None:
    if ctx.source.format != "agentreplay":
        return
    cassette = ctx.source.cassette
    for change in changes(cassette, ctx.scrubber.scrub(cassette)):
        if change.action != "redacted":
            continue
        parts = parse_field_path(change.where) or ()
        where = ctx.locator.find(parts) if parts else None
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


def _check_secrets(path: Path, text: str, scrubber: Scrubber, fmt: str) -> list[Finding]:
    locator = Locator(text) if fmt != "raw-sse" else None
    found = []
    for hit in scrubber.scan(text):
        parts = parse_field_path(hit.where)
        where = locator.find(parts) if locator is not None and parts else None
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


def _line_of(where: str) -> int | None:
    text = where.removeprefix("line ")
    return int(text) if where.startswith("line ") and text.isdigit() else None


def lint_file(path: Path, scrubber: Scrubber) -> list[Finding]:
    """Every finding of every check for one file."""
    raw = read_bytes(path)
    text = decode_source(raw)
    fmt = detect_format(raw)
    found = _check_secrets(path, text, scrubber, fmt)
    try:
        cassette = loads(raw, path=str(path))
    except CassetteFormatError as exc:
        schema = Finding(str(path), "schema", exc.problem, exc.line, exc.column, exc.field)
        schema.message += f". {exc.hint}" if exc.hint else ""
        return [schema, *found]
    ctx = _Context(Source(path, text, fmt, cassette), scrubber)
    _check_interactions(ctx)
    _check_stored_headers(ctx)
    _check_unscrubbed(ctx)
    _check_unplayed(ctx)
    return [*found, *ctx.found]


# --- the command -----------------------------------------------------------------------


def _enabled(args: argparse.Namespace) -> set[str]:
    chosen = set(args.select or LINT_CHECKS)
    return chosen - set(args.ignore)


def _findings(args: argparse.Namespace, scrubber: Scrubber) -> Iterator[tuple[Path, list[Finding]]]:
    enabled = _enabled(args)
    for path in cassette_files(args.paths):
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
    if args.format == "json":
        output.print(json.dumps([asdict(f) for f in collected], indent=2, ensure_ascii=False))
    elif args.format == "text":
        output.print(_summary(files, dirty, total))
    else:
        output.note(_summary(files, dirty, total))
    return EXIT_FINDINGS if total else EXIT_OK


def _summary(files: int, dirty: int, total: int) -> str:
    checked = f"{files} file{'s' * (files != 1)} checked"
    if not total:
        return f"{checked}: no problems found."
    return f"{checked}: {total} problem{'s' * (total != 1)} in {dirty} file{'s' * (dirty != 1)}."
