"""Reading a cassette file's bytes: a regular file of bounded size, or a clear error.

Every reader of a cassette comes here for its bytes: the loader (replay, ``serve``)
and the ``agentreplay`` commands. Issue 27 found ``lint``, ``redact`` and ``inspect``
hanging on a FIFO named ``*.yaml`` (opening one for reading waits for a writer),
and ``/dev/zero`` read whole until ``MemoryError``. So the file is opened without
blocking, and checked to be a regular file on the descriptor that is then read (no
race with a rename in between); a named pipe, a device, a socket or a directory is
an :class:`UnreadableFileError` naming what it is, and so is a file larger than
:data:`MAX_FILE_BYTES` (checked before reading, and again while reading, for a file
that grows).
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from .errors import UnreadableFileError

__all__ = ["MAX_FILE_BYTES", "is_regular_file", "read_file"]

MAX_FILE_BYTES = 1 << 30
"""Bytes: a cassette file larger than this is not read (1 GiB, sixteen times the
default cap on one recorded body)."""

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)
_PIECE = 1 << 20  # bytes read at a time once the file's size is passed
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_FLAGS |= getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _kind(mode: int) -> str | None:
    """What a file of ``mode`` is, when it is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), None)


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is (or links to) a regular file; ``False`` if it cannot be seen."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_file(path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises :class:`UnreadableFileError` for anything else: a special file, a file over
    ``limit`` bytes, a missing or unreadable one (the reason is the system's)."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise UnreadableFileError(_os_reason(exc), path=path) from None
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:
            raise UnreadableFileError(f"is {kind}, not a cassette file", path=path)
        if info.st_size > limit:
            raise UnreadableFileError(_too_big(f"{info.st_size:,}", limit), path=path)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        try:
            return _read_up_to(handle, info.st_size, limit, path)
        except OSError as exc:
            raise UnreadableFileError(_os_reason(exc), path=path) from None


def _read_up_to(handle: BinaryIO, size: int, limit: int, path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, read in as few pieces as its size allows (one, usually: a
    buffer of ``limit`` bytes asked for at once is allocated at once), refusing one
    that grows past ``limit`` while it is read."""
    chunks, total = [], 0
    want = size + 1 if size else _PIECE  # a size of 0 can still have bytes (/proc)
    while chunk := handle.read(min(want, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise UnreadableFileError(_too_big(f"more than {limit:,}", limit), path=path)
        want = _PIECE
    return b"".join(chunks)


def _too_big(size: str, limit: int) -> str:
    return (
        f"is {size} bytes, over the {limit:,} a cassette file may hold; it was not read "
        "(an endless or corrupt file?)"
    )


def _os_reason(exc: OSError) -> str:
    """The system's reason, in the words of the loader's other errors."""
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a cassette file"
    return f"cannot be read: {exc.strerror or exc}"
