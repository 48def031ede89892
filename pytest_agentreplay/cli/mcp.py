"""``agentreplay mcp``: record a stdio MCP server into a cassette, and serve it back.

``agentreplay mcp record CASSETTE -- COMMAND...`` runs the server's command behind a
proxy (give it to the MCP client in place of the server's command): every line passes
through unchanged, and when the server exits its exchanges are merged into CASSETTE,
scrubbed, as the plugin writes a cassette. ``agentreplay mcp replay CASSETTE`` is a
stdio server answering from it, without the real one. Standard output is the MCP
channel: the commands write nothing else there.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

from ..cassettes import io as cassette_io
from ..cassettes.cassette import Interaction
from ..cassettes.write import write_recorded
from ..mcp.stdio_form import command_key
from ..mcp.stdio_record import Exchanges, relay
from ..mcp.stdio_replay import StdioReplayer, servers
from ..redact.scrubber import default_scrubber
from .common import EXIT_ERROR, EXIT_OK, Output, reading
from .errors import CLIError
from .options import exit_codes

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay mcp``."""
    parser.description = (
        "Record and replay stdio MCP servers. 'record' is a proxy in front of the "
        "server's command: give 'agentreplay mcp record CASSETTE -- COMMAND...' to your "
        "MCP client as the server's command; 'replay' answers the client from the "
        "cassette. In pytest the plugin does both by itself for servers the mcp SDK "
        "spawns (pydantic-ai, openai-agents)."
    )
    parser.epilog = exit_codes("the server (or the replay) ended", "(not used)")
    actions = parser.add_subparsers(
        dest="action", metavar="ACTION", required=True, help="record or replay"
    )
    record = actions.add_parser("record", help="run COMMAND and record its exchanges")
    record.add_argument("cassette", metavar="CASSETTE", type=Path)
    record.add_argument("--key", help="the server's name in the cassette (default: COMMAND)")
    record.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    replay = actions.add_parser("replay", help="answer a client from CASSETTE")
    replay.add_argument("cassette", metavar="CASSETTE", type=Path)
    replay.add_argument("--key", help="the server to play (default: the only one recorded)")


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay mcp record|replay CASSETTE ...``."""
    output.mask = default_scrubber().mask
    if args.action == "record":
        return _record(args, output)
    return _replay(args)


def _record(args: argparse.Namespace, output: Output) -> int:
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        raise CLIError(None, "give the server's command after --: mcp record CASSETTE -- CMD")
    kept: list[tuple[int, Interaction]] = []
    exchanges = Exchanges(
        args.key or command_key(command[0], command[1:]),
        lambda number, interaction: kept.append((number, interaction)),
    )
    signal.signal(signal.SIGTERM, _stop)
    try:
        code = relay(command, exchanges, stdin=sys.stdin.buffer, stdout=sys.stdout.buffer)
    except FileNotFoundError as exc:
        raise CLIError(None, f"cannot start the server: {exc}") from exc
    except SystemExit:
        code = EXIT_ERROR
    finally:
        recorded = [interaction for _, interaction in sorted(kept, key=lambda p: p[0])]
        if recorded:
            write_recorded(args.cassette, recorded, default_scrubber(), replace_old=False)
            output.note(f"agentreplay mcp: {len(recorded)} exchange(s) recorded in {args.cassette}")
    return EXIT_OK if code == 0 else EXIT_ERROR


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _replay(args: argparse.Namespace) -> int:
    with reading(args.cassette):
        interactions = cassette_io.load(args.cassette).interactions
    keys = servers(interactions)
    key = args.key
    if key is None and len(keys) == 1:
        key = keys[0]
    if key not in keys:
        known = "; ".join(keys) or "none"
        raise CLIError(
            args.cassette,
            f"no stdio server {key!r} recorded here (recorded: {known}); name one with --key"
            if key
            else f"several stdio servers recorded here ({known}): name one with --key",
        )
    StdioReplayer(interactions, key, cassette=args.cassette).serve(
        sys.stdin.buffer, sys.stdout.buffer
    )
    return EXIT_OK
