"""Cassette files: the one reader (any supported format) and the one writer.

``load`` / ``loads`` read our YAML and, converted at load time (the file on
disk is never modified), vcrpy / pytest-recording YAML (stock, pydantic-ai's
and crewAI's serializers), the anthropic SDK's ``http-snapshot`` JSON, and bare
SSE bodies. Every problem with a file — empty, truncated, invalid UTF-8, an
unsupported version, a missing key, a wrong type, a duplicate key, a git merge
conflict, an unsafe tag, an alias bomb — is one :class:`CassetteFormatError`
that names the file, line, column and field path and says what to do.

Everything that reads a cassette comes here: replay, the ``agentreplay`` command,
``convert``, snapshots. A file the plugin wrote takes the fast path: the
canonical reader (:mod:`.yaml.fast`) parses it without PyYAML, the model is built
from what it read, and the result is accepted only if the writer gives back the
file's exact text: proven line by line as the reader reads (:mod:`.yaml.layout`), or
else by writing it again to compare. Anything else (a hand edit, another tool's file,
an error to explain) goes through the safe libyaml loader, imported only then. Both paths
build the model with the same function (:func:`from_data` is its public face),
so they yield the same objects.

``save`` scrubs, dumps, checks for surviving secrets, verifies that the text
loads back to the same cassette, and only then replaces the file atomically.
Wrap read-merge-write cycles in :func:`locked`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from .. import jsonparse
from ..errors import CassetteFormatError, TooDeepError, field_path
from ..redact.scrubber import Scrubber as DefaultRules
from . import atomic as _files
from .big_file import built_event, load_big
from .cassette import Cassette, cassette_from_data
from .errors import CassetteValueError
from .fields import CASSETTE_VERSION, looks_canonical
from .formats.detect import Format, detect_data, detect_text
from .formats.errors import ShapeError
from .formats.http_snapshot import from_http_snapshot
from .formats.raw_sse import from_raw_sse
from .formats.vcrpy import from_vcr_data, vcr_versioned
from .normal import normalized
from .reading import read_file
from .verify import verify_file
from .yaml.emit import dump_cassette, dump_interactions, iter_interactions
from .yaml.errors import NotCanonicalError, UnstorableError
from .yaml.fast import read_written
from .yaml.layout import lays_out

__all__ = [
    "CassetteFormatError",
    "Scrubber",
    "detect_format",
    "dumps",
    "from_data",
    "load",
    "load_with_format",
    "loads",
    "locked",
    "save",
]

_CONFLICT = re.compile(r"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)
_EMPTY_HINT = "Delete it and re-record with --agentreplay-record-mode=once."


class Scrubber(Protocol):
    """Removes secrets before a cassette is written (implemented by ``redact``)."""

    def scrub(self, cassette: Cassette) -> Cassette:
        """A scrubbed copy of ``cassette`` (the argument is left unchanged)."""
        ...

    def check(self, text: str, path: Path) -> None:
        """Raise if a secret survived in ``text``, about to be written to ``path``."""
        ...


# --- text-level checks -----------------------------------------------------------------


def _text(raw: str | bytes, path: str) -> str:
    """Decoded text without a BOM; invalid UTF-8 is an error naming the byte offset."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            before = raw[: exc.start]
            line = before.count(b"\n") + 1
            column = exc.start - (before.rfind(b"\n") + 1) + 1
            raise CassetteFormatError(
                f"invalid UTF-8 at byte offset {exc.start}",
                path=path,
                line=line,
                column=column,
                hint="Cassettes are UTF-8 text; the file may be corrupt or not a cassette. "
                + _EMPTY_HINT,
            ) from None
    else:
        text = raw
    return text[1:] if text.startswith("\ufeff") else text


def _check_text(text: str, path: str) -> None:
    if not text.strip():
        raise CassetteFormatError("the file is empty", path=path, hint=_EMPTY_HINT)
    conflict = _CONFLICT.search(text)
    if conflict is not None:
        line = text.count("\n", 0, conflict.start()) + 1
        raise CassetteFormatError(
            "holds git merge-conflict markers",
            path=path,
            line=line,
            column=1,
            hint="Resolve the merge conflict or re-record the cassette.",
        )


