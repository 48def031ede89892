"""The fake tool server: scripted MCP tools served to the real MCP clients.

:class:`FakeToolServer` is to the tool side of an agent run what
:class:`~pytest_agentreplay.fakes.FakeModel` is to the model side: tools with JSON
schemas and scripted answers (values, faults, or a function of the arguments), served
in-process to every HTTP client of the test at its URL (the MCP SDK's client, and the
frameworks built on it, through the plugin's transports), on a real loopback port
(:meth:`FakeToolServer.listen`), and as a command a framework spawns for stdio
(:meth:`FakeToolServer.stdio_command`: a relay process that forwards each line to the
port). Every transport is the same script, holds and call log.

The protocol framing is :mod:`.protocol`'s; the tools and their checks are
:mod:`.tools`'; results :mod:`.results`'; holds :mod:`.holds`'; the call log
:mod:`.calls`'.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...fakes.script import call_sync
from ...fakes.serving import Serving
from ...transport.playback import Playback
from ...transport.router import Deferred, HTTPRequest
from . import protocol
from .calls import ToolCallLog, ToolCallOutcome, ToolServerCall, ToolTransport
from .errors import ToolScriptError
from .faults import ToolFault
from .holds import ToolHolds
from .results import Answer, as_result, tool_error_result
from .stdio import EXIT_HEADER, RELAY_HEADER, StdioCommand
from .tools import ScriptedTool

if TYPE_CHECKING:
    from .listening import ToolServerListener

__all__ = ["FakeToolServer"]

_LABEL = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True)
class _Call:
    """One ``tools/call`` being answered: its log index, tool, id, arguments and how
    its answer travels."""

    index: int
    tool: ScriptedTool
    request_id: Any
    arguments: dict[str, Any]
    transport: ToolTransport
    sse: bool


@dataclass(frozen=True)
class _Route:
    host: str
    port: int | None
    path: str


def _route(url: str) -> _Route:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"a tool server URL needs http(s) and a host, got {url!r}")
    return _Route(parts.hostname.lower(), parts.port, parts.path.rstrip("/"))


def default_url(name: str) -> str:
    """``http://<name>.mcp.invalid/mcp``: a host no network has (``.invalid``)."""
    label = _LABEL.sub("-", name.lower()).strip("-") or "tools"
    return f"http://{label}.mcp.invalid/mcp"


