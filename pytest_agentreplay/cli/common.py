"""What every ``agentreplay`` subcommand shares: exit codes, output, file walks.

Standard library only, so that ``agentreplay --help`` (which imports this module
through :mod:`.app`) stays fast; the subcommands import the cassette machinery
themselves.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .errors import CLIError, OutputError

__all__ = [
    "CASSETTE_SUFFIXES",
    "EXIT_ERROR",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "Output",
    "cassette_files",
    "reading",
]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

CASSETTE_SUFFIXES = (".yaml", ".yml", ".json", ".sse", ".sse.txt", ".sse.bin")
"""File names a folder walk picks up: YAML cassettes (ours, vcrpy / pytest-recording),
``http-snapshot`` JSON, and bare event-stream bodies (SDK fixtures)."""


class Output:
    """Where a subcommand writes: stdout for results, stderr for notes and errors.

    Every line goes through ``mask`` first (the scrubber's ``mask``, set once the
    subcommand has built one), so that no secret a cassette may hold reaches a
    terminal or a CI log, whatever the subcommand prints.
    """

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.mask: Callable[[str], str] = _identity

    def print(self, text: str = "") -> None:
        self._out(self.mask(text) + "\n")

    def lines(self, lines: Iterable[str]) -> None:
        self._out(self.mask("".join(f"{line}\n" for line in lines)))

    def write(self, text: str) -> None:
        """``text`` as it is (not masked: a cassette already checked by the backstop)."""
        self._out(text)

    def flush(self) -> None:
        self._out("", flush=True)

    def _out(self, text: str, *, flush: bool = False) -> None:
        try:
            self.out.write(text)
            if flush:
                self.out.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.strerror or str(exc)) from None

    def note(self, text: str) -> None:
        self.err.write(self.mask(text) + "\n")

    def error(self, error: CLIError) -> None:
        self.err.write(self.mask(f"agentreplay: {error.message}") + "\n")


def _identity(text: str) -> str:
    return text


@contextmanager
def reading(path: str | os.PathLike[str]) -> Iterator[None]:
    """Work on one input file: what its size or shape does to the interpreter (no
    memory left for it, nesting too deep for Python) is a :class:`CLIError` naming it,
    exit 2, never an internal error (issue 27)."""
    try:
        yield
    except MemoryError:
        raise CLIError(path, "too big to process in the memory available") from None
    except RecursionError:
        raise CLIError(path, "nests too deeply to process") from None


def write_failed(path: str | os.PathLike[str], exc: OSError) -> CLIError:
    """A write that the system refused (a full or read-only disk, no permission), as
    the one-line error naming the file: atomic writes leave it as it was."""
    return CLIError(path, f"cannot write it: {exc.strerror or exc}; the file was left as it was")


_RAW_SSE_SUFFIXES = (".sse", ".sse.txt", ".sse.bin")
_TOP_INTERACTIONS = re.compile(rb"^interactions:", re.MULTILINE)
_SNIFF = 65536  # bytes read to tell a cassette from another YAML / JSON file


def _is_cassette_name(name: str) -> bool:
    return name.lower().endswith(CASSETTE_SUFFIXES) and not name.startswith(".")


def looks_like_cassette(path: Path) -> bool:
    """Whether a file found in a folder is a cassette (so that a ``tests/`` tree with
    other YAML and JSON files can be walked): a bare SSE body by its name; a YAML file
    with a top-level ``interactions`` key; a JSON array of exchanges. An empty file
    counts: a cassette cut to nothing is what a lint should catch."""
    if path.name.lower().endswith(_RAW_SSE_SUFFIXES):
        return True
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF)
    except OSError:
        return True  # reported when read
    if not head.strip():
        return True
    if path.name.lower().endswith(".json"):
        return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[") and b'"request"' in head
    return _TOP_INTERACTIONS.search(head) is not None


def cassette_files(paths: Iterable[str]) -> list[Path]:
    """Each file given, and the cassette files under each folder given (sorted,
    hidden entries skipped, other YAML / JSON files left out: see
    :func:`looks_like_cassette`). Every path is checked before any is walked: one
    that does not exist is a :class:`CLIError`."""
    given = [Path(name) for name in paths]
    for path in given:
        if not path.exists():
            raise CLIError(path, "no such file or directory")
    found: list[Path] = []
    for path in given:
        found.extend(_walk(path) if path.is_dir() else [path])
    return found


def _regular(path: Path) -> bool:
    """Whether ``path`` is (or links to) a regular file: a named pipe, a device or a
    socket named ``*.yaml`` in a folder is no cassette, and opening one could block
    (issue 27: ``lint`` hung on a FIFO)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return os.path.lexists(path)  # a dangling link or a loop: reported when read


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(folder) / name
            if _is_cassette_name(name) and _regular(path) and looks_like_cassette(path):
                yield path
