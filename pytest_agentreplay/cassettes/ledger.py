"""What one test run wrote into each cassette: the interactions ``rewrite`` keeps.

``rewrite`` replaces what a cassette held before the run, but keeps what other tests
of the same run wrote into it (a shared cassette). It told them apart by comparing the
file's modification time with the run's start: a cassette whose time lies in the
future (a VM's or a bind mount's clock, an archive) counted as written by the run, was
never rewritten, and its old interactions stayed (issue 27). The run now notes the
fingerprints (:func:`.merge.fingerprint`) of the interactions it writes, per file, and
keeps exactly those.

Under pytest-xdist the workers share one ledger: a folder the controller names, one
file of fingerprints per cassette, appended to under the cassette's lock (the write
that adds them holds it) and removed when the run ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["RunLedger"]


class RunLedger:
    """The fingerprints of what this run wrote, by cassette; shared through
    ``directory`` between processes when one is given (created on first use)."""

    def __init__(self, directory: str | None = None) -> None:
        self.directory = directory
        self._written: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def _file(self, key: str) -> Path:
        assert self.directory is not None
        name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return Path(self.directory) / f"{name}.txt"

    def written(self, path: Path) -> set[str]:
        """The fingerprints of the interactions this run wrote into ``path``."""
        key = os.path.realpath(path)
        with self._lock:
            known = set(self._written.get(key, ()))
        if self.directory is not None:
            with contextlib.suppress(FileNotFoundError):  # nothing written there yet
                known.update(self._file(key).read_text(encoding="utf-8").split())
        return known

    def add(self, path: Path, fingerprints: Iterable[str]) -> None:
        """Note that this run wrote the interactions ``fingerprints`` into ``path``
        (call it under the cassette's lock)."""
        key, new = os.path.realpath(path), list(fingerprints)
        with self._lock:
            self._written.setdefault(key, set()).update(new)
        if self.directory is not None and new:
            os.makedirs(self.directory, exist_ok=True)
            with self._file(key).open("a", encoding="utf-8") as handle:
                handle.write("".join(f"{fingerprint}\n" for fingerprint in new))

    def remove(self) -> None:
        """Delete the shared folder (at the end of the run)."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
