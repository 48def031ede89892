"""``agentreplay redact``: re-scrub agentreplay cassettes in place, and say what changed.

The changes are listed by field path and kind (``redacted``, ``dropped``,
``normalized``), never by value. A file is rewritten only when scrubbing changes
it, through :func:`~..cassettes.io.save` (scrub, secret check,
load-back check, atomic replace) under the cassette's lock.

The scrubbing-rule options (``--extra-header`` ... ``--allow``) that ``lint`` and
``convert`` take too are defined here, beside the scrubber built from them.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..cassettes.cassette import Cassette, RecordedEvent, RecordedRequest, RecordedResponse
from ..cassettes.io import CassetteFormatError, detect_format, dumps, loads, locked, save
from ..cassettes.yaml.comments import comment_lines
from ..redact.errors import SecretLeakError
from ..redact.rules import REQUEST_ID_PLACEHOLDER
from ..redact.scrubber import Scrubber
from .analysis import decode_source, read_bytes
from .common import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    Output,
    cassette_files,
    reading,
    write_failed,
)
from .errors import CLIError
from .options import exit_codes

__all__ = [
    "Change",
    "add_scrub_options",
    "build_scrubber",
    "changes",
    "configure",
    "leak_reason",
    "run",
    "summary",
]

_LISTED = 30  # changes listed per file (the rest are counted)


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay redact``."""
    parser.description = (
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
        "or '--to agentreplay' to switch it over. YAML comments are not kept by a rewrite."
    )
    parser.epilog = exit_codes(
        "every file is clean now (rewritten or already clean)",
        "--check found files to rewrite, or a secret survived scrubbing (that file "
        "was not written)",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="cassette files or folders")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing: list what would change and exit 1 if anything would",
    )
    add_scrub_options(parser)


def add_scrub_options(parser: argparse.ArgumentParser) -> None:
    """The ``scrubbing rules`` options, read by :func:`build_scrubber`."""
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


def build_scrubber(args: argparse.Namespace) -> Scrubber:
    """The default scrubber plus the ``--extra-*`` names and ``--allow`` values."""
    return Scrubber(
        extra_headers=getattr(args, "extra_header", ()),
        extra_query_params=getattr(args, "extra_query_param", ()),
        extra_body_keys=getattr(args, "extra_body_key", ()),
        allow=getattr(args, "allow", ()),
    )


def leak_reason(exc: SecretLeakError) -> str:
    """A :class:`SecretLeakError` on one line: where and what kind, never the value."""
    shown = ", ".join(f"{f.where} ({f.kind})" for f in exc.findings[:5])
    more = f" and {len(exc.findings) - 5} more" if len(exc.findings) > 5 else ""
    return (
        f"{len(exc.findings)} secret(s) survived scrubbing: {shown}{more}; nothing was "
        "written. Remove them, add a rule (--extra-header / --extra-query-param / "
        "--extra-body-key), or --allow a known-fake value"
    )


# --- what scrubbing changed ------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One field scrubbing changed: where (a field path), how, and which parameters."""

    where: str
    action: str
    detail: str = ""

    def __str__(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.action:<10} {self.where}{detail}"


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if key and all(c not in key for c in ".[] ") else f"{path}[{key!r}]"


def _json_paths(a: Any, b: Any, path: str) -> Iterator[str]:
    """Paths where two JSON values differ (leaves, or the first differing container)."""
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for key in a:
            yield from _json_paths(a[key], b[key], _key(path, str(key)))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _json_paths(x, y, f"{path}[{i}]")
    elif a != b or type(a) is not type(b):
        yield path


def _params(url: str) -> dict[str, list[str]]:
    parts = urlsplit(url)
    found: dict[str, list[str]] = {}
    for where, text in (("query", parts.query), ("fragment", parts.fragment)):
        for name, value in parse_qsl(text, keep_blank_values=True):
            found.setdefault(f"{where} {name}", []).append(value)
    return found


def _url_detail(a: str, b: str) -> str:
    before, after = _params(a), _params(b)
    names = [name for name in before if before[name] != after.get(name)]
    if urlsplit(a).netloc != urlsplit(b).netloc:
        names.insert(0, "userinfo")
    return ", ".join(names)


def _header_changes(a: dict[str, str], b: dict[str, str], path: str) -> Iterator[Change]:
    for name, value in a.items():
        where = _key(f"{path}.headers", name)
        if name not in b:
            yield Change(where, "dropped")
        elif b[name] != value:
            normalized = b[name] == REQUEST_ID_PLACEHOLDER
            yield Change(where, "normalized" if normalized else "redacted")


def _body_changes(
    a: RecordedRequest | RecordedResponse, b: RecordedRequest | RecordedResponse, path: str
) -> Iterator[Change]:
    if a.json_body != b.json_body:
        for where in _json_paths(a.json_body, b.json_body, f"{path}.json"):
            yield Change(where, "redacted")
    if a.body != b.body:
        yield Change(f"{path}.body", "redacted")
    if a.body_b64 is not None and a.body_b64 != b.body_b64:
        # A compressed body is stored decoded; a multipart one has text parts redacted.
        yield Change(f"{path}.body_b64", "decoded" if b.body_b64 is None else "redacted")


def _event_changes(
    a: Sequence[RecordedEvent], b: Sequence[RecordedEvent], path: str
) -> Iterator[Change]:
    for n, (x, y) in enumerate(zip(a, b, strict=False)):
        if x.data != y.data:
            yield Change(f"{path}.events[{n}].data", "redacted")


