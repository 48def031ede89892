"""A ``Response`` body back to a neutral :class:`~....neutral.Reply`.

Each ``reasoning`` item becomes one :class:`Thinking`, each ``output_text`` /
``refusal`` part a :class:`Text` (its ``url_citation`` annotations as citations), each
``function_call`` a :class:`ToolCall`, each ``web_search_call`` that searched a
:class:`ServerToolCall`; a ``failed`` response keeps its error as the reply's fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....neutral import (
    Citation,
    Fault,
    Part,
    Reply,
    ServerToolCall,
    StopReason,
    Text,
    Thinking,
    ToolCall,
    Usage,
)
from ...base import Codec
from .request import arguments

__all__ = ["to_reply"]


def to_reply(codec: Codec, body: Mapping[str, Any]) -> Reply:
    """A ``Response`` body as a neutral :class:`Reply`.

    Each ``reasoning`` item becomes one :class:`Thinking` (summary texts, or
    raw ``reasoning_text`` content, joined by blank lines; ``encrypted_content``
    as the signature); each ``output_text`` / ``refusal`` part a :class:`Text`
    (its ``url_citation`` annotations as citations); each ``function_call`` a
    :class:`ToolCall` with ``call_id`` as its id; each ``web_search_call`` that
    searched a :class:`ServerToolCall`. Other server-side items (tool search,
    file search, ...) have no neutral form and are skipped.
    """
    output = body.get("output")
    if not isinstance(output, list):
        raise codec.error("a Response needs an 'output' list", field="output")
    parts: list[Part] = []
    refused = False
    for i, item in enumerate(output):
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            raise codec.error("each output item needs a string 'type'", field=f"output[{i}].type")
        refused |= _item_parts(codec, item, f"output[{i}]", parts)
    return Reply(
        parts=parts,
        usage=_usage_from(body.get("usage")),
        stop=_stop_from(body, parts, refused),
        model=body.get("model") if isinstance(body.get("model"), str) else None,
        fault=_fault_from(body),
    )


def _item_parts(codec: Codec, item: Mapping[str, Any], where: str, parts: list[Part]) -> bool:
    """Append ``item``'s neutral parts; True when it holds a refusal."""
    kind = item["type"]
    if kind == "message":
        return _message_parts(codec, item, where, parts)
    if kind == "reasoning":
        parts.append(_thinking_from(item))
    elif kind == "web_search_call":
        parts.extend(_web_search_from(item))
    elif kind in ("function_call", "custom_tool_call"):
        for key in ("name", "call_id"):
            if not isinstance(item.get(key), str):
                raise codec.error(f"a {kind} needs a string {key!r}", field=f"{where}.{key}")
        args = (
            arguments(item.get("arguments"))
            if kind == "function_call"
            else {"input": item.get("input", "")}
        )
        parts.append(ToolCall(name=item["name"], args=args, id=item["call_id"]))
    return False


def _message_parts(codec: Codec, item: Mapping[str, Any], where: str, parts: list[Part]) -> bool:
    content = item.get("content") or []
    if not isinstance(content, list):
        raise codec.error("message content must be a list", field=f"{where}.content")
    refused = False
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        key = {"output_text": "text", "refusal": "refusal"}.get(str(kind))
        if key is None:
            continue  # e.g. future part types: no neutral form
        if not isinstance(part.get(key), str):
            raise codec.error(
                f"a {kind} part needs a string {key!r}", field=f"{where}.content[{j}].{key}"
            )
        parts.append(Text(text=part[key], citations=_citations_from(part, part[key])))
        refused |= kind == "refusal"
    return refused


def _citations_from(part: Mapping[str, Any], text: str) -> list[Citation]:
    """The ``url_citation`` annotations of a text part; one spanning the whole text
    reads back without a span (as a citation with no span is rendered)."""
    out = []
    for note in part.get("annotations") or []:
        if not isinstance(note, Mapping) or note.get("type") != "url_citation":
            continue  # file citations have no neutral form
        url, start, end = note.get("url"), note.get("start_index"), note.get("end_index")
        if not (isinstance(url, str) and url and isinstance(start, int) and isinstance(end, int)):
            continue
        if not 0 <= start <= end <= len(text):
            continue  # a span outside the text: not a citation this model can hold
        whole = (start, end) == (0, len(text))
        out.append(
            Citation(
                url=url,
                title=str(note.get("title") or ""),
                start=None if whole else start,
                end=None if whole else end,
            )
        )
    return out


def _web_search_from(item: Mapping[str, Any]) -> list[ServerToolCall]:
    """A ``web_search_call`` that searched (``action.type == "search"``) as a server
    tool call; other actions (opening or finding in a page) have no neutral form."""
    action = item.get("action")
    if not isinstance(action, Mapping) or action.get("type") != "search":
        return []
    query = action.get("query")
    sources = action.get("sources") or []
    urls = [s["url"] for s in sources if isinstance(s, Mapping) and isinstance(s.get("url"), str)]
    failed = item.get("status") == "failed"
    ident = item.get("id")
    return [
        ServerToolCall.web_search(
            query if isinstance(query, str) else "",
            [] if failed else [u for u in urls if u],
            id=ident if isinstance(ident, str) else None,
            error="failed" if failed else None,
        )
    ]


def _thinking_from(item: Mapping[str, Any]) -> Thinking:
    texts = [
        p.get("text", "")
        for p in item.get("summary") or []
        if isinstance(p, Mapping) and p.get("type") == "summary_text"
    ]
    if not texts:
        texts = [
            p.get("text", "")
            for p in item.get("content") or []
            if isinstance(p, Mapping) and p.get("type") == "reasoning_text"
        ]
    signature = item.get("encrypted_content")
    return Thinking(
        text="\n\n".join(str(t) for t in texts),
        signature=signature if isinstance(signature, str) else None,
    )


def _usage_from(usage: Any) -> Usage | None:
    """Usage back to neutral; a zero cached / reasoning count reads as ``None``
    (the API writes 0 for both "none" and "not applicable")."""
    if not isinstance(usage, Mapping):
        return None
    inputs = usage.get("input_tokens_details") or {}
    outputs = usage.get("output_tokens_details") or {}
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_read_input_tokens=inputs.get("cached_tokens") or None,
        reasoning_tokens=outputs.get("reasoning_tokens") or None,
    )


def _stop_from(body: Mapping[str, Any], parts: list[Part], refused: bool) -> StopReason:
    details = body.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, Mapping) else None
    if body.get("status") == "incomplete" and reason == "max_output_tokens":
        return "max_tokens"
    if refused or reason == "content_filter":
        return "refusal"
    return "tool_use" if any(isinstance(p, ToolCall) for p in parts) else "end_turn"


def _fault_from(body: Mapping[str, Any]) -> Fault | None:
    """A ``failed`` response carries its error: keep it as the reply's fault."""
    error = body.get("error")
    if body.get("status") != "failed" or not isinstance(error, Mapping):
        return None
    return Fault.error_event(
        str(error.get("code") or "server_error"), str(error.get("message") or "")
    )
