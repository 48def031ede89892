"""The report the stdio replayers of one test share: what each played and missed.

A framework may start the same stdio server more than once in a test:
langchain-mcp-adapters opens a session, and so spawns the server, for ``get_tools()``
and again for every tool call. Each spawn is a replayer in a process of its own
(:mod:`.stdio_replay`), and each would otherwise answer from the whole recording: every
spawn would play the first recorded ``initialize``, and the later ones stay unplayed
(strict mode fails) or answer the wrong session. So they share one JSON-lines file, one
entry per played interaction (``{"played": N}``) or miss (``{"miss": REPORT}``):

* a replayer takes its turn under an exclusive lock on the file (:meth:`Ledger.turn`):
  it reads what the others played since its last turn, then answers and appends what
  it played, so each recorded exchange is played once across all spawns, in recorded
  order;
* the test's process reads the new entries when the test settles
  (:meth:`Ledger.news`): the played interactions count as played, the misses fail it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["Ledger"]

Entry = dict[str, Any]


class Ledger:
    """One reader and writer of the shared report at ``path`` (each process has its
    own, and reads each entry once)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._read = 0  # the bytes of the file already read

    def turn(self, step: Callable[[list[int]], list[Entry]]) -> None:
        """Under the file's lock: ``step`` gets the interactions the other replayers
        played since this one's last turn, and returns the entries to append."""
        with self.path.open("a+b") as file, _locked(file):
            file.seek(self._read)
            entries, _ = _complete(file.read())
            played = [int(entry["played"]) for entry in entries if "played" in entry]
            written = step(played)
            file.write(b"".join(json.dumps(entry).encode("utf-8") + b"\n" for entry in written))
            file.flush()
            self._read = file.tell()

    def news(self) -> list[Entry]:
        """The entries written since the last call (a line still being written is left
        for the next one)."""
        try:
            with self.path.open("rb") as file:
                file.seek(self._read)
                entries, size = _complete(file.read())
        except FileNotFoundError:  # no replayer has answered yet
            return []
        self._read += size
        return entries


def _complete(data: bytes) -> tuple[list[Entry], int]:
    """The entries of the whole lines of ``data``, and how many bytes they take."""
    size = data.rfind(b"\n") + 1
    lines = data[:size].decode("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()], size


@contextmanager
def _locked(file: IO[bytes]) -> Iterator[None]:
    """An exclusive lock on ``file`` for the block, waiting for it (the other
    replayers hold it for one answer at a time)."""
    if sys.platform == "win32":
        import msvcrt  # noqa: PLC0415 - this platform's only

        file.seek(0)
        msvcrt.locking(file.fileno(), msvcrt.LK_LOCK, 1)
        try:
            yield
        finally:
            file.seek(0)
            msvcrt.locking(file.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl  # noqa: PLC0415 - POSIX only

        fcntl.flock(file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(file.fileno(), fcntl.LOCK_UN)
