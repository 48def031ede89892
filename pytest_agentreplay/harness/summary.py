"""The session report: cassettes used and recorded, unplayed interactions, live calls.

Each test adds one :class:`CassetteUse`; the report builds the lines the terminal
summary prints. Under pytest-xdist every worker sends its uses to the controller
(``to_json`` / ``merge_json``), so the summary covers the whole run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

__all__ = ["CassetteUse", "Report"]


@dataclass
class CassetteUse:
    """What one test did with its cassette."""

    test: str
    path: str
    record_mode: str
    order: int = 0
    """The test's place in the collection (same on every xdist worker)."""
    replayed: int = 0
    recorded: int = 0
    written: bool = False
    not_written_reason: str = ""
    unplayed: list[int] = field(default_factory=list)
    live_calls: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    block: list[str] = field(default_factory=list)
    """Fingerprints of the interactions the test added to the file, in file order."""


@dataclass
class Report:
    """Every cassette use of the session, problems met after the tests ran, and
    notices about the set-up (printed first)."""

    uses: list[CassetteUse] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """Facts about the set-up found at configure time, such as a leftover
    ``pytest_recording_configure``: summary lines, never warnings (``-W error`` would
    turn a configure-time warning into an INTERNALERROR)."""
    unrecorded: list[str] = field(default_factory=list)
    """Tests whose fake on a port answered calls while recording: nothing of them is
    recorded, and the test passes (issue 30). Said first, in capitals."""

    def add(self, use: CassetteUse) -> None:
        self.uses.append(use)

    def shared_writes(self) -> dict[str, list[CassetteUse]]:
        """Cassettes that more than one test wrote into, with those tests' uses."""
        by_path: dict[str, list[CassetteUse]] = {}
        for use in self.uses:
            if use.written and use.block:
                by_path.setdefault(use.path, []).append(use)
        return {path: uses for path, uses in by_path.items() if len(uses) > 1}

    def unplayed_by_path(self) -> dict[str, list[int]]:
        """Per cassette replayed in this run, the interactions no test played.

        A cassette several tests share counts an interaction as played if any of
        them played it. Cassettes only recorded (never replayed) are left out.
        """
        left: dict[str, set[int]] = {}
        for use in self.uses:
            if use.record_mode in ("all", "rewrite"):
                continue
            mine = set(use.unplayed)
            left[use.path] = left[use.path] & mine if use.path in left else mine
        return {path: sorted(indexes) for path, indexes in sorted(left.items())}

    def _users(self, path: str) -> str:
        """The test that replayed ``path``, or how many did."""
        tests = sorted({u.test for u in self.uses if u.path == path})
        return tests[0] if len(tests) == 1 else f"{len(tests)} tests"

    def to_json(self) -> str:
        return json.dumps({"uses": [asdict(u) for u in self.uses], "unrecorded": self.unrecorded})

    def merge_json(self, data: str) -> None:
        loaded = json.loads(data)
        self.uses.extend(CassetteUse(**item) for item in loaded["uses"])
        self.unrecorded.extend(loaded["unrecorded"])

    def lines(self, *, verbose: bool = False) -> list[str]:
        """The summary, one fact per line; only the notices and problems when no test
        used a cassette."""
        if not self.uses:
            return [*self.notices, *self.unrecorded, *self.problems]
        uses = sorted(self.uses, key=lambda u: (u.path, u.test))
        paths = {u.path for u in uses}
        written = {u.path for u in uses if u.written}
        out = [
            *self.notices,
            *self.unrecorded,
            f"cassettes used: {len(paths)}, interactions replayed: {sum(u.replayed for u in uses)}",
            f"cassettes written: {len(written)}, interactions recorded: "
            f"{sum(u.recorded for u in uses)}",
        ]
        out.extend(f"  written: {path}" for path in sorted(written))
        out.extend(
            f"  not written: {u.path} ({u.not_written_reason})"
            for u in uses
            if u.recorded and not u.written
        )
        unplayed = {path: left for path, left in self.unplayed_by_path().items() if left}
        if unplayed:
            out.append(f"unplayed interactions: {sum(map(len, unplayed.values()))}")
            out.extend(
                f"  {path}: #{', #'.join(map(str, left))} ({self._users(path)})"
                for path, left in unplayed.items()
            )
        live = [call for u in uses for call in u.live_calls]
        out.append(f"live calls: {len(live)}")
        if verbose:
            out.extend(f"  {call}" for call in live)
        blocked = [call for u in uses for call in u.blocked]
        if blocked:
            out.append(f"blocked calls: {len(blocked)}")
            out.extend(f"  {call}" for call in blocked[:20])
        out.extend(self.problems)
        return out
