"""Cassette files: load (any supported format), validate, dump, and save atomically.

``load`` / ``loads`` read our YAML and, converted at load time (the file on
disk is never modified), vcrpy / pytest-recording YAML (stock, pydantic-ai's
and crewAI's serializers), the anthropic SDK's ``http-snapshot`` JSON, and bare
SSE bodies. Every problem with a file — empty, truncated, invalid UTF-8, an
unsupported version, a missing key, a wrong type, a duplicate key, a git merge
conflict, an unsafe tag, an alias bomb — is one :class:`CassetteFormatError`
that names the file, line, column and field path and says what to do.

Our own files are read by a fast canonical reader and checked by re-emission
(see :mod:`.yaml.fast`); anything else goes through the safe libyaml loader.

``save`` scrubs, dumps, checks for surviving secrets, verifies that the text
loads back to the same cassette, and only then replaces the file atomically.
Wrap read-merge-write cycles in :func:`locked`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from ..errors import CassetteFormatError, field_path
from ..redact import Scrubber as DefaultRules
from . import atomic as _files
from .fields import body_fields, join_headers, response_fields
from .fields import split_sse as _split_sse
from .formats import (
    Format,
    ShapeError,
    detect_data,
    detect_text,
    from_http_snapshot,
    from_raw_sse,
    from_vcr,
)
from .model import CASSETTE_VERSION, Cassette, RecordedEvent, RecordedRequest, RecordedResponse
from .records import looks_canonical
from .yaml.emit import UnstorableError, dump_cassette
from .yaml.fast import NotCanonicalError, read_canonical

__all__ = [
    "CassetteFormatError",
    "Scrubber",
    "detect_format",
    "dumps",
    "load",
    "loads",
    "locked",
    "request_from_wire",
    "response_from_wire",
    "save",
    "split_sse",
]

_CONFLICT = re.compile(r"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)
_EMPTY_HINT = "Delete it and re-record with --agentreplay-record-mode=once."
_JSON_CHECKED = {"json_checked": True}


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


# --- loading ---------------------------------------------------------------------------


# PyYAML (``._yaml_load``) is imported on first use: the files the plugin writes load
# through ``_fast``, so a replay-only run never pays for it (about 12 ms, bench/ W4).


def _load_yaml(text: str, path: str) -> Any:
    """``text`` parsed by the safe libyaml loader (see ``._yaml_load``)."""
    from .yaml.load import load_yaml  # noqa: PLC0415 - see above

    return load_yaml(text, path)


def _locate(text: str, loc: tuple[str | int, ...]) -> tuple[int, int] | None:
    """Line and column of the field at ``loc`` in the YAML ``text``, if it is there."""
    from .yaml.load import locate  # noqa: PLC0415 - see above

    return locate(text, loc)


def _fast(text: str) -> Cassette | None:
    """Our own canonical files, read without libyaml (checked by re-emission)."""
    if not looks_canonical(text):
        return None
    try:
        data = read_canonical(text)
        cassette = Cassette.model_validate(data, context={"json_checked": True})
        return cassette if dump_cassette(cassette) == text else None
    except (NotCanonicalError, ValidationError, UnstorableError):
        return None


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


def _problem(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "missing":
        return "missing"
    if kind == "extra_forbidden":
        return "unknown key (check its spelling)"
    if kind == "string_pattern_mismatch":
        return "holds a line break (or NUL) that an SSE field cannot carry"
    message = str(error["msg"])
    message = message.removeprefix("Value error, ")
    return message[:1].lower() + message[1:]


def _validate(data: Any, text: str, path: str, source: Format) -> Cassette:
    try:
        return Cassette.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0]
        loc = tuple(part for part in first["loc"] if isinstance(part, (str, int)))
        where = _locate(text, loc) if source == "agentreplay" else None
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise CassetteFormatError(
            _problem(first) + more,
            path=path,
            line=where[0] if where else None,
            column=where[1] if where else None,
            field=field_path(loc) or None,
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
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteFormatError(
            f"not valid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno
        ) from None
    except RecursionError:
        raise CassetteFormatError("JSON nests too deeply", path=path) from None


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
            return from_vcr(_check_top(data, text, path)), "vcrpy"
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
    return _validate(data, decoded, path, source)


def load(path: str | os.PathLike[str]) -> Cassette:
    """Read and parse the cassette file at ``path``."""
    name = os.fspath(path)
    try:
        raw = Path(name).read_bytes()
    except IsADirectoryError:
        raise CassetteFormatError("is a directory, not a cassette file", path=name) from None
    return loads(raw, path=name)


# --- writing ---------------------------------------------------------------------------


def _canonical(cassette: Cassette, path: str) -> tuple[Cassette, str]:
    """The cassette re-validated (names lower-cased, wire-only headers dropped) and its text."""
    try:
        normal = Cassette.model_validate(cassette.model_dump(by_alias=True, round_trip=True))
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        loc = tuple(p for p in first["loc"] if isinstance(p, (str, int)))
        raise CassetteFormatError(
            _problem(first), path=path, field=field_path(loc), hint="Fix the value before saving."
        ) from None
    try:
        return normal, dump_cassette(normal)
    except UnstorableError as exc:
        raise CassetteFormatError(
            exc.problem,
            path=path,
            field=field_path(exc.where) or None,
            hint="Store this body as text (body) or bytes (body_b64) instead.",
        ) from None


def dumps(cassette: Cassette) -> str:
    """The canonical YAML text of ``cassette``: byte-stable, unwrapped, one line per event."""
    return _canonical(cassette, "<dumps>")[1]


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
    needs a cassette holding a key-shaped string on purpose. Nothing touches the disk
    unless every step passed; on any failure the old file (if any) is left
    byte-identical.
    """
    target = Path(os.fspath(path))
    if scrub and scrubber is None:
        scrubber = DefaultRules()
    if scrubber is not None:
        cassette = scrubber.scrub(cassette)
    normal, text = _canonical(cassette, str(target))
    if scrubber is not None:
        scrubber.check(text, target)
    _verify(text, normal, str(target))
    _files.atomic_write(target, text.encode("utf-8"))


