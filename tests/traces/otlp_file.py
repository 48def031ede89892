"""A file exporter writing OTLP JSON the way the collector's file exporter does.

The OpenTelemetry SDK has no such exporter of its own: spans and log records are
encoded by the real OTLP encoder (the protobuf messages the OTLP exporters send) and
written as protobuf JSON, one ``resourceSpans`` / ``resourceLogs`` document per line,
ids in hex as the OTLP JSON spec has them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


def _hex_ids(value: Any) -> Any:
    """protobuf JSON writes bytes as base64; OTLP JSON writes trace and span ids as hex."""
    if isinstance(value, dict):
        return {
            k: (_b64_to_hex(v) if k in ("traceId", "spanId", "parentSpanId") else _hex_ids(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def _b64_to_hex(value: str) -> str:
    import base64

    return base64.b64decode(value).hex()


class OTLPJsonFileSpanExporter(SpanExporter):
    """Appends each batch of spans to ``path`` as one OTLP JSON line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        document = _hex_ids(MessageToDict(encode_spans(spans)))
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(document) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


class OTLPJsonFileLogExporter(LogRecordExporter):
    """Appends each batch of log records to ``path`` as one OTLP JSON line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        document = _hex_ids(MessageToDict(encode_logs(batch)))
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(document) + "\n")
        return LogRecordExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True

    def shutdown(self) -> None:
        pass
