"""A stdio MCP server's traffic as cassette interactions, so one set of tools reads both.

A stdio server speaks JSON-RPC one line at a time. Each message the client sends is
stored as an interaction whose request is that message and whose response is what the
server wrote back for it, so a stdio recording is an ordinary YAML cassette: read,
matched, scrubbed, linted, inspected and diffed by the tools HTTP recordings go through.

* the request: ``POST stdio:<command>``, its JSON body the client's message;
* a client request's response: ``200``, ``text/event-stream``, one event per line the
  server wrote until (and including) the response with the request's id — progress
  and log notifications on the way, each stamped with its arrival time;
* a client notification's: ``202`` with no body, as Streamable HTTP answers one.

The server is known by its **command key** (:func:`command_key`): the program and its
arguments, each path reduced to its file name, so that the same server started from
another checkout, virtual environment or temporary directory is the same server.
Its environment is never stored (it is where secrets are).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from ..cassettes.cassette import Interaction, RecordedRequest, RecordedResponse
from ..redact.rules import SECRET_BODY_KEYS, normalize_key

if TYPE_CHECKING:
    from ..cassettes.cassette import RecordedEvent

__all__ = [
    "SCHEME",
    "command_key",
    "exchange",
    "is_stdio",
    "key_of",
    "stdio_url",
]

SCHEME = "stdio"
_PYTHONS = ("python", "python3", "pythonw", "py")
REDACTED = "REDACTED"
_SECRET_ENDINGS = ("token", "key", "secret", "password")


def _secret_flag(arg: str) -> bool:
    """``--api-key``, ``--token``, ``-password``: a flag whose value is a credential."""
    if not arg.startswith("-"):
        return False
    name = normalize_key(arg.lstrip("-"))
    return name in {normalize_key(k) for k in SECRET_BODY_KEYS} or name.endswith(_SECRET_ENDINGS)


def _scrubbed(args: Sequence[str]) -> list[str]:
    """``args`` with the value of each credential flag (``--token X``,
    ``--api-key=X``) replaced: a command key is stored in the cassette."""
    out: list[str] = []
    for arg in args:
        name, equals, _value = arg.partition("=")
        if out and _secret_flag(out[-1]) and "=" not in out[-1]:
            out.append(REDACTED)
        elif equals and _secret_flag(name):
            out.append(f"{name}={REDACTED}")
        else:
            out.append(arg)
    return out


def _short(arg: str) -> str:
    """An argument as the key holds it: an absolute path by its file name, anything
    else as is (``@scope/server``, a package name, is not a path)."""
    if os.path.isabs(arg):
        return os.path.basename(arg.rstrip("/\\")) or arg
    return arg


def command_key(command: str, args: Sequence[str] = ()) -> str:
    """The key a stdio server is recorded and replayed by: ``python calc_server.py``.

    Absolute paths become file names, and any Python interpreter
    (``/venv/bin/python3.11``) is ``python``: the recording made on one machine replays
    on another. The value of a credential flag (``--token``, ``--api-key=``) is
    ``REDACTED``: the key is stored in the cassette."""
    program = _short(command)
    if program.lower().startswith(_PYTHONS) and not program.lower().endswith(".py"):
        program = "python"
    return shlex.join([program, *(_short(a) for a in _scrubbed(args))])


def stdio_url(key: str) -> str:
    """The URL of a stdio server's interactions: ``stdio:python%20calc_server.py``."""
    return f"{SCHEME}:{quote(key, safe='')}"


def key_of(url: str) -> str | None:
    """The command key of a stdio interaction's URL, ``None`` for any other URL."""
    scheme, colon, rest = url.partition(":")
    return unquote(rest) if colon and scheme == SCHEME else None


def is_stdio(interaction: Interaction) -> bool:
    """Whether ``interaction`` was recorded from a stdio server."""
    return key_of(interaction.request.url) is not None


def exchange(
    key: str, message: dict[str, Any], events: Sequence[RecordedEvent] | None, *, end: str
) -> Interaction:
    """One stdio exchange as an interaction: the client's ``message`` and the lines the
    server wrote for it (``events``; ``None`` for a notification, answered ``202``)."""
    request = RecordedRequest(
        method="POST",
        url=stdio_url(key),
        headers={"content-type": "application/json"},
        json_body=message,
    )
    if events is None:
        return Interaction(request=request, response=RecordedResponse(status=202))
    response = RecordedResponse(
        status=200,
        headers={"content-type": "text/event-stream"},
        events=list(events),
        end=end,  # type: ignore[arg-type]
    )
    return Interaction(request=request, response=response)
