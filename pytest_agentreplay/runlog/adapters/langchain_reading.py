"""Reading LangChain and LangGraph objects by attribute, for the callback adapter
(:mod:`.langchain`): the text and usage of a chat model's answer, the messages a
LangGraph node wrote to the graph's state, the LangGraph task a callback ran in, and
what counts as the user stopping a run. Nothing here imports LangChain."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...neutral import Usage
from ..entries import Role
from .tokens import token_count

__all__ = [
    "LC_RUN_ID_PREFIX",
    "first_message",
    "is_resume",
    "is_stop",
    "last_human_text",
    "message_key",
    "message_role",
    "pauses",
    "task_key",
    "text_of",
    "usage_of",
    "written_messages",
]

LC_RUN_ID_PREFIX = "lc_run-"
"""LangChain names the message a chat model returns ``lc_run--<run id>``: the run
(the step) that produced it, even once the graph has saved it."""

_STOPS = (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit)
# LangChain's message types, as the run log's roles.
_ROLES: dict[str, Role] = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "AIMessageChunk": "assistant",
    "system": "system",
    "developer": "developer",
    "tool": "tool",
    "function": "tool",
}


def is_stop(error: BaseException) -> bool:
    """Whether ``error`` means the run was stopped rather than failed: a cancelled task
    (``ainvoke`` cancelled, the stop button), a closed ``astream`` (the consumer broke
    out of it: ``GeneratorExit``), Ctrl-C."""
    return isinstance(error, _STOPS)


def is_resume(inputs: Any) -> bool:
    """Whether a graph's input continues a run from its checkpoint instead of starting
    a turn: ``None`` (go on from the last checkpoint) or a LangGraph ``Command``
    (``Command(resume=...)`` after an ``interrupt()``)."""
    kind = type(inputs)
    return inputs is None or (
        kind.__name__ == "Command" and kind.__module__.startswith("langgraph")
    )


def pauses(error: BaseException) -> bool:
    """Whether a node's ``error`` is LangGraph pausing the graph (``interrupt()``
    raises ``GraphInterrupt``), not failing it: the graph returns normally, and a
    ``Command(resume=...)`` runs the node again."""
    return any(kind.__name__ == "GraphInterrupt" for kind in type(error).__mro__)


def task_key(tags: Sequence[str] | None, metadata: Mapping[str, Any] | None) -> str | None:
    """The LangGraph task a chain run *is* (a node run by the graph: tagged
    ``graph:step:N``), as ``thread/step/node`` — the thread, the super-step of the
    graph and the node (its path in nested graphs); ``None`` for any other run. A task
    re-run from its checkpoint (a resume, a retry, a replay of an earlier checkpoint)
    has the same key; a task LangGraph starts with ``Send`` is told apart by its id."""
    if not any(str(tag).startswith("graph:step:") for tag in tags or ()):
        return None
    metadata = metadata or {}
    namespace = metadata.get("langgraph_checkpoint_ns")
    if not isinstance(namespace, str) or not namespace:
        return None
    path = metadata.get("langgraph_path") or ()
    nodes = "|".join(part.split(":")[0] for part in namespace.split("|"))
    if path and path[0] != "__pregel_pull":  # a Send: many tasks of one node, one step
        nodes = namespace
    thread = metadata.get("thread_id", "")
    return f"{thread}/{metadata.get('langgraph_step', '')}/{nodes}"


def last_human_text(inputs: Any) -> str | None:
    """The question a turn starts with: a string input, or the last message of the
    input's ``messages`` when it is the user's."""
    if isinstance(inputs, str):
        return inputs
    messages = inputs.get("messages") if isinstance(inputs, dict) else None
    if not messages:
        return None
    role, content = _role_and_content(messages[-1])
    return text_of(content) if role == "user" else None


def first_message(response: Any) -> Any:
    """The message of an ``LLMResult``'s first generation (``None`` if it has none)."""
    generations = getattr(response, "generations", None) or [[]]
    first = generations[0][0] if generations[0] else None
    return getattr(first, "message", None)


def text_of(content: Any) -> str:
    """Text of a message's content: a string, or the text of its content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text", ""))
            for b in content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        )
    return "" if content is None else str(content)


def usage_of(message: Any) -> Usage | None:
    """A chat model answer's ``usage_metadata`` as the run log keeps usage."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    details = usage.get("input_token_details") or {}
    return Usage(
        input_tokens=usage.get("input_tokens", 0) or 0,
        output_tokens=usage.get("output_tokens", 0) or 0,
        cache_read_input_tokens=token_count(details.get("cache_read")),
        cache_creation_input_tokens=token_count(details.get("cache_creation")),
    )


def message_role(message: Any) -> Role | None:
    """The run-log role of a LangChain message (or ``(role, content)`` tuple, or dict)."""
    return _role_and_content(message)[0]


def written_messages(outputs: Any) -> Iterator[Any]:
    """The messages a LangGraph node wrote to the graph's state: every message (or
    list of messages) in its update, under any key — ``{"messages": [...]}``, a
    ``Command(update=...)``, or a list of such updates."""
    update = getattr(outputs, "update", outputs) if not isinstance(outputs, Mapping) else outputs
    if isinstance(update, (list, tuple)) and not _is_message(update):
        for item in update:
            yield from written_messages(item)
        return
    if not isinstance(update, Mapping):
        return
    for value in update.values():
        values = value if isinstance(value, (list, tuple)) and not _is_message(value) else [value]
        yield from (v for v in values if _is_message(v))


def message_key(messages: Any) -> str:
    """A chat model's input messages as comparable text (type, content, tool calls):
    a retry resends the same key."""
    return json.dumps(
        [
            [
                getattr(m, "type", None),
                getattr(m, "content", None),
                getattr(m, "tool_calls", None),
                getattr(m, "tool_call_id", None),
            ]
            for batch in messages or ()
            for m in batch
        ],
        sort_keys=True,
        default=str,
    )


def _is_message(value: Any) -> bool:
    """A LangChain message, or the ``(role, content)`` shorthand a graph accepts."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return value[0] in _ROLES
    return hasattr(value, "content") and isinstance(getattr(value, "type", None), str)


def _role_and_content(message: Any) -> tuple[Role | None, Any]:
    if isinstance(message, (tuple, list)) and len(message) == 2:
        role, content = message
    elif isinstance(message, dict):
        role, content = message.get("role"), message.get("content")
    else:
        role, content = getattr(message, "type", None), getattr(message, "content", None)
    return _ROLES.get(str(role)), content
