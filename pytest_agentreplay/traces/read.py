"""Trace files as spans: OTLP JSON, a plain JSON list of spans, or GenAI log events.

One reader for every form a team is likely to have at hand:

* OTLP JSON, as the collector's file exporter writes it: one ``resourceSpans``
  document per line (or a JSON list of documents, or one document);
* the same for logs (``resourceLogs``): the GenAI log-event form, one
  ``gen_ai.client.inference.operation.details`` record per model call;
* a plain JSON list of spans, or spans one after another as the SDK's
  ``ConsoleSpanExporter`` prints them (``span.to_json()``: attributes as a dict,
  ids under ``context``).

Documents are read one after another from the text, so JSON lines, a list and
pretty-printed objects back to back all work. Every error names the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import TraceImportError
from .spans import TraceSpan
from .values import any_value, attribute_map, hex_id, plain_attributes

__all__ = ["INFERENCE_EVENT", "read_trace", "spans_from_text"]

INFERENCE_EVENT = "gen_ai.client.inference.operation.details"
"""The name of the GenAI log event that holds one model call (the log-event form)."""

_DECODER = json.JSONDecoder()


def read_trace(path: str | Path) -> list[TraceSpan]:
    """Every span and GenAI inference event of the trace file at ``path``, in file order."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceImportError(f"{where}: cannot read the trace file: {exc}") from exc
    return spans_from_text(text, str(where))


def spans_from_text(text: str, name: str = "<trace>") -> list[TraceSpan]:
    """:func:`read_trace` for text already in memory; ``name`` is used in messages."""
    spans: list[TraceSpan] = []
    for line, document in _documents(text, name):
        spans.extend(_document(document, f"{name}:{line}"))
    if not spans and text.strip():
        raise TraceImportError(
            f"{name}: holds no spans: expected OTLP JSON (resourceSpans or resourceLogs "
            "documents, one per line, or a list of them) or a JSON list of spans"
        )
    return spans


def _documents(text: str, name: str) -> Iterator[tuple[int, Any]]:
    """Each JSON value in ``text``, with the line it starts on."""
    index = 0
    while True:
        while index < len(text) and text[index] in " \t\r\n":
            index += 1
        if index >= len(text):
            return
        line = text.count("\n", 0, index) + 1
        try:
            value, index = _DECODER.raw_decode(text, index)
        except ValueError as exc:
            raise TraceImportError(f"{name}:{line}: not JSON: {exc}") from None
        yield line, value


def _document(value: Any, where: str) -> Iterator[TraceSpan]:
    if isinstance(value, list):
        for item in value:
            yield from _document(item, where)
    elif isinstance(value, Mapping) and "resourceSpans" in value:
        yield from _otlp_spans(value["resourceSpans"], where)
    elif isinstance(value, Mapping) and "resourceLogs" in value:
        yield from _otlp_logs(value["resourceLogs"], where)
    elif isinstance(value, Mapping) and "name" in value and "attributes" in value:
        yield _plain_span(value, where)
    else:
        raise TraceImportError(
            f"{where}: neither an OTLP document (resourceSpans, resourceLogs) nor a span "
            "(an object with name and attributes)"
        )


def _scoped(resources: Any, scopes_key: str, items_key: str) -> Iterator[tuple[Any, Any]]:
    for resource in resources if isinstance(resources, list) else []:
        for scoped in resource.get(scopes_key, []) if isinstance(resource, Mapping) else []:
            scope = scoped.get("scope") or {}
            for item in scoped.get(items_key, []):
                yield scope, item


def _otlp_spans(resources: Any, where: str) -> Iterator[TraceSpan]:
    for scope, span in _scoped(resources, "scopeSpans", "spans"):
        status = span.get("status") or {}
        failed = status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR")
        yield TraceSpan(
            name=str(span.get("name", "")),
            attributes=attribute_map(span.get("attributes")),
            where=where,
            scope=str(scope.get("name", "")),
            scope_version=str(scope.get("version", "")),
            trace_id=hex_id(span.get("traceId")),
            span_id=hex_id(span.get("spanId")),
            start=int(span.get("startTimeUnixNano") or 0),
            end=int(span.get("endTimeUnixNano") or 0),
            failed=failed,
            error=(status.get("message") or None) if failed else None,
            events=[
                (str(e.get("name", "")), attribute_map(e.get("attributes")))
                for e in span.get("events", [])
            ],
        )


def _otlp_logs(resources: Any, where: str) -> Iterator[TraceSpan]:
    for scope, record in _scoped(resources, "scopeLogs", "logRecords"):
        attributes = attribute_map(record.get("attributes"))
        name = record.get("eventName") or attributes.get("event.name")
        if name != INFERENCE_EVENT:
            continue  # other log records say nothing about a model call
        body = any_value(record.get("body"))
        if isinstance(body, Mapping):  # some versions put the messages in the body
            attributes = {**{str(k): v for k, v in body.items()}, **attributes}
        time = int(record.get("timeUnixNano") or record.get("observedTimeUnixNano") or 0)
        yield TraceSpan(
            name=INFERENCE_EVENT,
            attributes=attributes,
            where=where,
            scope=str(scope.get("name", "")),
            scope_version=str(scope.get("version", "")),
            trace_id=hex_id(record.get("traceId")),
            span_id=hex_id(record.get("spanId")),
            start=time,
            end=time,
            failed="error.type" in attributes,
            event=True,
        )


def _plain_span(span: Mapping[str, Any], where: str) -> TraceSpan:
    context = span.get("context") or {}
    status = span.get("status") or {}
    failed = str(status.get("status_code", status.get("code", ""))).upper() in (
        "ERROR",
        "2",
        "STATUS_CODE_ERROR",
    )
    scope = span.get("instrumentation_scope") or span.get("scope") or {}
    return TraceSpan(
        name=str(span.get("name", "")),
        attributes=plain_attributes(span.get("attributes")),
        where=where,
        scope=str(scope.get("name", "")) if isinstance(scope, Mapping) else "",
        scope_version=str(scope.get("version", "")) if isinstance(scope, Mapping) else "",
        trace_id=hex_id(context.get("trace_id") or span.get("traceId")),
        span_id=hex_id(context.get("span_id") or span.get("spanId")),
        start=_time(span.get("start_time", span.get("startTimeUnixNano"))),
        end=_time(span.get("end_time", span.get("endTimeUnixNano"))),
        failed=failed,
        error=(status.get("description") or status.get("message") or None) if failed else None,
        events=[
            (str(e.get("name", "")), plain_attributes(e.get("attributes")))
            for e in span.get("events", [])
            if isinstance(e, Mapping)
        ],
    )


def _time(value: Any) -> int:
    """Nanoseconds since the epoch from OTLP's number or the SDK's ISO text (0: unknown)."""
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return 0
        return int(moment.timestamp() * 1_000_000_000)
    return 0
