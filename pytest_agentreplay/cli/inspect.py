"""``agentreplay inspect``: a timeline per interaction of a cassette, as text or JSON."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from ..cassettes.cassette import RecordedEvent, RecordedRequest
from ..neutral import Reply, Request, Text, Thinking, ToolCall, ToolResult, Usage
from ..redact.scrubber import default_scrubber
from .analysis import View, error_summary, event_label, read_source, selected, timings
from .analysis import type_counts as _type_counts
from .common import EXIT_OK, Output, reading
from .options import FORMATS, add_interaction, exit_codes
from .origins import origin_lines

__all__ = ["configure", "run"]

_SHOWN = 200  # characters of a message or text shown in the timeline
_DATA_SHOWN = 100  # characters of event data shown by --events
_PARTS_SHOWN = 12  # parts of a final message shown


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay inspect``."""
    parser.description = (
        "Show what a cassette holds, one block per interaction: the request (provider, "
        "model, last user message, tools), the status and content type, whether it "
        "streamed, its events counted by type, the time to the first and the last event "
        "(when recorded), how the stream ended, and the final message folded from the "
        "stream (text, thinking, tool calls with their arguments, stop reason, usage). "
        + FORMATS
        + " Key-shaped secrets in the output are masked."
    )
    parser.epilog = exit_codes("the cassette was shown", "(not used by this command)")
    parser.add_argument("path", metavar="PATH", help="the cassette file")
    add_interaction(parser, "show only interaction N")
    parser.add_argument(
        "--events", action="store_true", help="also list every event: time, type, data"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document instead of text (full texts, nothing cut)",
    )


def _cut(text: str, width: int = _SHOWN) -> str:
    """``text`` quoted on one line (JSON escapes), cut to ``width`` characters."""
    if len(text) <= width:
        return json.dumps(text, ensure_ascii=False)
    return json.dumps(text[: width - 1] + "…", ensure_ascii=False) + f" ({len(text):,} chars)"


def _cut_raw(text: str, width: int = _SHOWN) -> str:
    """``text`` unquoted on one line (line breaks shown as ``\\n``), cut to ``width``."""
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= width else f"{flat[: width - 1]}… ({len(text):,} chars)"


def _cut_json(value: Any, width: int = _SHOWN) -> str:
    """``value`` as compact JSON, cut to ``width`` characters."""
    return _cut_raw(json.dumps(value, ensure_ascii=False, separators=(",", ":")), width)


def _runs(names: list[str]) -> str:
    """``a, b, b, b`` → ``a, b x3`` (with a multiplication sign)."""
    out: list[list[Any]] = []
    for name in names:
        if out and out[-1][0] == name:
            out[-1][1] += 1
        else:
            out.append([name, 1])
    return ", ".join(name if n == 1 else f"{name} \u00d7{n}" for name, n in out)


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


# --- the request -----------------------------------------------------------------------


def _request_line(item: View) -> str:
    request = item.request
    if request is None:
        bits = [item.provider or "not a model call", _body_kind(item.interaction.request)]
        rpc = item.interaction.request.json_body
        if isinstance(rpc, dict) and isinstance(rpc.get("method"), str):
            bits.append(f"JSON-RPC {rpc['method']}")
        if item.request_problem:
            bits.append(f"request body not understood ({item.request_problem})")
        return " · ".join(bits)
    bits = [item.provider or "", f"model {request.model or '?'}"]
    bits.append("stream" if request.stream else "no stream")
    bits.append(_plural(len(request.messages), "message"))
    if request.tools:
        bits.append("tools: " + ", ".join(t.name for t in request.tools))
    return " · ".join(bits)


def _body_kind(side: RecordedRequest | Any) -> str:
    if side.json_body is not None:
        return "JSON body"
    if side.body is not None:
        return f"text body ({len(side.body):,} chars)"
    if side.body_b64 is not None:
        return f"binary body ({len(side.content()):,} bytes)"
    return "no body"


