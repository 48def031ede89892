"""A final Anthropic ``Message`` body back to a neutral :class:`~...neutral.Reply`.

Text (with its web citations), tool-use and thinking blocks become parts; a
``server_tool_use`` block of a tool the codec renders (``web_search``,
``code_execution``) becomes a :class:`~...neutral.ServerToolCall` together with the
result block that answers it. Blocks with no neutral form (redacted thinking, other
server tools, citations of documents rather than web pages) are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...neutral import (
    Citation,
    CodeOutput,
    Part,
    Reply,
    SearchResult,
    ServerToolCall,
    StopReason,
    Text,
    Thinking,
    ToolCall,
    Usage,
)
from ..base import Codec

__all__ = ["to_reply"]

_STOP_IN: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    # No neutral twin: a paused server-tool turn ended this response normally, and a
    # full context window is a length limit.
    "pause_turn": "end_turn",
    "model_context_window_exceeded": "max_tokens",
}
_STRINGS = {"text": ("text",), "tool_use": ("name", "id"), "thinking": ("thinking",)}


def to_reply(codec: Codec, body: Mapping[str, Any]) -> Reply:
    """The body's blocks as neutral parts, with its usage, stop reason and model."""
    content = body.get("content")
    if not isinstance(content, list):
        raise codec.error("must be a list of content blocks", field="content")
    stop = body.get("stop_reason")
    model = body.get("model")
    return Reply(
        parts=_parts(codec, content),
        usage=_usage(codec, body.get("usage")),
        stop=_STOP_IN.get(stop) if isinstance(stop, str) else None,
        model=model if isinstance(model, str) else None,
    )


def _usage(codec: Codec, usage: Any) -> Usage | None:
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("output_tokens_details")
    try:
        return Usage(
            input_tokens=usage.get("input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            cache_creation_input_tokens=usage.get("cache_creation_input_tokens"),
            cache_read_input_tokens=usage.get("cache_read_input_tokens"),
            reasoning_tokens=details.get("thinking_tokens")
            if isinstance(details, Mapping)
            else None,
        )
    except ValueError as exc:
        raise codec.error(f"bad token counts: {exc}", field="usage") from None


def _parts(codec: Codec, content: Sequence[Any]) -> list[Part]:
    """The neutral parts of a ``content`` list, in order."""
    results = _results_by_id(content)
    parts: list[Part] = []
    for index, block in enumerate(content):
        part = _part(codec, block, f"content[{index}]", results)
        if part is not None:
            parts.append(part)
    return parts


def _results_by_id(content: Sequence[Any]) -> dict[str, Mapping[str, Any]]:
    """Server tool result blocks by the ``tool_use_id`` they answer."""
    return {
        block["tool_use_id"]: block
        for block in content
        if isinstance(block, Mapping)
        and str(block.get("type", "")).endswith("_tool_result")
        and isinstance(block.get("tool_use_id"), str)
    }


def _part(
    codec: Codec, block: Any, path: str, results: dict[str, Mapping[str, Any]]
) -> Part | None:
    if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
        raise codec.error("must be an object with a string `type`", field=f"{path}.type")
    kind = block["type"]
    for key in _STRINGS.get(kind, ()):
        if not isinstance(block.get(key), str):
            raise codec.error("must be a string", field=f"{path}.{key}")
    if kind == "text":
        return Text(text=block["text"], citations=_citations(block.get("citations")))
    if kind == "tool_use":
        args = block.get("input")
        if not isinstance(args, Mapping) or not block["name"]:
            raise codec.error("tool_use needs a name and an object input", field=f"{path}.input")
        return ToolCall(name=block["name"], args=dict(args), id=block["id"])
    if kind == "thinking":
        return Thinking(text=block["thinking"], signature=block.get("signature") or None)
    if kind == "server_tool_use" and block.get("name") in codec.server_tools:
        return _server_tool(codec, block, path, results)
    return None


def _citations(cited: Any) -> list[Citation]:
    """The web citations of a text block (document citations have no neutral form)."""
    if not isinstance(cited, list):
        return []
    return [
        Citation(url=c["url"], title=c.get("title") or "", cited_text=c.get("cited_text") or "")
        for c in cited
        if isinstance(c, Mapping)
        and c.get("type") == "web_search_result_location"
        and isinstance(c.get("url"), str)
        and c["url"]
    ]


def _server_tool(
    codec: Codec, block: Mapping[str, Any], path: str, results: dict[str, Mapping[str, Any]]
) -> ServerToolCall | None:
    ident, args = block.get("id"), block.get("input")
    if not isinstance(ident, str) or not isinstance(args, Mapping):
        raise codec.error(
            "server_tool_use needs a string id and an object input", field=f"{path}.input"
        )
    content = results.get(ident, {}).get("content")
    error = content.get("error_code") if isinstance(content, Mapping) else None
    try:
        return ServerToolCall(
            name=block["name"],
            args=dict(args),
            id=ident,
            results=_pages(content) if error is None else [],
            output=_output(content) if error is None else None,
            error=error if isinstance(error, str) else None,
        )
    except ValueError as exc:  # e.g. a search without a string query
        raise codec.error(
            f"not a {block['name']} call this model can read: {exc}", field=path
        ) from None


def _pages(content: Any) -> list[SearchResult]:
    if not isinstance(content, list):
        return []
    return [
        SearchResult(url=r["url"], title=r.get("title") or "", page_age=r.get("page_age"))
        for r in content
        if isinstance(r, Mapping) and isinstance(r.get("url"), str) and r["url"]
    ]


def _output(content: Any) -> CodeOutput | None:
    if not isinstance(content, Mapping) or content.get("type") != "code_execution_result":
        return None
    return CodeOutput(
        stdout=str(content.get("stdout") or ""),
        stderr=str(content.get("stderr") or ""),
        return_code=int(content.get("return_code") or 0),
    )