class FakeToolServer(Serving):
    """A scripted MCP tool server; see the module docs.

    ``FakeToolServer(name="weather")`` serves at ``http://weather.mcp.invalid/mcp``
    (``url=`` to choose); declare tools with :meth:`tool` and append answers with
    :meth:`script`. ``json_response=True`` answers Streamable HTTP requests with JSON
    bodies instead of SSE streams. Ending a test (or the ``with`` block) with scripted
    answers never requested, a call of a tool the server does not have, or a call after
    a tool's script ran out fails it, as a fake model does.
    """

    def __init__(
        self,
        *,
        name: str = "tools",
        url: str | None = None,
        json_response: bool = False,
        version: str = "1.0.0",
        check_unused: bool = True,
        allow_hosts: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.url = url or default_url(name)
        self.json_response = json_response
        self.version = version
        self.check_unused = check_unused
        self.allow_hosts = tuple(allow_hosts)
        self.requests: list[dict[str, Any]] = []
        self._routes = [_route(self.url)]
        self._tools: dict[str, ScriptedTool] = {}
        self._log = ToolCallLog(name)
        self._holds = ToolHolds()
        self._lock = threading.Lock()
        self._problems: list[str] = []
        self._listener: ToolServerListener[FakeToolServer] | None = None

    # --- configuring ------------------------------------------------------------

    def tool(
        self,
        name: str,
        *results: Any,
        input_schema: dict[str, Any] | None = None,
        description: str | None = None,
        output_schema: dict[str, Any] | None = None,
        respond: Answer | None = None,
    ) -> FakeToolServer:
        """Declare a tool (its schemas are checked now) and script its first answers.

        ``respond`` (a function of the arguments, sync or async) answers the calls past
        the scripted ones. A tool declared again is replaced."""
        tool = ScriptedTool(
            name,
            input_schema=input_schema if input_schema is not None else {"type": "object"},
            description=description,
            output_schema=output_schema,
            respond=respond,
        )
        tool.extend(results)
        with self._lock:
            self._tools[name] = tool
        return self

    def script(self, tool: str, *results: Any) -> FakeToolServer:
        """Append answers to ``tool``'s script: values (a string is one text block, an
        object is also the structured content), ``mcp.types.CallToolResult``s,
        :class:`~.faults.ToolFault`s, or functions of the arguments."""
        self._tool(tool).extend(results)
        return self

    def _tool(self, name: str) -> ScriptedTool:
        with self._lock:
            tool = self._tools.get(name)
            names = sorted(self._tools)
        if tool is None:
            have = ", ".join(repr(n) for n in names) or "none yet"
            raise ToolScriptError(
                f"{self.name}: no tool {name!r} to script (tools: {have}); declare it "
                f"first with .tool({name!r}, input_schema=...)"
            )
        return tool

    def serve(self, url: str) -> FakeToolServer:
        """Also serve at ``url`` (host, port and path prefix must match)."""
        route = _route(url)
        with self._lock:
            self._routes.append(route)
        return self

    def block(self, tool: str | None = None) -> FakeToolServer:
        """Hold the next call (of ``tool``, when named) before any byte, until
        :meth:`release` or until the client cancels it."""
        self._holds.block(tool)
        return self

    def release(self) -> None:
        """Let every held call continue (``block()`` and ``ToolFault.stall``)."""
        self._holds.release()

    def wait_blocked(self, timeout: float | None = 5.0) -> bool:
        """Wait until a call is being held; ``False`` on timeout."""
        return self._holds.wait(timeout)

    async def wait_blocked_async(self, timeout: float | None = 5.0) -> bool:
        """:meth:`wait_blocked` without blocking the event loop."""
        return await self._holds.wait_async(timeout)

    # --- other transports ---------------------------------------------------------

    def listen(
        self, *, host: str = "127.0.0.1", port: int = 0
    ) -> ToolServerListener[FakeToolServer]:
        """Serve on a real loopback port (``with tools.listen() as server: server.url``)."""
        from .listening import ToolServerListener  # noqa: PLC0415 - a port is rare

        return ToolServerListener(self, host=host, port=port).start()

    def stdio_command(self) -> StdioCommand:
        """The command that runs this server over stdio, for a framework to spawn
        (``MCPServerStdio(command.command, command.args)``): a small relay process that
        forwards each line to this server's port (started now, closed with the fake)."""
        with self._lock:
            listener = self._listener
        if listener is None or listener.closed:
            listener = self.listen()
            with self._lock:
                self._listener = listener
        return StdioCommand(
            command=sys.executable,
            args=("-m", "pytest_agentreplay.mcp.fake.relay", listener.url),
        )

    # --- what happened ------------------------------------------------------------

    @property
    def log(self) -> list[ToolServerCall]:
        """Every finished ``tools/call``, in arrival order, with its outcome."""
        return [c for c in self._log.all() if c.ended]

    @property
    def calls(self) -> list[ToolServerCall]:
        """Every ``tools/call`` received, running ones included (``outcome`` ``None``)."""
        return self._log.all()

    @property
    def tool_names(self) -> list[str]:
        """The tools the server lists."""
        with self._lock:
            return list(self._tools)

    def remaining(self, tool: str) -> list[Any]:
        """``tool``'s scripted answers not served yet."""
        return self._tool(tool).remaining

    @property
    def problems(self) -> list[str]:
        """What the test should fail for: surprises, and scripted answers never used."""
        with self._lock:
            problems = list(self._problems)
            tools = list(self._tools.values())
        if self.check_unused:
            for tool in tools:
                unused = tool.remaining
                if unused:
                    shown = "\n".join(f"  - {item!r}" for item in unused)
                    problems.append(
                        f"{self.name}: {len(unused)} scripted result(s) of tool "
                        f"{tool.name!r} never requested:\n{shown}"
                    )
        return problems

    def take_problems(self) -> list[str]:
        """The surprises so far, acknowledged (as ``FakeModel.take_problems``)."""
        with self._lock:
            taken, self._problems = self._problems, []
        return taken

    def close_open_calls(self) -> None:
        """End the calls still running as ``cancelled``."""
        self._log.close_open()

    def verify(self) -> None:
        """Raise ``AssertionError`` listing every problem, if any."""
        self.close_open_calls()
        problems = self.problems
        if problems:
            raise AssertionError("\n".join(problems))

    def detach(self) -> None:
        """Stop serving: held calls are let go, the port and its relays closed."""
        self.release()
        with self._lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        super().detach()

    def _problem(self, text: str) -> None:
        with self._lock:
            self._problems.append(f"{self.name}: {text}")

    # --- serving (the Handler protocol) -----------------------------------------------

    def claims(self, request: HTTPRequest) -> bool:
        parts = urlsplit(request.url)
        host, port, path = (parts.hostname or "").lower(), parts.port, parts.path.rstrip("/")
        with self._lock:
            routes = list(self._routes)
        return any(
            r.host == host and r.port in (None, port) and path.startswith(r.path) for r in routes
        )

    async def respond_async(self, request: HTTPRequest) -> Playback | Deferred:
        return self.respond(request)

    def respond(self, request: HTTPRequest) -> Playback | Deferred:
        transport: ToolTransport = "stdio" if request.header(RELAY_HEADER) else "http"
        if request.method != "POST":
            return protocol.not_allowed(request.method)
        sse = transport == "http" and not self.json_response
        try:
            message = request.json()
        except ValueError as exc:
            failed = protocol.error(None, protocol.PARSE_ERROR, f"Parse error: {exc}")
            return protocol.answer(failed, sse=False, status=400)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            failed = protocol.error(
                None, protocol.INVALID_REQUEST, "Invalid Request: one JSON-RPC 2.0 object"
            )
            return protocol.answer(failed, sse=False, status=400)
        with self._lock:
            self.requests.append(message)
        return self._dispatch(message, transport, sse)

    def _dispatch(
        self, message: dict[str, Any], transport: ToolTransport, sse: bool
    ) -> Playback | Deferred:
        method = message.get("method")
        params = message.get("params") or {}
        if not isinstance(method, str):
            return protocol.accepted()  # a response to a request the fake never sends
        if "id" not in message:
            self._notified(method, params, transport)
            return protocol.accepted()
        request_id = message["id"]
        if method == "tools/call":
            return self._call(request_id, params, transport, sse)
        reply = self._answer_method(method, params)
        if reply is None:
            failed = protocol.error(
                request_id, protocol.METHOD_NOT_FOUND, f"Method not found: {method}"
            )
            return protocol.answer(failed, sse=sse)
        return protocol.answer(protocol.result(request_id, reply), sse=sse)

    def _answer_method(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "initialize":
            return protocol.initialize_result(params, self.name, self.version)
        if method == "ping":
            return {}
        if method == "tools/list":
            with self._lock:
                return {"tools": [t.listed() for t in self._tools.values()]}
        return None

    def _cancelled(self, index: int) -> None:
        """The client hung up while call ``index`` was held."""
        self._log.ended(index, "cancelled")

    def _notified(self, method: str, params: dict[str, Any], transport: ToolTransport) -> None:
        """A ``notifications/cancelled`` ends the call it names as ``cancelled`` and lets
        it go if it is held; other notifications need nothing."""
        if method != "notifications/cancelled":
            return
        index = self._log.find(params.get("requestId"), transport)
        if index is not None:
            self._log.ended(index, "cancelled")
            self._holds.let_go(index)

    # --- tools/call -----------------------------------------------------------------

    def _call(
        self, request_id: Any, params: dict[str, Any], transport: ToolTransport, sse: bool
    ) -> Playback | Deferred:
        name = params.get("name")
        arguments = params.get("arguments")
        arguments = {} if arguments is None else arguments
        logged = arguments if isinstance(arguments, dict) else {"$": arguments}
        index = self._log.open(str(name), logged, transport=transport, request_id=request_id)
        with self._lock:
            tool = self._tools.get(name) if isinstance(name, str) else None
            names = sorted(self._tools)
        if tool is None:
            self._problem(
                f"received a call of tool {name!r}, which it does not have (tools: "
                f"{', '.join(repr(n) for n in names) or 'none'}); declare it with "
                f".tool({name!r}, ...)"
            )
            failed = protocol.error(request_id, protocol.INVALID_PARAMS, f"Unknown tool: {name}")
            return self._play(index, failed, "rpc_error", sse=sse)
        problems = tool.argument_problems(arguments)
        if problems:  # answered as a tool error, so the model can correct itself (2025-11-25)
            text = f"Invalid arguments for tool {tool.name!r}: " + "; ".join(problems)
            return self._play_result(index, request_id, tool_error_result(text), sse=sse)
        call = _Call(index, tool, request_id, logged, transport, sse)
        if self._holds.take_block(tool.name):
            return Deferred(
                gate=self._holds.gate(index),
                then=lambda: self._serve(call),
                cancelled=lambda: self._cancelled(index),
            )
        return self._serve(call)

    def _serve(self, call: _Call) -> Playback:
        """The answer to ``call``: its tool's next scripted one, played."""
        index, tool, request_id, sse = call.index, call.tool, call.request_id, call.sse
        arguments = call.arguments
        if self._log.outcome(index) is not None:  # cancelled while it was held
            return protocol.nothing(sse=sse)
        taken = tool.next_answer()
        if taken is None:
            self._problem(
                f"received call #{index} of tool {tool.name!r} after its script ran out "
                f"(arguments {arguments!r}); script a result for it "
                f"(.script({tool.name!r}, ...)) or answer past the end with respond="
            )
            failed = protocol.error(
                request_id,
                protocol.INTERNAL_ERROR,
                f"pytest-agentreplay: no scripted result left for tool {tool.name!r}",
            )
            return self._play(index, failed, "rpc_error", sse=sse)
        where, item = taken
        if callable(item) and not isinstance(item, ToolFault):
            try:
                item = call_sync(item, arguments)
            except Exception as exc:  # reported as a problem, and the client is answered
                self._problem(f"tool {tool.name!r}, {where} raised {exc!r}")
                text = f"Error executing tool {tool.name}: {exc}"
                return self._play_result(index, request_id, tool_error_result(text), sse=sse)
        if isinstance(item, ToolFault):
            return self._fault(call, item)
        try:
            value = as_result(tool.name, item, where, tool.output_schema)
        except ToolScriptError as exc:
            self._problem(str(exc))
            failed = protocol.error(request_id, protocol.INTERNAL_ERROR, str(exc))
            return self._play(index, failed, "rpc_error", sse=sse)
        return self._play_result(index, request_id, value, sse=sse)

    def _fault(self, call: _Call, fault: ToolFault) -> Playback:
        index, tool, request_id, sse = call.index, call.tool, call.request_id, call.sse
        if fault.kind == "rpc_error":
            failed = protocol.error(request_id, fault.code, fault.message, fault.data)
            return self._play(index, failed, "rpc_error", sse=sse)
        if fault.kind == "tool_error":
            return self._play_result(index, request_id, tool_error_result(fault.message), sse=sse)
        if fault.kind == "stall":
            value = as_result(tool.name, fault.data, "the stall's result", tool.output_schema)
            return self._play_result(index, request_id, value, sse=sse, gate=True)
        if fault.kind == "cut":
            return self._cut(index, request_id, call.transport, sse)
        return self._crash(index, fault.exit_code, call.transport)

    def _cut(self, index: int, request_id: Any, transport: ToolTransport, sse: bool) -> Playback:
        """The response begins and ends before its result: an SSE stream (or JSON body)
        dropped after the headers; a stdio server whose line stops half-way as it dies."""
        on_end = self._on_end(index, "cut")
        if transport == "stdio":
            line = protocol.line(protocol.result(request_id, {"content": []}))
            headers = [("content-type", "application/json"), (EXIT_HEADER, "1")]
            return Playback(200, headers, [line[: len(line) // 2]], on_end=on_end)
        headers, body = protocol.framed(protocol.result(request_id, {}), sse=sse)
        return Playback(200, headers, [body], deliver=0, ending="cut", on_end=on_end)

    def _crash(self, index: int, exit_code: int, transport: ToolTransport) -> Playback:
        """The server dies before answering: the stdio relay exits with ``exit_code``;
        over HTTP, the connection drops before any response."""
        on_end = self._on_end(index, "crashed")
        if transport == "stdio":
            headers = [(EXIT_HEADER, str(exit_code)), ("content-length", "0")]
            return Playback(200, headers, [], on_end=on_end)
        return Playback(0, [], [], ending="cut", before_headers=True, on_end=on_end)

    def _play_result(
        self,
        index: int,
        request_id: Any,
        value: dict[str, Any],
        *,
        sse: bool,
        gate: bool = False,
    ) -> Playback:
        outcome: ToolCallOutcome = "tool_error" if value.get("isError") else "completed"
        return self._play(
            index, protocol.result(request_id, value), outcome, sse=sse, result=value, gate=gate
        )

    def _play(
        self,
        index: int,
        message: dict[str, Any],
        outcome: ToolCallOutcome,
        *,
        sse: bool,
        result: dict[str, Any] | None = None,
        gate: bool = False,
    ) -> Playback:
        playback = protocol.answer(message, sse=sse)
        error = message.get("error")
        playback.on_end = self._on_end(index, outcome, result=result, error=error)
        if gate:
            playback.gates = {0: self._holds.gate(index)}
        return playback

    def _on_end(
        self,
        index: int,
        outcome: ToolCallOutcome,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> Callable[[str, int], None]:
        """How the call's response ending is logged: as planned, unless the client went
        away before the answer reached it (``cancelled``)."""

        def ended(how: str, sent: int) -> None:
            if how == "cancelled" and not (sent and outcome not in ("cut", "crashed")):
                self._log.ended(index, "cancelled")
            else:
                self._log.ended(index, outcome, result=result, error=error)

        return ended
