"""The ``conversation`` key part: a request as a trace knows it.

An interaction imported from a trace (:mod:`..traces`) knows the model, the system
instructions, the messages and whether the call streamed, but not the exact body the
agent sent (sampling options, tool schemas, SDK defaults are partly or wholly missing
from spans). So imported cassettes match on this part: the request body parsed by its
provider's codec into neutral form, and projected onto what every GenAI span holds:
each message's role, its text, its tool calls (name and arguments) and its tool results
(content). Ids are left out: instrumentations make some up (Gemini's ``name_0``), and
the ids a replay hands out are the trace's anyway.

The codec is loaded only when a cassette matches on this part, never on the plain
replay path.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import CodecError
from ..providers import codec_for, detect, target

if TYPE_CHECKING:
    from .cassette import RecordedRequest

__all__ = ["conversation", "conversation_key"]


def conversation(request: RecordedRequest) -> dict[str, Any] | None:
    """What a trace knows of ``request``: provider, model, whether it streams, the system
    text and the messages, projected as the module says; ``None`` for a request that is
    no model call, or whose body its codec refuses."""
    provider = detect(request.method, urlsplit(request.url).path)
    if provider is None or not isinstance(request.json_body, dict):
        return None
    try:
        parsed = codec_for(provider).parse_call(
            request.method, target(request.url), request.json_body
        )
    except CodecError:
        return None
    messages = [_message(m.role, m.parts) for m in parsed.messages]
    system = parsed.system
    if messages and messages[0]["role"] in ("system", "developer"):
        said = messages.pop(0)["text"]  # OpenAI's system message is the instructions
        system = said if system is None else system
    return {
        "provider": provider,
        "model": parsed.model,
        "stream": parsed.stream,
        "system": system or None,
        "messages": [m for m in messages if m["text"] or m["calls"] or m["results"]],
    }


def conversation_key(request: RecordedRequest) -> Hashable:
    """:func:`conversation` as a hashable key (its canonical JSON text)."""
    seen = conversation(request)
    if seen is None:
        return None
    return json.dumps(seen, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _message(role: str, parts: Any) -> dict[str, Any]:
    text = "".join(getattr(p, "text", "") for p in parts if p.kind == "text")
    calls = [[p.name, p.args] for p in parts if p.kind == "tool_call"]
    results = [_result_text(p.content) for p in parts if p.kind == "tool_result"]
    if role == "tool":  # OpenAI sends results as tool messages, the others as the user's
        role = "user"
    if results and not text and not calls:
        role = "user"
    return {"role": role, "text": text, "calls": calls, "results": results}


def _result_text(content: str) -> Any:
    """A tool result's content, JSON parsed when it is JSON: Gemini sends an object,
    OpenAI and Anthropic a string, and a trace holds whichever it saw."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if isinstance(value, dict) and set(value) == {"result"}:
        value = value["result"]  # Gemini's functionResponse wraps a plain result
    return value