_VERIFY_WITH_LIBYAML = 1024 * 1024  # bytes; larger files are checked by the fast reader


def _comparable(cassette: Cassette) -> str:
    # JSON so that NaN equals itself; sorted because dumps sorts header names.
    return json.dumps(cassette.model_dump(mode="json"), sort_keys=True)


def _verify(text: str, expected: Cassette, path: str) -> None:
    """Refuse to write text that would not load back as ``expected``.

    Up to 1 MB the check reads the text with the independent libyaml loader (so a
    writer bug cannot hide behind the canonical reader that mirrors it); beyond
    that, libyaml would take seconds, and the canonical reader is used. The
    comparison goes through JSON so that a NaN in a body equals itself.
    """
    small = len(text) <= _VERIFY_WITH_LIBYAML
    try:
        loaded = _validate(_load_yaml(text, path), text, path, "agentreplay") if small else None
        again = _comparable(loaded or loads(text, path=path))
    except CassetteFormatError as exc:
        again, problem = None, str(exc)
    else:
        problem = "it loads back as a different cassette"
    if again != _comparable(expected):
        raise CassetteFormatError(
            f"the text to write would not load back: {problem}",
            path=path,
            hint="Nothing was written. This is a bug in pytest-agentreplay: please report it.",
        )


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


# --- building stored bodies ------------------------------------------------------------


def split_sse(body: bytes) -> tuple[list[RecordedEvent], str | None]:
    """A whole SSE body as events (comments kept) and a truncation note (``None`` if complete)."""
    return _split_sse(body)


def request_from_wire(
    method: str,
    url: str,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    content: bytes,
) -> RecordedRequest:
    """A request as the cassette stores it: names lower-cased, a JSON body parsed."""
    joined = join_headers(headers)
    fields = body_fields(content, joined.get("content-type", "").lower())
    return RecordedRequest.model_validate(
        {"method": method, "url": url, "headers": joined, **fields},
        # A parsed body came from json.loads: JSON through and through, no walk needed.
        context=_JSON_CHECKED if "json" in fields else None,
    )


def response_from_wire(
    status: int,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    content: bytes,
) -> RecordedResponse:
    """A complete response body as stored: decoded, JSON parsed, SSE split into events.

    Raises ``ValueError`` for a compressed body that would expand beyond 64 MiB.
    """
    fields = response_fields(join_headers(headers), content)
    return RecordedResponse.model_validate({"status": status, **fields})
