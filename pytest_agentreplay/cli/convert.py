"""``agentreplay convert``: agentreplay ⇄ vcrpy / pytest-recording cassettes.

Both targets are scrubbed, and the final text is checked by the secret scan
before anything is written. Writing agentreplay YAML goes through
:func:`~..cassettes.io.save`; vcrpy YAML (written by
:mod:`~..cassettes.formats.vcrpy`) atomically under the cassette lock.

What a target cannot hold is listed in a warning, not silently dropped.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..cassettes import atomic as _files
from ..cassettes.cassette import Cassette, RecordedResponse
from ..cassettes.fields import decode_content
from ..cassettes.formats.detect import foreign_file
from ..cassettes.formats.vcrpy import response_bytes, vcr_text
from ..cassettes.io import dumps, locked, save
from ..cassettes.reading import is_regular_file
from ..cassettes.yaml.comments import comment_lines
from ..redact.errors import SecretLeakError
from ..redact.scrubber import Scrubber
from .analysis import Source, read_source
from .common import EXIT_FINDINGS, EXIT_OK, Output, reading, write_failed
from .errors import CLIError
from .options import FORMATS, exit_codes
from .raw_file import raw_document, raw_responses
from .redact import add_scrub_options, build_scrubber, changes, leak_reason, summary

__all__ = ["configure", "losses", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay convert``."""
    parser.description = (
        "Convert a cassette to agentreplay YAML or to vcrpy / pytest-recording YAML. "
        + FORMATS
        + " The conversion is lossless where the target can hold the data; a warning on "
        "stderr lists what it cannot (vcrpy: event arrival times, how a stream ended "
        "other than normally; agentreplay: status reason phrases, repeated header "
        "values, SSE line endings, JSON body whitespace, content-length headers; either: "
        "YAML comments). Both targets go through the scrubber, and the secret scan checks the "
        "text before anything is written; the file is replaced atomically. vcrpy output "
        "keeps each body as one unwrapped string (block style when it can)."
    )
    parser.epilog = exit_codes("converted", "a secret survived scrubbing (nothing was written)")
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
    add_scrub_options(parser)


# --- what the target cannot hold -------------------------------------------------------


def _plural(count: int, noun: str, nouns: str | None = None) -> str:
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def _vcr_losses(cassette: Cassette) -> list[str]:
    out = []
    timed = [(i, e) for i, x in enumerate(cassette.interactions) for e in x.response.events or ()]
    timed = [(i, e) for i, e in timed if e.t is not None]
    if timed:
        streams = len({i for i, _ in timed})
        out.append(
            f"event arrival times of {_plural(len(timed), 'event')} in "
            f"{_plural(streams, 'stream')} (vcrpy replays a body in one piece)"
        )
    ends = [x.response.end for x in cassette.interactions if x.response.end != "complete"]
    if ends:
        kinds = ", ".join(sorted(set(ends)))
        out.append(
            f"how {_plural(len(ends), 'stream')} ended ({kinds}): vcrpy replays the "
            "recorded part as a complete body"
        )
    return out


def _sent_differs(sent: bytes, headers: dict[str, str], response: RecordedResponse) -> bool:
    try:
        plain, _ = decode_content(dict(headers), sent)
    except ValueError:
        return True
    return plain != response_bytes(response)


def _raw_losses(source: Source) -> list[str]:
    """What our format does not keep of a vcrpy or http-snapshot file."""
    out = []
    responses = raw_responses(source)
    interactions = source.cassette.interactions
    wire = [r for r in responses if {"content-length", "transfer-encoding"} & r.headers.keys()]
    if wire:
        out.append(
            f"content-length / transfer-encoding headers of {_plural(len(wire), 'response')} "
            "(replay computes its own)"
        )
    crlf = [
        r for r in responses if r.sent and b"\r" in r.sent and interactions[r.index].response.events
    ]
    if crlf:
        out.append(f"CR / CRLF line endings of {_plural(len(crlf), 'stream')} (replayed with LF)")
    crlf_indexes = {r.index for r in crlf}
    reshaped = [
        r
        for r in responses
        if r.sent is not None
        and r.index not in crlf_indexes
        and _sent_differs(r.sent, r.headers, interactions[r.index].response)
    ]
    if reshaped:
        out.append(
            f"the exact bytes of {_plural(len(reshaped), 'body', 'bodies')} (JSON is stored parsed "
            "and sent compactly; content-encoding decoded)"
        )
    out.extend(_reshaped_losses(source))
    return out


