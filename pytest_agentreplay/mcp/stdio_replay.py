"""Replay a stdio MCP server: a process that answers its client from a cassette.

It reads the client's JSON-RPC lines from standard input and answers each request with
the lines the recorded server wrote for it (:mod:`.stdio_form`), matched as HTTP
recordings are — by method and params, ids, ``_meta`` and the client's name and
version aside — with the response's id moved to the live request's
(:mod:`.readdress`). Identical requests are answered in recorded order; notifications
get nothing back, as from a server. A request that matches nothing is answered with a
JSON-RPC error carrying the miss report (the closest recordings and how they differ),
never left unanswered. An exchange recorded ``cut`` (the server exited before it
answered) is played as it happened: its lines, then the replayer exits, so the
client sees the server gone instead of waiting for ever.

``--report FILE`` appends one JSON line per played interaction and per miss: the
plugin reads it when the test ends, so that a stdio replay counts as played (strict
mode) and a miss fails the test even where the framework swallowed the error. The
replayers of one test share the file (:mod:`.stdio_ledger`): a server spawned again
(langchain-mcp-adapters spawns one per session) answers from the exchanges the earlier
spawns left unplayed, so each recorded exchange is played once.

Run as ``python -m pytest_agentreplay.mcp.stdio_replay CASSETTE [--key KEY]``, or
``agentreplay mcp replay CASSETTE``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ..cassettes import io as cassette_io
from ..cassettes.cassette import Interaction, RecordedRequest
from ..cassettes.matching import Index, explain_miss
from ..redact.scrubber import Scrubber, default_scrubber
from . import jsonrpc
from .readdress import readdress
from .stdio_form import key_of, stdio_url
from .stdio_ledger import Entry, Ledger

__all__ = ["StdioReplayer", "main", "servers"]


def servers(interactions: Sequence[Interaction]) -> list[str]:
    """The command keys of the stdio servers recorded in ``interactions``, in order."""
    keys = (key_of(i.request.url) for i in interactions)
    return list(dict.fromkeys(k for k in keys if k is not None))


class StdioReplayer:
    """Answers one client of the stdio server ``key`` from ``interactions``."""

    def __init__(
        self,
        interactions: Sequence[Interaction],
        key: str,
        *,
        cassette: Path,
        report: Ledger | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        self.url = stdio_url(key)
        self.cassette = cassette
        self.report = report
        self.scrubber = scrubber or default_scrubber()
        """Live requests are scrubbed as the recorded ones were before they are matched
        (a secret in a tool's arguments is stored ``REDACTED``)."""
        self.interactions = list(interactions)
        self.mine = [i for i, x in enumerate(self.interactions) if x.request.url == self.url]
        self.index: Index = Index([self.interactions[i].request for i in self.mine])
        self._position = {number: position for position, number in enumerate(self.mine)}
        self.ended = False
        """An exchange recorded ``cut`` was played: the server exited there, and so
        does :meth:`serve`."""

    def answer(self, line: bytes) -> list[str]:
        """The lines to write back for one line from the client."""
        value = jsonrpc.messages_of(line)
        if not isinstance(value, dict):
            return []  # not a message (or a batch, which MCP over stdio never sends)
        request = self.scrubber.scrub_request(
            RecordedRequest(
                method="POST",
                url=self.url,
                headers={"content-type": "application/json"},
                json_body=value,
            )
        )
        if self.report is None:
            return self._answer(request, value, line, [])[0]
        lines: list[str] = []

        def step(played: list[int]) -> list[Entry]:
            answer, entry = self._answer(request, value, line, played)
            lines.extend(answer)
            return [entry]

        self.report.turn(step)
        return lines

    def _answer(
        self, request: RecordedRequest, value: dict[str, Any], line: bytes, others: list[int]
    ) -> tuple[list[str], Entry]:
        """The lines answering ``request``, and the report's entry for it, once the
        interactions ``others`` (played by other replayers of the test) are marked
        played."""
        for number in others:
            if number in self._position:
                self.index.play(self._position[number])
        found = self.index.take(request)
        if found is None:
            return self._miss(request, value)
        number = self.mine[found]
        played = readdress(self.interactions[number], line, {})
        if played.response.end == "cut":
            self.ended = True
        return [event.data for event in played.response.events or ()], {"played": number}

    def _miss(self, request: RecordedRequest, value: dict[str, Any]) -> tuple[list[str], Entry]:
        report = explain_miss(
            request,
            self.index,
            cassette=self.cassette,
            test=None,
            record_mode="none",
            rerecord="agentreplay mcp record CASSETTE -- COMMAND...",
        )
        if jsonrpc.kind(value) != "request":
            return [], {"miss": report}
        error = jsonrpc.error_response(
            value["id"], jsonrpc.SERVER_ERROR, f"agentreplay: cassette miss: {report}"
        )
        return [json.dumps(error)], {"miss": report}

    def serve(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        """Answer every line of ``stdin`` until it ends."""
        for line in iter(stdin.readline, b""):
            for out in self.answer(line):
                stdout.write(out.encode("utf-8") + b"\n")
            stdout.flush()
            if self.ended:
                return


def _pick(keys: list[str], wanted: str | None, cassette: Path) -> str:
    """The server to play: ``wanted``, or the only one recorded."""
    if wanted is not None and wanted in keys:
        return wanted
    if wanted is None and len(keys) == 1:
        return keys[0]
    known = "; ".join(keys) or "none"
    what = f"no stdio server {wanted!r}" if wanted else "several stdio servers"
    raise SystemExit(
        f"agentreplay mcp replay: {cassette}: {what} in this cassette (recorded: {known}); "
        "name one with --key"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_agentreplay.mcp.stdio_replay")
    parser.add_argument("cassette", type=Path)
    parser.add_argument("--key", help="the server's command key (default: the only one)")
    parser.add_argument("--report", help="append what was played and missed here")
    args = parser.parse_args(argv)
    interactions = cassette_io.load(args.cassette).interactions
    key = _pick(servers(interactions), args.key, args.cassette)
    report = Ledger(Path(args.report)) if args.report else None
    StdioReplayer(interactions, key, cassette=args.cassette, report=report).serve(
        sys.stdin.buffer, sys.stdout.buffer
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