def _last_input(request: Request | None) -> tuple[str, str] | None:
    """What the model was last told: the last user text, or the tool results sent back."""
    if request is None:
        return None
    for message in reversed(request.messages):
        if message.role not in ("user", "tool"):
            continue
        results = [p for p in message.parts if isinstance(p, ToolResult)]
        if message.text or not results:
            return "user", _cut(message.text)
        shown = "; ".join(f"{r.tool_call_id}: {r.content}" for r in results)
        return "tool", _cut(shown)
    return None


# --- the response ----------------------------------------------------------------------


def _response_line(item: View) -> str:
    response = item.response
    origin = item.interaction.origin or {}
    if origin.get("no_response") is True:  # an imported call that failed before any answer
        return f"none: {response.end} before the status line (imported)"
    bits = [str(response.status), item.content_type or "no content-type"]
    if item.streaming:
        bits.append(_plural(len(response.events or ()), "event"))
    else:
        bits.append(_body_kind(response))
    return " · ".join(bits)


def _usage_text(usage: Usage | None) -> str | None:
    if usage is None:
        return None
    fields = usage.model_dump(exclude_none=True)
    names = {
        "input_tokens": "input",
        "output_tokens": "output",
        "cache_creation_input_tokens": "cache write",
        "cache_read_input_tokens": "cache read",
        "reasoning_tokens": "reasoning",
    }
    return "usage: " + ", ".join(f"{names.get(k, k)} {v:,}" for k, v in fields.items())


def _part_lines(reply: Reply) -> list[str]:
    out: list[str] = []
    for part in reply.parts:
        if len(out) == _PARTS_SHOWN:
            out.append(f"  … and {len(reply.parts) - _PARTS_SHOWN} more parts (see --json)")
            break
        if isinstance(part, Text):
            out.append(f"  text       {_cut(part.text)}")
        elif isinstance(part, Thinking):
            out.append(f"  thinking   {_cut(part.text)}")
        elif isinstance(part, ToolCall):
            ident = f"  (id {part.id})" if part.id else ""
            out.append(f"  tool call  {part.name} {_cut_json(part.args)}{ident}")
    return out


def _blocks(body: Any) -> list[str]:
    """Block / item types of a final body (Anthropic ``content``, Responses ``output``)."""
    if not isinstance(body, dict):
        return []
    for key in ("content", "output"):
        items = body.get(key)
        if isinstance(items, list) and all(isinstance(i, dict) for i in items):
            return [str(i.get("type", "?")) for i in items]
    return []


def _final_lines(item: View) -> list[str]:
    reply = item.reply
    if reply is None:
        return []
    unfinished = item.unfinished
    head = [f"stop none ({unfinished})" if unfinished else f"stop {reply.stop_reason}"]
    usage = _usage_text(reply.usage)
    if usage:
        head.append(usage)
    blocks = _blocks(item.final_body)
    if blocks:
        head.append("blocks: " + _runs(blocks))
    return ["final     " + " · ".join(head), *_part_lines(reply)]


def _stream_lines(item: View) -> list[str]:
    events = item.response.events or []
    counts = _type_counts(events)
    out = ["events    " + (", ".join(f"{k} {v}" for k, v in counts.items()) or "none")]
    timing = timings(events)
    if timing is not None:
        out.append(f"timing    first event {timing[0]:.3f} s · last event {timing[1]:.3f} s")
    out.append(f"ended     {item.ending()}")
    if item.fold_problem:
        out.append(f"fold      failed: {item.fold_problem}")
    return out


def _event_lines(events: Sequence[RecordedEvent], tail: str | None) -> list[str]:
    width = len(str(len(events)))
    timed = any(event.t is not None for event in events)
    label_width = max((len(event_label(e)) for e in events), default=0)
    out = []
    for n, event in enumerate(events):
        when = (f"+{event.t:.3f}s" if event.t is not None else "-").rjust(10) if timed else ""
        extra = "".join(
            f" {name}={value}"
            for name, value in (("id", event.id), ("retry", event.retry))
            if value is not None
        )
        if event.comments:
            extra += f" comments={len(event.comments)}"
        data = _cut_raw(event.data, _DATA_SHOWN)
        label = event_label(event).ljust(label_width)
        out.append(f"  {n:>{width}}{when}  {label}{extra}  {data}")
    if tail is not None:
        out.append(f"  {'':>{width}}  (tail, never dispatched)  {_cut_raw(tail, _DATA_SHOWN)}")
    return out


