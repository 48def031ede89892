"""Test-side reader of the real recorded provider interactions in ``tests/corpus/real``.

This deliberately does *not* use the plugin's own cassette loader: it is the
independent reference the plugin is checked against. It reads the four on-disk
formats described in ``tests/corpus/real/FORMATS.md`` into flat
:class:`CorpusInteraction` records holding the bytes a client would have read.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

CORPUS = Path(__file__).parent / "corpus" / "real"

_DIR_PROVIDER = {
    "anthropic": "anthropic",
    "openai_chat": "openai_chat",
    "openai_responses": "openai_responses",
}


@dataclass
class CorpusInteraction:
    file: Path
    index: int
    method: str
    url: str | None
    request_body: Any
    status: int
    headers: dict[str, str]
    body: bytes
    raw_only: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.file.parent.name}/{self.file.name}#{self.index}"

    @property
    def path(self) -> str:
        return urlsplit(self.url).path if self.url else ""

    @property
    def is_sse(self) -> bool:
        ctype = self.headers.get("content-type", "")
        if self.raw_only:
            return True
        return "text/event-stream" in ctype and self.body.lstrip()[:1] not in (b"{", b"[")

    @property
    def provider(self) -> str | None:
        """Which of our three codecs speaks this interaction's wire format, if any."""
        path = self.path
        if self.raw_only:
            return _DIR_PROVIDER.get(self.file.parent.name)
        if path.endswith("/v1/messages"):
            return "anthropic"
        if path.endswith("/chat/completions"):
            return "openai_chat"
        resumed = (
            self.method == "GET" and "/responses/" in path and "stream=true" in (self.url or "")
        )
        if path.endswith("/responses") or resumed:
            return "openai_responses"
        return None

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "" if self.url else ""


def _first(value: Any) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return str(value)


def _headers(raw: dict[str, Any] | None) -> dict[str, str]:
    return {str(k).lower(): _first(v) for k, v in (raw or {}).items()}


def _maybe_gunzip(body: bytes, headers: dict[str, str]) -> bytes:
    if headers.get("content-encoding", "").lower() == "gzip" and body[:2] == b"\x1f\x8b":
        return gzip.decompress(body)
    return body


def _vcr_body(side: dict[str, Any]) -> tuple[Any, bytes]:
    if "parsed_body" in side:
        parsed = side["parsed_body"]
        return parsed, json.dumps(parsed).encode()
    body = side.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    if body is None:
        return None, b""
    raw = body if isinstance(body, bytes) else str(body).encode("utf-8")
    return None, raw


def _request_json(side: dict[str, Any]) -> Any:
    parsed, raw = _vcr_body(side)
    if parsed is not None:
        return parsed
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw


def _load_vcr(path: Path) -> list[CorpusInteraction]:
    data = yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
    out = []
    for i, item in enumerate(data["interactions"]):
        req, resp = item["request"], item["response"]
        headers = _headers(resp.get("headers"))
        _, body = _vcr_body(resp)
        out.append(
            CorpusInteraction(
                file=path,
                index=i,
                method=req["method"],
                url=req["uri"],
                request_body=_request_json(req),
                status=int(resp["status"]["code"]),
                headers=headers,
                body=_maybe_gunzip(body, headers),
            )
        )
    return out


def _load_http_snapshot(path: Path) -> list[CorpusInteraction]:
    out = []
    for i, item in enumerate(json.loads(path.read_text("utf-8"))):
        req, resp = item["request"], item["response"]
        body = resp["body"]
        raw = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
        out.append(
            CorpusInteraction(
                file=path,
                index=i,
                method=req["method"],
                url=req["url"],
                request_body=req.get("body"),
                status=int(resp["status_code"]),
                headers=_headers(resp.get("headers")),
                body=raw,
            )
        )
    return out


def _load_raw(path: Path) -> list[CorpusInteraction]:
    return [
        CorpusInteraction(
            file=path,
            index=0,
            method="POST",
            url=None,
            request_body=None,
            status=200,
            headers={"content-type": "text/event-stream"},
            body=path.read_bytes(),
            raw_only=True,
        )
    ]


def load(path: Path) -> list[CorpusInteraction]:
    """All interactions stored in one corpus file."""
    name = path.name
    if name.endswith((".sse.txt", ".sse.bin")):
        return _load_raw(path)
    if name.endswith(".json"):
        return _load_http_snapshot(path)
    return _load_vcr(path)


def files() -> list[Path]:
    """Every corpus data file (the 55 recordings), sorted."""
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and not p.name.endswith(".md"))


def interactions() -> list[CorpusInteraction]:
    return [item for path in files() for item in load(path)]


def streams(provider: str | None = None) -> list[CorpusInteraction]:
    """Streaming interactions with status 200, optionally for one provider codec."""
    return [
        item
        for item in interactions()
        if item.is_sse and item.status == 200 and (provider is None or item.provider == provider)
    ]