def detect_format(text: str | bytes) -> Format:
    """Which format ``text`` is in: ``agentreplay``, ``vcrpy``, ``http-snapshot`` or ``raw-sse``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return detect_text(text)


# --- reading ---------------------------------------------------------------------------


# PyYAML (``.yaml.load``) is imported on first use: the files the plugin writes load
# through ``_fast``, so a replay-only run never pays for it (about 12 ms, bench/ W4).


def _load_yaml(text: str, path: str) -> Any:
    """``text`` parsed by the safe libyaml loader (see ``.yaml.load``)."""
    from .yaml.load import load_yaml  # noqa: PLC0415 - see above

    return load_yaml(text, path)


def _locate(text: str, loc: tuple[str | int, ...]) -> tuple[int, int] | None:
    """Line and column of the field at ``loc`` in the YAML ``text``, if it is there."""
    from .yaml.nodes import NodeLocator  # noqa: PLC0415 - see above

    return NodeLocator(text).position(loc)


def _fast(text: str) -> Cassette | None:
    """A file the plugin wrote, read without libyaml: the model built from what the
    canonical reader read, accepted only if the writer gives back the exact text (so
    anything it could misread, and every value the model would change, goes the slow
    way). The canonical reader builds JSON values only: the JSON walk is skipped."""
    if not looks_canonical(text):
        return None
    try:
        data, proven = read_written(text, event=built_event)
        cassette = cassette_from_data(data, json_checked=True)
        if proven and lays_out(cassette.interactions, cassette.version, data):
            return cassette  # each line was the writer's (issue 29: not written again)
        written = dump_interactions(cassette.interactions, cassette.version)
    except (NotCanonicalError, CassetteValueError, UnstorableError, RecursionError):
        return None
    return cassette if written == text else None


def _check_top(data: Any, text: str, path: str) -> dict[str, Any]:
    """The top level: a mapping with a supported ``version`` and ``interactions``."""
    if not isinstance(data, dict):
        kind = "nothing but comments" if data is None else f"a {type(data).__name__}"
        raise CassetteFormatError(
            f"the top level is {kind}, not a mapping with 'interactions' and 'version'",
            path=path,
            line=1,
            column=1,
        )
    if "version" not in data:
        raise CassetteFormatError(
            "no 'version' key: the file looks truncated (a cassette ends with 'version: 1')",
            path=path,
            line=text.count("\n") + 1,
            column=1,
        )
    version = data["version"]
    if type(version) is not int or version != CASSETTE_VERSION:
        where = _locate(text, ("version",)) or (None, None)
        raise CassetteFormatError(
            f"unsupported version {repr(version)[:20]}; this pytest-agentreplay reads "
            f"version {CASSETTE_VERSION}",
            path=path,
            line=where[0],
            column=where[1],
            field="version",
            hint="Upgrade pytest-agentreplay, or re-record the cassette.",
        )
    if "interactions" not in data:
        raise CassetteFormatError("no 'interactions' key", path=path, line=1, column=1)
    return data


def _validate(data: Any, path: str, text: str | None = None) -> Cassette:
    """The model of cassette ``data``; a bad value is located in ``text``, the YAML it
    was read from, when there is one (not for a file converted from another format)."""
    try:
        return cassette_from_data(data)
    except CassetteValueError as exc:
        where = _locate(text, exc.loc) if text is not None else None
        raise CassetteFormatError(
            exc.problem,
            path=path,
            line=where[0] if where else None,
            column=where[1] if where else None,
            field=field_path(exc.loc) or None,
        ) from None


def _shape_error(exc: ShapeError, text: str, path: str, located: bool) -> CassetteFormatError:
    where = _locate(text, exc.loc) if located else None
    return CassetteFormatError(
        exc.problem,
        path=path,
        line=where[0] if where else None,
        column=where[1] if where else None,
        field=field_path(exc.loc) or None,
    )


def _from_json(text: str, path: str) -> Any:
    try:
        return jsonparse.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteFormatError(
            f"not valid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno
        ) from None
    except TooDeepError as exc:
        raise CassetteFormatError(str(exc), path=path) from None
    except ValueError:  # not a JSONDecodeError: an integer Python refuses to read
        raise _long_integer(text, path) from None


def _long_integer(text: str, path: str) -> CassetteFormatError:
    """The error for a JSON integer longer than Python reads (``json.loads`` raises a bare
    ``ValueError`` without a position, which every command reported as an internal error:
    issue 18), located by the first run of that many digits."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d{{{limit + 1},}}", text)
    start = found.start() if found else 0
    line = text.count("\n", 0, start) + 1
    return CassetteFormatError(
        f"an integer of {len(found.group()) if found else limit + 1:,} digits; Python reads "
        f"at most {limit:,} (quote it to keep it as text)",
        path=path,
        line=line if found else None,
        column=start - (text.rfind("\n", 0, start) + 1) + 1 if found else None,
    )


