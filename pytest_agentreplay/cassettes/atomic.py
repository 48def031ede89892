"""Atomic file replacement and an inter-process lock, for cassette writes.

:func:`atomic_write` never leaves a partly written file under the final name:
the bytes go to a unique temporary file in the same directory, are flushed and
fsynced, the file gets the old file's permission bits, and ``os.replace`` swaps
it in; the directory is fsynced so the rename itself survives a power cut. If
anything fails (or the process is interrupted) the temporary file is removed
and the old file is untouched. A process killed outright (``SIGKILL``,
``os._exit``) can leave its temporary file behind — never the final name — and
the next write to the same cassette sweeps it: the writer holds an ``flock`` on
its temporary file for as long as it writes, so a leftover that nobody holds
and whose process is gone is known to be dead, however recent.

:func:`locked` serializes read-merge-write cycles between processes (xdist
workers recording the same cassette) with ``fcntl.flock`` on a sibling
``<name>.lock`` file, removed again when the lock is released.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from .errors import NotAFileError

fcntl: Any
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["atomic_write", "atomic_writer", "locked", "temp_prefix"]

_STALE_AFTER = 600.0  # without flock: seconds before a dead process's temp file is swept
_umask_lock = threading.Lock()


def temp_prefix(target: Path) -> str:
    """Temporary files for ``target`` are ``.<name>.<pid>.agentreplay-<random>.tmp``."""
    return f".{target.name}.{os.getpid()}.agentreplay-"


def _default_mode() -> int:
    """The mode a new file gets from ``open()`` under the current umask."""
    with _umask_lock:  # os.umask can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _held(path: Path) -> bool:
    """Whether a live writer holds its ``flock`` on the temp file ``path``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the probe's own lock
    return False


def _orphaned(leftover: Path, pid: int) -> bool:
    """A temp file whose writer is gone: its process is dead and nobody holds the file
    (the kernel drops a dead process's flock). The pid check covers the instant
    between a writer creating the file and locking it. Without flock, a dead
    process's file is swept once it has been left alone for ``_STALE_AFTER``."""
    if _pid_alive(pid):
        return False
    if fcntl is None:  # pragma: no cover - Windows
        return time.time() - leftover.stat().st_mtime > _STALE_AFTER
    return not _held(leftover)


def _sweep(target: Path) -> None:
    """Remove temp files for ``target`` left by processes that no longer run."""
    prefix = f".{target.name}."
    for leftover in target.parent.glob(f"{glob_escape(prefix)}*.agentreplay-*.tmp"):
        pid_text = leftover.name[len(prefix) :].split(".", 1)[0]
        with contextlib.suppress(OSError, ValueError):
            if _orphaned(leftover, int(pid_text)):
                leftover.unlink()


def glob_escape(text: str) -> str:
    """``text`` with glob wildcards escaped (cassette names hold ``[`` from parametrize ids)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform lets a directory be opened
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(target: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``target`` with ``data`` atomically, keeping its permission bits.

    Parent directories are created. A symlink is followed: its target file is
    replaced and the link kept.
    """
    with atomic_writer(target) as (handle, _):
        handle.write(data)


@contextlib.contextmanager
def atomic_writer(target: str | os.PathLike[str]) -> Iterator[tuple[BinaryIO, Path]]:
    """A binary file and its path that replace ``target`` atomically when the ``with``
    block ends without an exception; if it raises, the file is removed and ``target``
    is untouched.

    The block may read its file back (by its path) before it is swapped in: the
    cassette writer streams a big cassette into it and verifies what landed on disk,
    instead of holding the whole text in memory (issue 18: recording a 50 MB stream
    held its text, its lines and its bytes at once). Everything :func:`atomic_write`
    promises holds: unique name, ``flock`` while written, fsync, mode kept, symlink
    followed.
    """
    path = Path(os.path.realpath(target))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        info = path.stat()
    except FileNotFoundError:
        mode = _default_mode()
    else:
        if not stat.S_ISREG(info.st_mode):
            raise NotAFileError(path)
        mode = stat.S_IMODE(info.st_mode)
    _sweep(path)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            if fcntl is not None:  # "being written" until replaced: see _orphaned
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            yield handle, Path(tmp_name)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
            os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def _lock_path(target: Path) -> Path:
    return target.with_name(target.name + ".lock")


@contextlib.contextmanager
def locked(target: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive inter-process lock for ``target`` for the ``with`` block.

    Use it around a read-merge-write of one cassette::

        with locked(path):
            cassette = load(path) if path.exists() else Cassette()
            ... merge new interactions ...
            save(path, cassette)

    The lock is ``fcntl.flock`` on ``<name>.lock`` beside the cassette, so it
    works between processes (xdist workers) and between threads that each take
    it; it is not re-entrant (taking it twice in one thread deadlocks). The lock
    file is deleted on release; a waiter that locked a file deleted meanwhile
    notices and locks the new one. Where ``fcntl`` is missing an exclusively
    created lock file is polled instead.
    """
    path = Path(os.path.realpath(target))
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = _lock_path(path)
    if fcntl is None:
        with _polled_lock(lock):
            yield
        return
    fd = _acquire(lock)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def _acquire(lock: Path) -> int:
    """Open and flock ``lock``, retrying if it was deleted by the previous holder."""
    assert fcntl is not None
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            current = os.stat(lock)
        except FileNotFoundError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        if (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
            return fd
        os.close(fd)


@contextlib.contextmanager
def _polled_lock(lock: Path, poll: float = 0.01) -> Iterator[None]:
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
            break
        except FileExistsError:
            time.sleep(poll)
    os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