def changes(before: Cassette, after: Cassette) -> list[Change]:
    """Every field that differs between a cassette and its scrubbed copy."""
    out: list[Change] = []
    for i, (x, y) in enumerate(zip(before.interactions, after.interactions, strict=True)):
        req, resp = f"interactions[{i}].request", f"interactions[{i}].response"
        if x.request.url != y.request.url:
            detail = _url_detail(x.request.url, y.request.url)
            out.append(Change(f"{req}.url", "redacted", detail))
        out.extend(_header_changes(x.request.headers, y.request.headers, req))
        out.extend(_body_changes(x.request, y.request, req))
        out.extend(_header_changes(x.response.headers, y.response.headers, resp))
        out.extend(_body_changes(x.response, y.response, resp))
        out.extend(_event_changes(x.response.events or [], y.response.events or [], resp))
    return out


def summary(found: list[Change]) -> str:
    """``3 redacted, 2 dropped`` (in the order first seen)."""
    counts = Counter(change.action for change in found)
    return ", ".join(f"{n} {action}" for action, n in counts.items())


# --- the command -----------------------------------------------------------------------


@dataclass
class _Outcome:
    status: str  # "clean", "rewritten", "would rewrite", "leak", "skipped"
    found: list[Change]


def _redact_file(path: Path, scrubber: Scrubber, check: bool, output: Output) -> _Outcome:
    if check:  # reads only: a file replaced atomically is read whole, old or new
        return _redacted(path, scrubber, check, output)
    try:
        with locked(path):
            return _redacted(path, scrubber, check, output)
    except OSError as exc:  # a full or read-only disk, the lock file not allowed
        raise write_failed(path, exc) from None


def _redacted(path: Path, scrubber: Scrubber, check: bool, output: Output) -> _Outcome:
    raw = read_bytes(path)
    try:
        cassette = loads(raw, path=str(path))
    except CassetteFormatError as exc:
        raise CLIError(None, str(exc)) from None
    scrubbed = scrubber.scrub(cassette)
    text = decode_source(raw)
    found = changes(cassette, scrubbed) + _outside_fields(scrubber, text)
    try:
        scrubber.check(dumps(scrubbed), path, cassette=scrubbed)
    except SecretLeakError as exc:
        output.error(CLIError(path, leak_reason(exc)))
        return _Outcome("leak", found)
    if not found:
        return _Outcome("clean", found)
    if check:
        return _Outcome("would rewrite", found)
    lost = comment_lines(text)
    save(path, scrubbed, scrubber=scrubber)
    if lost:
        output.note(f"warning: {path}: {lost} YAML comment line(s) were not kept")
    return _Outcome("rewritten", found)


def _outside_fields(scrubber: Scrubber, text: str) -> list[Change]:
    """Secrets in the file's bytes that no field holds: a YAML comment. The cassette
    model has no comments, so a check of it passed them (issue 27: a key in a comment
    passed ``redact --check``, the CI gate); a rewrite drops them."""
    return [
        Change(f.where, "removed", f"{f.kind}, outside any field: a comment")
        for f in scrubber.scan(text)
        if f.where.startswith("line ")
    ]


def _foreign(path: Path) -> str | None:
    """The format of a file that is not an agentreplay cassette, else ``None``."""
    fmt = detect_format(read_bytes(path)[:65536])
    return None if fmt == "agentreplay" else fmt


def _refusal(path: Path, fmt: str) -> CLIError:
    if fmt != "vcrpy":
        new = path.with_name(path.name.split(".")[0] + ".yaml")
        return CLIError(
            path,
            f"is a {fmt} file; redact rewrites agentreplay cassettes only. Convert it "
            f"first: 'agentreplay convert {path} --to agentreplay -o {new}'",
        )
    return CLIError(
        path,
        f"is a vcrpy cassette; redact rewrites agentreplay cassettes only. Scrub it and "
        f"keep its format with 'agentreplay convert {path} --to vcrpy -o {path}', or "
        f"switch it over with 'agentreplay convert {path} --to agentreplay -o {path}'",
    )


def _report(path: Path, outcome: _Outcome, output: Output) -> None:
    if outcome.status == "clean":
        output.print(f"{path}: clean")
        return
    if outcome.status == "leak":
        return
    output.print(f"{path}: {outcome.status}: {summary(outcome.found)}")
    output.lines(f"  {change}" for change in outcome.found[:_LISTED])
    if len(outcome.found) > _LISTED:
        output.print(f"  … and {len(outcome.found) - _LISTED} more")


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay redact PATH... [--check]``."""
    scrubber = build_scrubber(args)
    output.mask = scrubber.mask
    named = {Path(p) for p in args.paths if not Path(p).is_dir()}
    statuses: Counter[str] = Counter()
    for path in cassette_files(args.paths):
        try:
            with reading(path):
                status = _one(path, path in named, scrubber, args.check, output)
        except CLIError as exc:
            output.error(exc)
            status = "error"
        statuses[status] += 1
    output.print(_totals(statuses))
    if statuses["error"]:
        return EXIT_ERROR
    return EXIT_FINDINGS if statuses["leak"] or statuses["would rewrite"] else EXIT_OK


def _one(path: Path, named: bool, scrubber: Scrubber, check: bool, output: Output) -> str:
    fmt = _foreign(path)
    if fmt is not None:
        if named:
            raise _refusal(path, fmt)
        output.note(f"{path}: skipped ({fmt} format; see 'agentreplay convert')")
        return "skipped"
    outcome = _redact_file(path, scrubber, check, output)
    _report(path, outcome, output)
    return outcome.status


def _totals(statuses: Counter[str]) -> str:
    total = sum(statuses.values())
    parts = [f"{n} {status}" for status, n in sorted(statuses.items())]
    leak = " (secrets stopped a write: see above)" if statuses["leak"] else ""
    return f"{total} file(s): {', '.join(parts) or 'none'}{leak}"
