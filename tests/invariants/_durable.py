"""A toy durable agent runtime for the crash-point explorer, with seeded bugs.

It keeps its state in sqlite: the conversation (``messages``) and a write-ahead
log (``wal``): an intent row is written before each model call and marked done,
in the same transaction that saves the reply, after it. Tool results are saved
one by one. ``resume()`` picks the turn up from the store: it re-issues a
dangling intent, runs the tool calls that have no result yet, and carries on.

Each ``checkpoint(...)`` call follows a commit: a crash there loses nothing that
was committed, which is the promise a durable runtime makes.

Seeded bugs (``bug=``):

* ``"second_intent"``: resume writes a new intent row for a dangling one instead
  of re-issuing it, so the log shows an intent that never completed;
* ``"rerun_tools"``: resume re-runs every tool call of the last reply, even
  those whose result is saved, so the model is sent a duplicated result;
* ``"resume_fails"``: resume cannot handle a turn that crashed before any reply.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

import anthropic

Checkpoint = Callable[[str], None]
SCHEMA = """
CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, role TEXT, content TEXT);
CREATE TABLE wal (id INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER, status TEXT);
"""
TOOLS = [
    {
        "name": "weather",
        "description": "Weather in a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def weather(city: str) -> str:
    return {"Leeds": "sunny", "York": "rainy"}.get(city, "foggy")


def _no_checkpoint(label: str = "") -> None:
    return None


class DurableAgent:
    """One conversation, stored in an in-memory sqlite database."""

    def __init__(self, *, bug: str | None = None) -> None:
        self.bug = bug
        self.db = sqlite3.connect(":memory:")
        self.db.executescript(SCHEMA)
        self._client: anthropic.Anthropic | None = None

    @property
    def client(self) -> anthropic.Anthropic:
        # Built on first use, inside the fake model's scope (no SSL context there).
        if self._client is None:
            self._client = anthropic.Anthropic(api_key="test", max_retries=0)
        return self._client

    # --- the runtime ----------------------------------------------------------------

    def run(self, question: str, checkpoint: Checkpoint = _no_checkpoint) -> str:
        with self.db:
            self._save("user", question)
        checkpoint("user message saved")
        return self._loop(checkpoint, resuming=False)

    def resume(self) -> str:
        return self._loop(_no_checkpoint, resuming=True)

    def _loop(self, checkpoint: Checkpoint, *, resuming: bool) -> str:
        while True:
            rows = self._rows()
            reply = next(r for r in reversed(rows) if r["role"] in ("user", "assistant"))
            if reply["role"] == "assistant":
                calls = [b for b in reply["content"] if b["type"] == "tool_use"]
                if not calls:
                    return "".join(b["text"] for b in reply["content"] if b["type"] == "text")
                if self._run_tools(calls, rows, checkpoint, resuming=resuming):
                    continue
            self._model_step(checkpoint, resuming=resuming)

    def _model_step(self, checkpoint: Checkpoint, *, resuming: bool) -> None:
        step = self._count("SELECT COUNT(*) FROM messages WHERE role = 'assistant'")
        open_intent = self._count(
            "SELECT COUNT(*) FROM wal WHERE step = ? AND status = 'intent'", step
        )
        if resuming and self.bug == "resume_fails" and step == 0:
            raise RuntimeError("nothing to resume from")
        if not open_intent or (resuming and self.bug == "second_intent"):
            with self.db:
                self.db.execute("INSERT INTO wal (step, status) VALUES (?, 'intent')", (step,))
            checkpoint(f"intent {step}")
        message = self.client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, tools=TOOLS, messages=self._request()
        )
        content = [block.model_dump(exclude_none=True) for block in message.content]
        with self.db:
            self._save("assistant", content)
            self.db.execute(
                "UPDATE wal SET status = 'done' WHERE id = "
                "(SELECT MIN(id) FROM wal WHERE step = ? AND status = 'intent')",
                (step,),
            )
        checkpoint(f"reply {step}")

    def _run_tools(
        self,
        calls: list[dict[str, Any]],
        rows: list[dict[str, Any]],
        checkpoint: Checkpoint,
        *,
        resuming: bool,
    ) -> bool:
        """Run the calls that have no saved result; ``False`` when none was left."""
        done = {r["content"]["tool_use_id"] for r in rows if r["role"] == "tool"}
        if resuming and self.bug == "rerun_tools":
            done, self.bug = set(), None  # the bug: re-run them all (once)
        pending = [call for call in calls if call["id"] not in done]
        for call in pending:
            result = {
                "type": "tool_result",
                "tool_use_id": call["id"],
                "content": weather(**call["input"]),
            }
            with self.db:
                self._save("tool", result)
            checkpoint(f"tool result {call['input']}")
        return bool(pending)

    # --- the store ----------------------------------------------------------------------

    def _save(self, role: str, content: Any) -> None:
        self.db.execute(
            "INSERT INTO messages (role, content) VALUES (?, ?)", (role, json.dumps(content))
        )

    def _count(self, sql: str, *args: Any) -> int:
        return int(self.db.execute(sql, args).fetchone()[0])

    def _rows(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT role, content FROM messages ORDER BY seq").fetchall()
        return [{"role": role, "content": json.loads(content)} for role, content in rows]

    def _request(self) -> list[dict[str, Any]]:
        """The stored conversation as Anthropic messages: consecutive tool results
        travel together in one user message."""
        out: list[dict[str, Any]] = []
        for row in self._rows():
            if row["role"] == "tool":
                if out and out[-1].get("tool_results"):
                    out[-1]["content"].append(row["content"])
                else:
                    out.append({"role": "user", "content": [row["content"]], "tool_results": True})
            else:
                out.append({"role": row["role"], "content": row["content"]})
        return [{k: v for k, v in m.items() if k != "tool_results"} for m in out]

    def state(self) -> dict[str, Any]:
        """What must come out the same after a crash: the conversation and the log."""
        wal = self.db.execute("SELECT step, status FROM wal ORDER BY id").fetchall()
        return {
            "messages": [
                f"{r['role']}: {json.dumps(r['content'], sort_keys=True)}" for r in self._rows()
            ],
            "wal": [f"step {step}: {status}" for step, status in wal],
        }
