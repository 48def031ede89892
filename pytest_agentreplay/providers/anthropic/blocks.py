"""Anthropic content blocks: a neutral part as the final block(s) of a ``Message``, what
``content_block_start`` announces for each, and the deltas that grow it.

One part is one block, except a :class:`~...neutral.ServerToolCall`, which is two, as the
API sends a provider-side tool: a ``server_tool_use`` block (its input streamed as
``input_json_delta`` fragments, like a tool call's) followed by its result block,
``web_search_tool_result`` or ``code_execution_tool_result``, which arrives whole in
its ``content_block_start``. A text part with citations starts with ``"citations":
[]`` and gets one ``citations_delta`` per citation before its text, as in the real
recordings (``tests/corpus/real/anthropic/pydantic-ai__test_anthropic_web_search_
tool_stream.yaml``). Ids, signatures and the opaque ``encrypted_*`` values a reply
does not give come from the render context, in one order for both paths.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from json.encoder import encode_basestring
from typing import Any

from ...neutral import Citation, Part, ServerToolCall, Text, ToolCall
from ..base import RenderContext, iter_text, json_data, split_json

__all__ = ["B64", "container", "delta_data", "deltas", "opening", "server_tool_usage", "to_blocks"]

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_CONTAINER_LIFETIME = 3600  # seconds a code-execution container lives after the call

Block = dict[str, Any]


def to_blocks(part: Part, ctx: RenderContext) -> list[dict[str, Any]]:
    """A part's final content block(s); missing ids and opaque values come from ``ctx.ids``."""
    if isinstance(part, Text):
        return [_text(part, ctx)]
    if isinstance(part, ToolCall):
        return [_use("tool_use", "toolu_01", part, ctx)]
    if isinstance(part, ServerToolCall):
        return _server_tool(part, ctx)
    signature = part.signature or _signature(ctx)
    return [{"type": "thinking", "thinking": part.text, "signature": signature}]


def _text(part: Text, ctx: RenderContext) -> dict[str, Any]:
    if not part.citations:
        return {"type": "text", "text": part.text}
    cited = [_citation(c, ctx) for c in part.citations]
    return {"citations": cited, "type": "text", "text": part.text}


def _citation(citation: Citation, ctx: RenderContext) -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "cited_text": citation.cited_text,
        "url": citation.url,
        "title": citation.title,
        "encrypted_index": _opaque(ctx, 1),
    }


def _use(kind: str, prefix: str, part: ToolCall | ServerToolCall, ctx: RenderContext) -> Block:
    """A ``tool_use`` or ``server_tool_use`` block: the call's id (drawn when the reply
    gives none), its name and its input."""
    ident = part.id or ctx.ids.new(prefix, 22)
    return {"type": kind, "id": ident, "name": part.name, "input": part.args}


def _server_tool(part: ServerToolCall, ctx: RenderContext) -> list[Block]:
    use = _use("server_tool_use", "srvtoolu_01", part, ctx)
    result = {"type": f"{part.name}_tool_result", "tool_use_id": use["id"], **_result(part, ctx)}
    return [use, result]


def _result(part: ServerToolCall, ctx: RenderContext) -> dict[str, Any]:
    """The ``content`` of a server tool's result block: its results, or its error."""
    if part.error is not None:
        return {"content": {"type": f"{part.name}_tool_result_error", "error_code": part.error}}
    if part.name == "web_search":
        pages = [
            {
                "type": "web_search_result",
                "title": page.title,
                "url": page.url,
                "encrypted_content": _opaque(ctx, 2),
                "page_age": page.page_age,
            }
            for page in part.results
        ]
        return {"content": pages}
    out = part.output
    printed = {} if out is None else out.model_dump()
    return {"content": {"type": "code_execution_result", **_printed(printed), "content": []}}