def _reshaped_losses(source: Source) -> list[str]:
    """What reading the file reshaped, as its format's home counts it."""
    home = foreign_file(source.format)
    if home is None:
        return []
    reshaped = home.reshaped(raw_document(source))
    out = []
    if reshaped.repeated_headers:
        repeated = _plural(reshaped.repeated_headers, "repeated header")
        out.append(f"{repeated} (values joined with ', ')")
    if reshaped.reason_phrases:
        out.append(_plural(reshaped.reason_phrases, "non-standard status reason phrase"))
    return out


def losses(source: Source, target: str) -> list[str]:
    """What converting ``source`` to ``target`` cannot keep, one phrase each."""
    out = _vcr_losses(source.cassette) if target == "vcrpy" else []
    if target == "agentreplay":
        out.extend(_raw_losses(source))
        if source.format == "raw-sse":
            out.append("a request (a bare SSE body has none: its URL was guessed from the events)")
    if source.format in ("agentreplay", "vcrpy"):
        count = comment_lines(source.text)
        if count:
            out.append(f"{_plural(count, 'YAML comment line')}")
    return out


# --- the command -----------------------------------------------------------------------


def _write(target: Path, text: str, scrubbed: Cassette, to: str, scrubber: Scrubber) -> None:
    try:
        with locked(target):
            if to == "agentreplay":
                save(target, scrubbed, scrubber=scrubber)
            else:
                _files.atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise write_failed(target, exc) from None


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay convert PATH --to {agentreplay,vcrpy} [-o OUT]``."""
    scrubber = build_scrubber(args)
    output.mask = scrubber.mask
    target = Path(args.output) if args.output else None
    if target is not None:
        _check_target(target)
    with reading(args.path):
        return _convert(args, output, scrubber, target)


def _check_target(target: Path) -> None:
    """The output is written atomically: a new file renamed over the old one, which
    would replace a named pipe or a device (``-o /dev/stdout``) with a regular file."""
    if os.path.lexists(target) and not is_regular_file(target):
        raise CLIError(
            target,
            "is not a regular file; convert writes files only (leave -o out to write to "
            "standard output)",
        )


def _convert(
    args: argparse.Namespace, output: Output, scrubber: Scrubber, target: Path | None
) -> int:
    source = read_source(args.path)
    scrubbed = scrubber.scrub(source.cassette)
    text = dumps(scrubbed) if args.to == "agentreplay" else vcr_text(scrubbed)
    try:
        # Opaque bodies and streams as a client assembles them too (issue 27: convert
        # to vcrpy scanned the text only).
        scrubber.check(text, target, cassette=scrubbed)
    except SecretLeakError as exc:
        output.error(CLIError(source.path, leak_reason(exc)))
        return EXIT_FINDINGS
    if target is None:
        output.write(text)
    else:
        _write(target, text, scrubbed, args.to, scrubber)
    lost = losses(source, args.to)
    if lost:
        output.note(f"warning: the {args.to} format cannot hold: " + "; ".join(lost))
    scrub = changes(source.cassette, scrubbed)
    if scrub:
        output.note(f"scrubbed: {summary(scrub)} field(s)")
    if target is not None:
        count = len(scrubbed.interactions)
        output.note(f"wrote {target}: {args.to}, {_plural(count, 'interaction')}")
    return EXIT_OK
