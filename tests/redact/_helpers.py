"""Helpers for the redaction tests: building interactions, dumping them, and turning
the real corpus (read by the independent ``tests/corpus.py`` reader) into Interactions.

``dump`` is a stand-in for ``cassette.dumps`` (owned by another module): plain
PyYAML with no line wrapping, which is what the backstop sees on every write.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.sse import decode
from tests import corpus

RAW_URL = "https://corpus.invalid/raw-sse-fixture"


def dump(cassette: Cassette | Interaction) -> str:
    """A cassette (or one interaction) as YAML text, as a write path would serialise it."""
    if isinstance(cassette, Interaction):
        cassette = Cassette(version=1, interactions=[cassette])
    data = cassette.to_data()
    return yaml.dump(
        data, Dumper=yaml.CSafeDumper, width=10**9, allow_unicode=True, sort_keys=False
    )


def request(
    url: str = "https://api.example.com/v1/messages",
    *,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    json_body: Any = None,
    body: str | None = None,
) -> RecordedRequest:
    return RecordedRequest(method=method, url=url, headers=headers or {}, json=json_body, body=body)


def response(
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    json_body: Any = None,
    body: str | None = None,
    events: list[str] | None = None,
) -> RecordedResponse:
    return RecordedResponse(
        status=status,
        headers=headers or {},
        json=json_body,
        body=body,
        events=None if events is None else [RecordedEvent(data=d) for d in events],
    )


def interaction(
    req: RecordedRequest | None = None, resp: RecordedResponse | None = None
) -> Interaction:
    return Interaction(request=req or request(), response=resp or response())


# -- the real corpus ------------------------------------------------------------------------


@cache
def _request_headers(path: Path) -> list[dict[str, str]]:
    """Request headers per interaction, which ``tests/corpus.py`` does not expose."""
    if path.name.endswith((".sse.txt", ".sse.bin")):
        return [{}]
    if path.suffix == ".json":
        items = json.loads(path.read_text("utf-8"))
        return [{k: str(v) for k, v in it["request"].get("headers", {}).items()} for it in items]
    data = yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
    return [
        {str(k): ", ".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in hdrs.items()}
        for hdrs in ((it["request"].get("headers") or {}) for it in data["interactions"])
    ]


def _text_or_b64(raw: bytes) -> dict[str, str]:
    try:
        return {"body": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_b64": base64.b64encode(raw).decode("ascii")}


def _request_body(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, bytes):
        return _text_or_b64(value) if value else {}
    if isinstance(value, str):
        return {"body": value}
    return {"json": value}


def _response_body(item: corpus.CorpusInteraction) -> dict[str, Any]:
    if item.is_sse:
        events = decode(item.body, keep_comments=True).events
        return {
            "events": [
                RecordedEvent(
                    data=e.data,
                    event=e.event,
                    id=e.id or None,
                    retry=e.retry,
                    comments=list(e.comments) or None,
                )
                for e in events
            ]
        }
    try:
        return {"json": json.loads(item.body)} if item.body.strip() else {}
    except ValueError:
        return _text_or_b64(item.body)


def to_interaction(item: corpus.CorpusInteraction) -> Interaction:
    """One corpus record as an Interaction (SSE split into events, JSON parsed)."""
    req_headers = _request_headers(item.file)[item.index]
    req = RecordedRequest(
        method=item.method,
        url=item.url or RAW_URL,
        headers=req_headers,
        **_request_body(item.request_body),
    )
    resp = RecordedResponse(status=item.status, headers=dict(item.headers), **_response_body(item))
    return Interaction(request=req, response=resp)


def corpus_cassette(path: Path) -> Cassette:
    return Cassette(version=1, interactions=[to_interaction(i) for i in corpus.load(path)])