def _printed(output: dict[str, Any]) -> dict[str, Any]:
    return {
        "stdout": output.get("stdout", ""),
        "stderr": output.get("stderr", ""),
        "return_code": output.get("return_code", 0),
    }


def _opaque(ctx: RenderContext, ids: int) -> str:
    """An opaque base64 value (``encrypted_content``, ``encrypted_index``): what the API
    sends for the client to send back, never to read."""
    return "Eq" + "".join(ctx.ids.new("", 42, B64) for _ in range(ids))


def _signature(ctx: RenderContext) -> str:
    """A thinking signature (the API rejects thinking blocks sent back without one):
    128 base64 characters, built from three ids since one id holds ~42 characters
    of entropy."""
    return _opaque(ctx, 3)


def server_tool_usage(parts: list[Part]) -> dict[str, int] | None:
    """``usage.server_tool_use``: the web searches made, when any server tool ran."""
    calls = [p for p in parts if isinstance(p, ServerToolCall)]
    if not calls:
        return None
    searches = sum(1 for c in calls if c.name == "web_search" and c.error is None)
    return {"web_search_requests": searches, "web_fetch_requests": 0}


def container(parts: list[Part], ctx: RenderContext) -> dict[str, Any] | None:
    """The code-execution container the message names, when code ran."""
    if not any(isinstance(p, ServerToolCall) and p.name == "code_execution" for p in parts):
        return None
    expires = datetime.fromtimestamp(ctx.created + _CONTAINER_LIFETIME, tz=timezone.utc)
    return {"id": ctx.ids.new("container_011C", 20), "expires_at": expires.isoformat()}


def opening(block: dict[str, Any]) -> dict[str, Any]:
    """What ``content_block_start`` announces for ``block`` before any delta."""
    kind = block["type"]
    if kind == "text":  # a cited block announces its (empty) citations first
        cited: dict[str, Any] = {"citations": []} if "citations" in block else {}
        return {**cited, "type": "text", "text": ""}
    if kind in ("tool_use", "server_tool_use"):
        return {**block, "input": {}}
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return block  # a server tool's result arrives whole


def deltas(block: dict[str, Any], ctx: RenderContext) -> Iterator[dict[str, Any]]:
    """The ``delta`` objects that grow ``opening(block)`` into ``block``, lazily."""
    kind = block["type"]
    if kind == "text":
        for citation in block.get("citations", ()):
            yield {"type": "citations_delta", "citation": citation}
        for t in iter_text(block["text"], ctx.text_chunk):
            yield {"type": "text_delta", "text": t}
    elif kind in ("tool_use", "server_tool_use"):
        # The API streams tool input with json.dumps-style ", " / ": " separators,
        # starting with an empty fragment.
        text = json.dumps(block["input"], ensure_ascii=False) if block["input"] else ""
        for p in ["", *split_json(text)]:
            yield {"type": "input_json_delta", "partial_json": p}
    elif kind == "thinking":
        for t in iter_text(block["thinking"], ctx.text_chunk):
            yield {"type": "thinking_delta", "thinking": t}
        yield {"type": "signature_delta", "signature": block["signature"]}


def delta_data(block: dict[str, Any], ctx: RenderContext, index: int) -> Iterator[str]:
    """The data of the ``content_block_delta`` events of block ``index``: :func:`deltas`
    as the API sends each (``{"type":"content_block_delta","index":...,"delta":...}``).
    The constant head is written once per block, and a text delta, most of a stream,
    around its encoded text: the bytes ``json_data`` writes for the object, without
    building it (bench/ W5)."""
    head = f'{{"type":"content_block_delta","index":{index},"delta":'
    if block["type"] != "text" or block.get("citations"):
        for delta in deltas(block, ctx):
            yield f"{head}{json_data(delta)}}}"
        return
    head = f'{head}{{"type":"text_delta","text":'
    for t in iter_text(block["text"], ctx.text_chunk):
        yield f"{head}{encode_basestring(t)}}}}}"
