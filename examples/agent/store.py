"""The durable store: sqlite (stdlib), one write per statement, nothing kept in memory.

Three tables:

* ``messages`` — the session's saved context, in order: user questions, assistant
  answers (with their tool calls and the web sources they cite), tool results, and
  error turns (``kind='error'``);
* ``turns`` — each turn's status (``running`` until it completes, fails or aborts)
  and, once completed, its answer and usage;
* ``wal`` — the write-ahead log: an ``intent`` (the request) before each model
  call, a ``completion`` (the reply) after it. An intent without a completion is a
  call the process died in; :meth:`Store.dangling_intents` finds them for resume.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .events import NO_USAGE, Citation, Usage

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, turn_id TEXT, step_id TEXT,
    role TEXT, kind TEXT, text TEXT, tool_calls TEXT, tool_call_id TEXT,
    citations TEXT DEFAULT '[]');
CREATE TABLE IF NOT EXISTS turns (
    turn_id TEXT PRIMARY KEY, session_id TEXT, status TEXT, text TEXT,
    input_tokens INTEGER, output_tokens INTEGER, provider TEXT, model TEXT,
    cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS wal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, turn_id TEXT, step_id TEXT,
    step_index INTEGER, key TEXT, entry TEXT, body TEXT);
"""
# A store written before messages had citations gains the column (and keeps its rows).
CITATIONS_COLUMN = "ALTER TABLE messages ADD COLUMN citations TEXT DEFAULT '[]'"


@dataclass(frozen=True)
class ToolUse:
    """A tool call the model made."""

    id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    """One message of the saved context."""

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    kind: Literal["message", "error"] = "message"
    tool_calls: tuple[ToolUse, ...] = ()
    tool_call_id: str | None = None
    session_id: str = ""
    turn_id: str = ""
    step_id: str | None = None
    citations: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class WalRecord:
    """A write-ahead-log entry: an ``intent`` (the request) or a ``completion``."""

    entry: Literal["intent", "completion"]
    key: str
    session_id: str
    turn_id: str
    step_id: str
    step_index: int
    body: dict[str, Any]


@dataclass(frozen=True)
class TurnRecord:
    """A turn as stored."""

    turn_id: str
    session_id: str
    status: Literal["running", "completed", "failed", "aborted"]
    text: str
    usage: Usage
    provider: str
    model: str


Record = Message | WalRecord
Listener = Callable[[Record], None]


class Store:
    """The agent's sqlite store; ``path`` is a file (survives a restart) or ``:memory:``.

    Every method that writes commits one transaction: what belongs together (a
    completion and the answer it brought, an error turn and the turn's end) lands
    together or not at all. Listeners hear of each message and WAL record after the
    commit.
    """

    def __init__(self, path: str = ":memory:") -> None:
        self.db = sqlite3.connect(path, isolation_level=None)  # we BEGIN and COMMIT ourselves
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(messages)")}
        if "citations" not in columns:
            self.db.execute(CITATIONS_COLUMN)
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` with every message and WAL record written."""
        self._listeners.append(listener)

    def close(self) -> None:
        self.db.close()

    # --- writing ---------------------------------------------------------------------

    def begin_turn(self, message: Message) -> None:
        """A new turn (``running``) and the user message that opens it."""
        self._commit(
            [
                (
                    "INSERT INTO turns VALUES (?, ?, 'running', '', 0, 0, '', '', 0, 0)",
                    (message.turn_id, message.session_id),
                )
            ],
            [message],
        )

    def save(self, *records: Record) -> None:
        """Append messages and WAL records, in one transaction."""
        self._commit([], list(records))

    def end_turn(
        self,
        turn_id: str,
        status: str,
        *messages: Message,
        text: str = "",
        usage: Usage = NO_USAGE,
        provider: str = "",
        model: str = "",
    ) -> None:
        """Close a turn (``completed``, ``failed``, ``aborted``) with its last messages."""
        update = (
            "UPDATE turns SET status=?, text=?, input_tokens=?, output_tokens=?, provider=?, "
            "model=?, cache_read_tokens=?, cache_write_tokens=? WHERE turn_id=?",
            (
                status,
                text,
                usage.input_tokens,
                usage.output_tokens,
                provider,
                model,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                turn_id,
            ),
        )
        self._commit([update], list(messages))

    def _commit(self, statements: list[tuple[str, tuple[Any, ...]]], records: list[Record]) -> None:
        self.db.execute("BEGIN")
        try:
            for record in records:
                self.db.execute(*_insert(record))
            for statement in statements:
                self.db.execute(*statement)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        for record in records:
            for listener in self._listeners:
                listener(record)

    # --- reading ---------------------------------------------------------------------

    def turn(self, turn_id: str) -> TurnRecord:
        row = self.db.execute("SELECT * FROM turns WHERE turn_id=?", (turn_id,)).fetchone()
        turn, session, status, text, tokens_in, tokens_out, provider, model, read, write = row
        usage = Usage(tokens_in, tokens_out, read or 0, write or 0)  # cache tokens kept too
        return TurnRecord(turn, session, status, text, usage, provider, model)

    def pending_turns(self, session_id: str) -> list[str]:
        """Turns that started and never ended: what a crash leaves behind."""
        rows = self.db.execute(
            "SELECT turn_id FROM turns WHERE session_id=? AND status='running'", (session_id,)
        )
        return [turn_id for (turn_id,) in rows]

    def messages(self, session_id: str) -> list[Message]:
        rows = self.db.execute(
            "SELECT role, text, kind, tool_calls, tool_call_id, session_id, turn_id, step_id, "
            "citations FROM messages WHERE session_id=? ORDER BY seq",
            (session_id,),
        )
        return [
            Message(
                role,
                text,
                kind,
                tuple(ToolUse(**c) for c in json.loads(calls)),
                call_id,
                session,
                turn,
                step,
                tuple(Citation(**c) for c in json.loads(cited or "[]")),
            )
            for role, text, kind, calls, call_id, session, turn, step, cited in rows
        ]

    def wal(self, session_id: str) -> list[WalRecord]:
        rows = self.db.execute(
            "SELECT entry, key, session_id, turn_id, step_id, step_index, body FROM wal "
            "WHERE session_id=? ORDER BY seq",
            (session_id,),
        )
        return [
            WalRecord(entry, key, session, turn, step, index, json.loads(body))
            for entry, key, session, turn, step, index, body in rows
        ]

    def dangling_intents(self, session_id: str) -> list[WalRecord]:
        """Intents whose model call never completed (the last record of their key)."""
        last: dict[str, WalRecord] = {}
        for record in self.wal(session_id):
            last[record.key] = record
        return [r for r in last.values() if r.entry == "intent"]


def _insert(record: Record) -> tuple[str, tuple[Any, ...]]:
    if isinstance(record, Message):
        calls = json.dumps([vars(call) for call in record.tool_calls])
        return (
            "INSERT INTO messages (session_id, turn_id, step_id, role, kind, text, tool_calls, "
            "tool_call_id, citations) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.session_id,
                record.turn_id,
                record.step_id,
                record.role,
                record.kind,
                record.text,
                calls,
                record.tool_call_id,
                json.dumps([vars(citation) for citation in record.citations]),
            ),
        )
    return (
        "INSERT INTO wal (session_id, turn_id, step_id, step_index, key, entry, body) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            record.session_id,
            record.turn_id,
            record.step_id,
            record.step_index,
            record.key,
            record.entry,
            json.dumps(record.body, sort_keys=True),
        ),
    )
