"""A small agent runtime whose tools are on an MCP server, with bugs to plant.

One turn: ask the model (the anthropic SDK, against a fake model), run each tool call
it asks for on the MCP server (the mcp SDK's client session, against a fake tool
server), send the results back, until the model answers in text. It logs what a
runtime logs: steps, tool calls and their results. ``bugs`` plants one of the faults
the tool-call invariants exist to catch:

- ``"double_result"``: the next request answers each tool call twice;
- ``"forget_result"``: the turn ends after running the tools, their results neither
  logged nor sent on;
- ``"mangle_retry"``: a call that failed unanswered is retried with other arguments;
- ``"retry_after_stop"``: a call stopped by the user is sent again;
- ``"log_twice"``: a stopped call is logged ``interrupted`` and then ``completed``;
- ``"shield_call"``: stop ends the turn but leaves the tool call running.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from pytest_agentreplay.runlog import RunLog

MODEL = "claude-sonnet-4-6"


class McpAgent:
    """See the module docs."""

    def __init__(self, session: ClientSession, log: RunLog, bugs: frozenset[str] = frozenset()):
        self.session, self.log, self.bugs = session, log, bugs
        self.model = anthropic.AsyncAnthropic(api_key="test", max_retries=0)
        self.background: list[asyncio.Task[Any]] = []

    async def run_turn(self, question: str) -> str:
        tools = [
            {"name": t.name, "input_schema": t.input_schema}
            for t in (await self.session.list_tools()).tools
        ]
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        for step in range(5):
            self.log.step_started(f"s{step}", step_index=step, turn_id="t1")
            reply = await self.model.messages.create(
                model=MODEL, max_tokens=99, messages=messages, tools=tools
            )
            self.log.step_completed(f"s{step}")
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                self.log.turn_ended("t1")
                return "".join(b.text for b in reply.content if b.type == "text")
            messages.append({"role": "assistant", "content": [_block(b) for b in reply.content]})
            results = [
                await self._run_tool(use.id, use.name, dict(use.input), f"s{step}") for use in uses
            ]
            if "forget_result" in self.bugs:
                return ""
            answers = [
                {"type": "tool_result", "tool_use_id": use.id, "content": text}
                for use, text in zip(uses, results, strict=True)
            ]
            if "double_result" in self.bugs:
                answers += answers
            messages.append({"role": "user", "content": answers})
        raise AssertionError("the turn did not end")

    async def _run_tool(self, call_id: str, name: str, args: dict[str, Any], step: str) -> str:
        if "forget_result" not in self.bugs:
            self.log.tool_call(call_id, name, args, step_id=step)
        try:
            text = await self._call(name, args)
        except asyncio.CancelledError:
            self.log.tool_result(call_id, outcome="interrupted", step_id=step)
            if "log_twice" in self.bugs:
                self.log.tool_result(call_id, "late", step_id=step)
            if "retry_after_stop" in self.bugs:
                self.background.append(asyncio.ensure_future(self._call(name, args)))
            raise
        if "forget_result" not in self.bugs:
            self.log.tool_result(call_id, text, step_id=step)
        return text

    async def _call(self, name: str, args: dict[str, Any]) -> str:
        """One tool call, retried once when it failed without an answer."""
        call = self.session.call_tool(name, args)
        if "shield_call" in self.bugs:
            task = asyncio.ensure_future(call)
            self.background.append(task)
            call = asyncio.shield(task)
        try:
            result = await call
        except MCPError:
            retried = {**args, "attempt": 2} if "mangle_retry" in self.bugs else args
            result = await self.session.call_tool(name, retried)
        return "".join(getattr(b, "text", "") for b in result.content)


def _block(block: Any) -> dict[str, Any]:
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return {"type": "text", "text": block.text}