def _convert(text: str, path: str) -> tuple[Any, Format]:
    """The cassette data of ``text`` in our layout, and the format it came from."""
    kind = detect_text(text)
    try:
        if kind == "raw-sse":
            return from_raw_sse(text.encode("utf-8")), kind
        if kind == "http-snapshot":
            return from_http_snapshot(_from_json(text, path)), kind
        data = _load_yaml(text, path)
        if detect_data(data) == "vcrpy":
            return from_vcr_data(_check_top(vcr_versioned(data, text), text, path)), "vcrpy"
        return _check_top(data, text, path), "agentreplay"
    except ShapeError as exc:
        raise _shape_error(exc, text, path, located=kind != "http-snapshot") from None


def loads(text: str | bytes, *, path: str = "<string>") -> Cassette:
    """Parse a cassette in any supported format (see :func:`detect_format`)."""
    decoded = _text(text, path)
    fast = _fast(decoded)
    if fast is not None:
        return fast
    _check_text(decoded, path)
    data, source = _convert(decoded, path)
    return _validate(data, path, decoded if source == "agentreplay" else None)


def load(path: str | os.PathLike[str]) -> Cassette:
    """Read and parse the cassette file at ``path``."""
    name = os.fspath(path)
    big = load_big(name)  # a big file the plugin wrote, never held whole (issue 18)
    if big is not None:
        return big
    return loads(read_file(name), path=name)  # a regular file of bounded size (issue 27)


def load_with_format(
    path: str | os.PathLike[str], *, lazy: bool = False
) -> tuple[Cassette, Format]:
    """The cassette file at ``path`` and the format it is in: a vcrpy file replays with
    vcrpy's default matching (issue 20), so the session needs to know where it came from.

    ``lazy`` (replay's load): a big file's streams keep their event lines, each event
    built and checked when it is reached (:mod:`.lazy_events`); a line that cannot be
    read raises then, naming the file and the line. Without it, every line is read now.
    """
    name = os.fspath(path)
    big = load_big(name, lazy=lazy)
    if big is not None:
        return big, "agentreplay"
    raw = read_file(name)
    return loads(raw, path=name), detect_format(raw)


def from_data(data: Any, *, path: str = "<data>") -> Cassette:
    """The cassette that parsed cassette ``data`` describes — what a file holds, as
    ``Cassette.to_data()`` gives it — checked as a file is: a bad value raises
    :class:`CassetteFormatError` naming its field (``path`` names the source)."""
    return _validate(data, path)


# --- writing ---------------------------------------------------------------------------


def _unsaveable(exc: CassetteValueError, path: str) -> CassetteFormatError:
    """A value changed into a bad one since the cassette was built, found on saving."""
    field = field_path(exc.loc) or None
    return CassetteFormatError(
        exc.problem, path=path, field=field, hint="Fix the value before saving."
    )


def _normal(cassette: Cassette, path: str) -> Cassette:
    """The cassette checked again: names lower-cased, wire-only headers dropped, values
    changed since it was built re-checked."""
    try:
        return normalized(cassette)
    except CassetteValueError as exc:
        raise _unsaveable(exc, path) from None


