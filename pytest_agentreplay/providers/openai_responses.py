"""The OpenAI Responses API wire format (``POST /v1/responses``).

The same format is spoken by OpenRouter (``/api/v1/responses``), Azure
(``/openai/v1/responses``) and DeepSeek (``/responses``), and by the
background-mode resume endpoint ``GET /v1/responses/{id}?stream=true``.

What the API sends, and what this codec reproduces:

* a non-streaming ``Response`` object whose ``output`` is a list of items
  (``reasoning``, ``message`` with ``output_text`` / ``refusal`` parts,
  ``function_call``), request options echoed back, ``usage`` with token details;
* a stream of ``event:`` + ``data:`` records, each data payload carrying its
  ``type`` and a ``sequence_number``: ``response.created``,
  ``response.in_progress``, then per item ``response.output_item.added`` /
  content or summary parts / deltas / ``*.done`` / ``response.output_item.done``,
  and finally ``response.completed`` (or ``response.incomplete``) holding the
  whole response again. OpenAI sends no ``[DONE]`` sentinel (OpenRouter does);
* HTTP errors as ``{"error": {"message", "type", "param", "code"}}`` with an
  ``x-request-id`` header, and in-stream failures as an ``event: error`` record.

Rendering lives in :mod:`._openai_responses_render`, folding a stream back into
the final body in :mod:`._openai_responses_fold`, request parsing in
:mod:`._openai_responses_request`; this module holds the codec, errors and the
way back from a body to a neutral reply.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from pytest_agentreplay.neutral import (
    Citation,
    Fault,
    Part,
    Provider,
    Reply,
    Request,
    ServerToolCall,
    StopReason,
    Text,
    Thinking,
    ToolCall,
    Usage,
)
from pytest_agentreplay.sse import SSEEvent

from .. import jsonparse
from ._openai_errors import OPENAI_VERSION, error_response, request_id
from ._openai_responses_fold import fold_events
from ._openai_responses_render import (
    iter_response_events,
    render_response_body,
    render_response_events,
)
from ._openai_responses_request import parse_responses_request
from .base import Codec, ErrorResponse, Folded, RenderContext, json_data
from .routes import handles

__all__ = ["OpenAIResponsesCodec"]

# Sub-resources of /responses that are not model calls (they end the path).
# Error types whose usual ``code`` is not the type itself (for in-stream errors).
_CODE_FOR_TYPE: dict[str, str | None] = {
    "requests": "rate_limit_exceeded",
    "tokens": "rate_limit_exceeded",
    "invalid_request_error": None,
    "server_error": None,
}


class OpenAIResponsesCodec(Codec):
    """Neutral replies ⇄ the OpenAI Responses API (JSON bodies and SSE streams)."""

    provider: ClassVar[Provider] = "openai_responses"
    server_tools: ClassVar[frozenset[str]] = frozenset({"web_search"})
    citations: ClassVar[bool] = True

    # -- endpoint ------------------------------------------------------------------

    def handles(self, method: str, path: str) -> bool:
        """``POST .../responses`` and ``GET .../responses/{id}`` (see :mod:`.routes`)."""
        return handles("openai_responses", method, path)

    def parse_request(self, body: Mapping[str, Any]) -> Request:
        """A ``responses.create`` body in neutral form (see
        :func:`._openai_responses_request.parse_responses_request`)."""
        return parse_responses_request(self, body)

    # -- rendering -----------------------------------------------------------------

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The ``Response`` object ``POST /v1/responses`` returns for ``reply``."""
        self.check_renders(reply)
        return render_response_body(reply, ctx)

    def render_events(self, reply: Reply, ctx: RenderContext) -> list[SSEEvent]:
        """The SSE records the API streams for ``reply``, ending in
        ``response.completed`` (``response.incomplete`` for ``stop="max_tokens"``)."""
        self.check_renders(reply)
        return render_response_events(reply, ctx)

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """:meth:`render_events`, lazily (a reply it cannot render is refused at once)."""
        self.check_renders(reply)
        return iter_response_events(reply, ctx)

    # -- folding -------------------------------------------------------------------

    def fold_detailed(self, events: Sequence[SSEEvent], *, strict: bool = False) -> Folded:
        """Accumulate a Responses stream (see :func:`._openai_responses_fold.fold_events`)."""
        return fold_events(self, events, strict=strict)

    # -- back to neutral -------------------------------------------------------------

    def to_reply(self, body: Mapping[str, Any]) -> Reply:
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
            raise self.error("a Response needs an 'output' list", field="output")
        parts: list[Part] = []
        refused = False
        for i, item in enumerate(output):
            if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
                raise self.error(
                    "each output item needs a string 'type'", field=f"output[{i}].type"
                )
            refused |= self._item_parts(item, f"output[{i}]", parts)
        return Reply(
            parts=parts,
            usage=_usage_from(body.get("usage")),
            stop=_stop_from(body, parts, refused),
            model=body.get("model") if isinstance(body.get("model"), str) else None,
            fault=_fault_from(body),
        )

    def _item_parts(self, item: Mapping[str, Any], where: str, parts: list[Part]) -> bool:
        """Append ``item``'s neutral parts; True when it holds a refusal."""
        kind = item["type"]
        if kind == "message":
            return self._message_parts(item, where, parts)
        if kind == "reasoning":
            parts.append(_thinking_from(item))
        elif kind == "web_search_call":
            parts.extend(_web_search_from(item))
        elif kind in ("function_call", "custom_tool_call"):
            for key in ("name", "call_id"):
                if not isinstance(item.get(key), str):
                    raise self.error(f"a {kind} needs a string {key!r}", field=f"{where}.{key}")
            args = (
                _args_from(item.get("arguments"))
                if kind == "function_call"
                else {"input": item.get("input", "")}
            )
            parts.append(ToolCall(name=item["name"], args=args, id=item["call_id"]))
        return False

    def _message_parts(self, item: Mapping[str, Any], where: str, parts: list[Part]) -> bool:
        content = item.get("content") or []
        if not isinstance(content, list):
            raise self.error("message content must be a list", field=f"{where}.content")
        refused = False
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, Mapping) else None
            key = {"output_text": "text", "refusal": "refusal"}.get(str(kind))
            if key is None:
                continue  # e.g. future part types: no neutral form
            if not isinstance(part.get(key), str):
                raise self.error(
                    f"a {kind} part needs a string {key!r}", field=f"{where}.content[{j}].{key}"
                )
            parts.append(Text(text=part[key], citations=_citations_from(part, part[key])))
            refused |= kind == "refusal"
        return refused

    # -- errors --------------------------------------------------------------------

    def error_response(self, fault: Fault, ctx: RenderContext) -> ErrorResponse:
        """OpenAI's error JSON (see :mod:`._openai_errors`)."""
        model = ctx.request.model if ctx.request is not None and ctx.request.model else ctx.model
        return error_response(fault, ctx, model)

    def error_event(self, fault: Fault, ctx: RenderContext) -> SSEEvent:
        """The ``event: error`` record the live API sends mid-stream.

        The live API nests the details under ``error`` (the API reference
        documents them flat, but the server does not send that shape); the
        nested object is also what makes the official SDK raise ``APIError``
        instead of yielding the event. ``sequence_number`` is the event's place
        in the stream (``after_events``).
        """
        error_type = fault.error_type or self.event_error_type
        message = fault.message or "An error occurred while processing your request."
        payload = {
            "type": "error",
            "sequence_number": fault.after_events or 0,
            "error": {
                "type": error_type,
                "code": _CODE_FOR_TYPE.get(error_type, error_type),
                "message": message,
                "param": None,
            },
        }
        return SSEEvent(data=json_data(payload), event="error")

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type plus OpenAI's ``x-request-id`` and ``openai-version``."""
        headers = super().response_headers(ctx, streaming=streaming)
        headers["x-request-id"] = request_id(ctx)
        headers["openai-version"] = OPENAI_VERSION
        return headers


# -- rendering helpers -----------------------------------------------------------------


# -- parsing helpers -------------------------------------------------------------------


def _args_from(arguments: Any) -> dict[str, Any]:
    """Tool arguments as a dict. The API passes the model's string through
    unchecked, so one that is not a JSON object becomes ``{}`` (the raw string
    stays in the body)."""
    if not isinstance(arguments, str):
        return {}
    try:
        parsed = jsonparse.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


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