def _timeline(item: View, events: bool) -> list[str]:
    request = item.interaction.request
    lines = [f"#{item.index} {request.method} {request.url}", "request   " + _request_line(item)]
    last = _last_input(item.request)
    if last is not None:
        lines.append(f"{last[0]:<9} {last[1]}")
    lines.append("response  " + _response_line(item))
    lines.extend(origin_lines(item.interaction.origin))
    error = error_summary(item.response.json_body) if item.response.status >= 400 else None
    if error:
        lines.append(f"error     {_cut_raw(error)}")
    if (item.interaction.origin or {}).get("no_response") is True:
        return [lines[0], *("   " + line for line in lines[1:])]
    if item.streaming:
        lines.extend(_stream_lines(item))
    lines.extend(_final_lines(item))
    if events and item.streaming:
        lines.append("events:")
        lines.extend(_event_lines(item.response.events or [], item.response.tail))
    return [lines[0], *("   " + line for line in lines[1:])]


# --- --json ----------------------------------------------------------------------------


def _reply_json(reply: Reply | None, unfinished: str | None) -> dict[str, Any] | None:
    if reply is None:
        return None
    parts = reply.model_dump(mode="json", exclude_none=True)["parts"]
    return {
        "stop": None if unfinished else reply.stop_reason,
        "partial": unfinished is not None,
        "text": reply.text_content,
        "tool_calls": [{"name": c.name, "args": c.args, "id": c.id} for c in reply.tool_calls],
        "parts": parts,
        "usage": reply.usage.model_dump(exclude_none=True) if reply.usage else None,
    }


def _event_json(event: RecordedEvent) -> dict[str, Any]:
    return {"type": event_label(event), **event.to_data()}


def _as_json(item: View, events: bool) -> dict[str, Any]:
    request, response = item.interaction.request, item.response
    stream = response.events or []
    timing = timings(stream)
    out: dict[str, Any] = {
        "index": item.index,
        "method": request.method,
        "url": request.url,
        "provider": item.provider,
        "model": item.request.model if item.request else None,
        "last_user_message": item.request.last_user_text if item.request else None,
        "tools": [t.name for t in item.request.tools] if item.request else [],
        "stream_requested": item.request.stream if item.request else None,
        "status": response.status,
        "content_type": item.content_type or None,
        "streaming": item.streaming,
        "event_count": len(stream) if item.streaming else None,
        "events_by_type": _type_counts(stream) if item.streaming else None,
        "first_event_s": timing[0] if timing else None,
        "last_event_s": timing[1] if timing else None,
        "end": item.ending(),
        "error": error_summary(response.json_body) if response.status >= 400 else None,
        "fold_problem": item.fold_problem,
        "final": _reply_json(item.reply, item.unfinished),
        "origin": item.interaction.origin,
    }
    if events and item.streaming:
        out["events"] = [_event_json(e) for e in stream]
    return out


# --- the commands ----------------------------------------------------------------------


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay inspect PATH``."""
    output.mask = default_scrubber().mask
    with reading(args.path):
        return _inspect(args, output)


def _inspect(args: argparse.Namespace, output: Output) -> int:
    source = read_source(args.path)
    shown = selected(source, args.interaction)
    if args.json:
        document = {
            "path": str(source.path),
            "format": source.format,
            "interactions": [_as_json(item, args.events) for item in shown],
        }
        output.print(json.dumps(document, indent=2, ensure_ascii=False))
        return EXIT_OK
    count = len(source.cassette.interactions)
    output.print(f"{source.path}: {source.format} cassette, {_plural(count, 'interaction')}")
    for item in shown:
        output.print()
        output.lines(_timeline(item, args.events))
    return EXIT_OK
