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
    replayed: int = 0
    recorded: int = 0
    written: bool = False
    not_written_reason: str = ""
    unplayed: list[int] = field(default_factory=list)
    live_calls: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)


@dataclass
class Report:
    """Every cassette use of the session."""

    uses: list[CassetteUse] = field(default_factory=list)

    def add(self, use: CassetteUse) -> None:
        self.uses.append(use)

    def to_json(self) -> str:
        return json.dumps([asdict(u) for u in self.uses])

    def merge_json(self, data: str) -> None:
        self.uses.extend(CassetteUse(**item) for item in json.loads(data))

    def lines(self, *, verbose: bool = False) -> list[str]:
        """The summary, one fact per line; empty when no test used a cassette."""
        if not self.uses:
            return []
        uses = sorted(self.uses, key=lambda u: (u.path, u.test))
        paths = {u.path for u in uses}
        written = {u.path for u in uses if u.written}
        out = [
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
        unplayed = [u for u in uses if u.unplayed]
        if unplayed:
            out.append(f"unplayed interactions: {sum(len(u.unplayed) for u in unplayed)}")
            out.extend(
                f"  {u.path}: #{', #'.join(map(str, u.unplayed))} ({u.test})" for u in unplayed
            )
        live = [call for u in uses for call in u.live_calls]
        out.append(f"live calls: {len(live)}")
        if verbose:
            out.extend(f"  {call}" for call in live)
        blocked = [call for u in uses for call in u.blocked]
        if blocked:
            out.append(f"blocked calls: {len(blocked)}")
            out.extend(f"  {call}" for call in blocked[:20])
        return out