def _unstorable(exc: UnstorableError, path: str) -> CassetteFormatError:
    return CassetteFormatError(
        exc.problem,
        path=path,
        field=field_path(exc.where) or None,
        hint="Store this body as text (body) or bytes (body_b64) instead.",
    )


def _dump(normal: Cassette, path: str) -> str:
    """The text of a normalized cassette."""
    try:
        return dump_cassette(normal)
    except UnstorableError as exc:
        raise _unstorable(exc, path) from None


def _pieces(normal: Cassette, path: str) -> Iterator[str]:
    """The text of a normalized cassette in pieces (a stream's events a batch at a
    time), so that a big one is never held whole (issue 18)."""
    try:
        yield from iter_interactions(normal.interactions, normal.version)
    except UnstorableError:
        _dump(normal, path)  # raises, naming the field
        raise


def dumps(cassette: Cassette) -> str:
    """The canonical YAML text of ``cassette``: byte-stable, unwrapped, one line per event."""
    return _dump(_normal(cassette, "<dumps>"), "<dumps>")


def save(
    path: str | os.PathLike[str],
    cassette: Cassette,
    *,
    scrubber: Scrubber | None = None,
    scrub: bool = True,
) -> None:
    """Scrub, dump, check, verify and atomically write ``cassette`` to ``path``.

    Secrets never reach disk by default: without a ``scrubber`` the default rules
    (``Scrubber()``) scrub the cassette and the backstop checks the text, as on every
    write path of the plugin. ``scrub=False`` writes it as given — for a test that
    needs a cassette holding a key-shaped string on purpose. Nothing reaches the
    final name unless every step passed; on any failure the old file (if any) is left
    byte-identical.

    The text goes to a temporary file a piece at a time, each piece scanned before it
    is written (so no unscanned text reaches disk), and is verified by reading that
    file back line by line before it replaces the old one: a 50 MB stream is written
    without its text in memory (issue 18).
    """
    target = Path(os.fspath(path))
    if scrub and scrubber is None:
        scrubber = DefaultRules()
    if scrubber is not None:
        try:
            cassette = scrubber.scrub(cassette)
        except CassetteValueError as exc:
            raise _unsaveable(exc, str(target)) from None
    normal = _normal(cassette, str(target))
    pieces: Iterable[str] = _pieces(normal, str(target))
    if isinstance(scrubber, DefaultRules):
        # It also reads what the text does not show: the bytes of a body_b64, a
        # stream's text as a client assembles it (issue 18).
        whole = partial(_dump, normal, str(target))
        pieces = scrubber.checked(pieces, target, cassette=normal, whole=whole)
    elif scrubber is not None:
        text = _dump(normal, str(target))
        scrubber.check(text, target)
        pieces = [text]
    with _files.atomic_writer(target) as (handle, written):
        for piece in pieces:
            handle.write(piece.encode("utf-8"))
        handle.flush()
        fast, safe = partial(loads, path=str(target)), partial(_libyaml_loads, path=str(target))
        verify_file(written, normal, str(target), fast=fast, safe=safe)


def _libyaml_loads(raw: bytes, path: str) -> Cassette:
    """The cassette in ``raw`` read by the safe libyaml loader only (no fast path)."""
    text = _text(raw, path)
    return _validate(_load_yaml(text, path), path, text)


@contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive inter-process lock on the cassette at ``path``.

    For read-merge-write cycles that several processes (xdist workers) may run on
    one cassette at once::

        with locked(path):
            cassette = load(path) if path.exists() else Cassette()
            cassette.interactions.extend(new_interactions)
            save(path, cassette, scrubber=scrubber)

    ``save`` alone is atomic (readers never see a half-written file) but two
    unlocked writers can still lose each other's interactions; the lock closes
    that gap. It is ``fcntl.flock`` on a sibling ``<name>.lock`` file, deleted on
    release, works across processes and threads, and is not re-entrant.
    """
    with _files.locked(path):
        yield
