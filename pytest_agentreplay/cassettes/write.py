"""Writing what a test recorded, at its end: merged, scrubbed, atomic.

The cassette on disk is re-read under its lock (another test or process may have
written it since this test loaded it), kept, and extended with what this test
recorded that is not there already; ``rewrite`` drops what the file held before
this run — but not what other tests wrote into it during the run (a shared
cassette), which the run's :class:`~.ledger.RunLedger` names. The test's new
interactions are named by their fingerprints, so the end of the run can put several
tests' blocks back in collection order (:func:`.merge.order_blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..redact.scrubber import Scrubber
from . import io as cassette_io
from .cassette import Cassette, Interaction
from .ledger import RunLedger
from .merge import fingerprint

__all__ = ["WriteResult", "write_recorded"]


@dataclass
class WriteResult:
    """What the end of a test did with its cassette file."""

    path: Path
    written: bool
    recorded: int
    reason: str = ""
    block: list[str] = field(default_factory=list)
    """Fingerprints of the interactions this test added to the file, in file order."""


def write_recorded(
    path: Path,
    new: list[Interaction],
    scrubber: Scrubber,
    *,
    replace_old: bool,
    ledger: RunLedger | None = None,
) -> WriteResult:
    """Merge ``new`` into the cassette at ``path`` and save it; ``replace_old``
    (``rewrite``) keeps only what this run wrote there, as ``ledger`` knows it (and
    ``ledger`` learns what this write adds)."""
    fresh = scrubber.scrub(Cassette(interactions=new))
    with cassette_io.locked(path):
        on_disk = _on_disk(path, replace_old=replace_old, ledger=ledger)
        seen = {fingerprint(i) for i in on_disk}
        added = [i for i in fresh.interactions if fingerprint(i) not in seen]
        block = [fingerprint(i) for i in added]
        cassette_io.save(path, Cassette(interactions=[*on_disk, *added]), scrubber=scrubber)
        if ledger is not None:
            ledger.add(path, block)
    return WriteResult(path, written=True, recorded=len(new), block=block)


def _on_disk(path: Path, *, replace_old: bool, ledger: RunLedger | None) -> list[Interaction]:
    if not path.exists():
        return []
    if not replace_old:
        return cassette_io.load(path).interactions
    mine = ledger.written(path) if ledger is not None else set()
    if not mine:
        return []  # the run wrote nothing there yet: all of it is from before
    return [i for i in cassette_io.load(path).interactions if fingerprint(i) in mine]
