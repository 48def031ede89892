"""Cassettes for the ``agentreplay`` command tests, and two ways to run it.

Good cassettes are built with the provider codecs and written with
``cassette.save`` (so they are exactly what the recorder writes); broken ones are
written by hand, each with one defect.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cli import main
from pytest_agentreplay.neutral import Provider, Reply
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from pytest_agentreplay.redact import default_scrubber
from tests import corpus

CORPUS = corpus.CORPUS
CORPUS_FILES = corpus.files()
CORPUS_IDS = [f"{p.parent.name}/{p.name}" for p in CORPUS_FILES]

# A key-shaped value that no scrubbing rule can know about (it sits in a message).
FAKE_KEY = "sk-ant-api03-" + "Zq7" * 12
URLS: dict[Provider, str] = {
    "anthropic": "https://api.anthropic.com/v1/messages",
    "openai_chat": "https://api.openai.com/v1/chat/completions",
    "openai_responses": "https://api.openai.com/v1/responses",
}


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(*args: str | Path, cwd: Path | None = None) -> Result:
    """``python -m pytest_agentreplay.cli ARGS`` in a subprocess: the real entry point."""
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agentreplay.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> Result:
    """``main([...])`` in this process (fast: for the bulk of the corpus coverage)."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


# --- building cassettes ----------------------------------------------------------------


def stream_interaction(
    provider: Provider = "anthropic",
    reply: Reply | None = None,
    *,
    user: str = "What is the weather in Leeds?",
    timed: bool = True,
    headers: dict[str, str] | None = None,
) -> Interaction:
    """A streamed model call as the recorder stores it, events timed 50 ms apart."""
    reply = reply or Reply.text("It is sunny in Leeds.")
    codec = codec_for(provider)
    body = _request_body(provider, user)
    events = codec.render_events(reply, RenderContext(model=body["model"]))
    recorded = [
        RecordedEvent.from_sse(e, t=round(0.2 + 0.05 * n, 3) if timed else None)
        for n, e in enumerate(events)
    ]
    return Interaction(
        request=RecordedRequest(
            method="POST",
            url=URLS[provider],
            headers={"content-type": "application/json", **(headers or {})},
            json_body=body,
        ),
        response=RecordedResponse(
            status=200,
            headers={"content-type": codec.stream_content_type},
            events=recorded,
        ),
    )


def json_interaction(provider: Provider = "openai_chat", reply: Reply | None = None) -> Interaction:
    """A non-streamed model call."""
    reply = reply or Reply.tool_call("get_weather", {"city": "Leeds"}, id="call_1")
    codec = codec_for(provider)
    request_body = {**_request_body(provider, "Weather?"), "stream": False}
    body = codec.render_body(reply, RenderContext(model=request_body["model"]))
    return Interaction(
        request=RecordedRequest(method="POST", url=URLS[provider], json_body=request_body),
        response=RecordedResponse(
            status=200, headers={"content-type": "application/json"}, json_body=body
        ),
    )


def _request_body(provider: Provider, user: str) -> dict[str, Any]:
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    if provider == "anthropic":
        return {
            "model": "claude-test",
            "max_tokens": 256,
            "stream": True,
            "messages": [{"role": "user", "content": user}],
            "tools": tools,
        }
    if provider == "openai_chat":
        return {
            "model": "gpt-test",
            "stream": True,
            "messages": [{"role": "user", "content": user}],
        }
    return {"model": "gpt-test", "stream": True, "input": user}


def save(path: Path, *interactions: Interaction) -> Path:
    """Write a cassette the way the recorder does (scrubbed, checked, atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cassette.save(path, Cassette(interactions=list(interactions)), scrubber=default_scrubber())
    return path


def good(tmp_path: Path, name: str = "good.yaml") -> Path:
    """A clean cassette: an Anthropic stream, an OpenAI Chat JSON call, a Responses stream."""
    return save(
        tmp_path / name,
        stream_interaction("anthropic"),
        json_interaction("openai_chat"),
        stream_interaction("openai_responses", Reply.text("Hi.")),
    )


# --- broken files ----------------------------------------------------------------------

_ANTHROPIC_SSE = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":'
    '"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,'
    '"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    '"content_block":{"type":"text","text":""}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"text_delta","text":"Hi"}}\n\n'
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
    '"stop_sequence":null},"usage":{"output_tokens":2}}\n\n'
    'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def vcr_text(body: str, *, headers: str = "", content_type: str = "text/event-stream") -> str:
    """A stock vcrpy cassette (PyYAML style) holding one Anthropic call."""
    quoted = body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return (
        "interactions:\n- request:\n"
        '    body: \'{"model":"claude-test","max_tokens":64,"stream":true,'
        '"messages":[{"role":"user","content":"Hi"}]}\'\n'
        "    headers:\n      Content-Type:\n      - application/json\n"
        "    method: POST\n    uri: https://api.anthropic.com/v1/messages\n"
        "  response:\n"
        f'    body:\n      string: "{quoted}"\n'
        f"    headers:\n      Content-Type:\n      - {content_type}\n{headers}"
        "    status:\n      code: 200\n      message: OK\n"
        "version: 1\n"
    )


def broken(tmp_path: Path) -> dict[str, Path]:
    """One file per defect (in ``tmp_path``, created if needed)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    files = {
        "empty": "",
        "truncated": cassette.dumps(Cassette(interactions=[stream_interaction()]))[:900],
        "no-tail": _ANTHROPIC_SSE[:-1],
        "no-event-names": "".join(
            line + "\n" for line in _ANTHROPIC_SSE.splitlines() if not line.startswith("event:")
        ),
        "stale-length": vcr_text(_ANTHROPIC_SSE, headers="      Content-Length:\n      - '99'\n"),
        "stale-encoding": vcr_text(
            _ANTHROPIC_SSE, headers="      Content-Encoding:\n      - gzip\n"
        ),
        "wrong-type": vcr_text(_ANTHROPIC_SSE, content_type="text/plain"),
    }
    suffix = {"no-tail": ".sse.txt", "no-event-names": ".sse.txt"}
    out = {}
    for name, text in files.items():
        path = tmp_path / f"{name}{suffix.get(name, '.yaml')}"
        path.write_text(text, encoding="utf-8")
        out[name] = path
    bad_utf8 = tmp_path / "bad-utf8.yaml"
    bad_utf8.write_bytes(good(tmp_path, "tmp.yaml").read_bytes().replace(b"sunny", b"sun\xffy"))
    (tmp_path / "tmp.yaml").unlink()
    out["bad-utf8"] = bad_utf8
    out["secret"] = with_secret(tmp_path / "secret.yaml")
    return out


def with_secret(path: Path) -> Path:
    """A valid cassette with a key-shaped value in a user message (written by hand:
    ``cassette.save`` would refuse it)."""
    text = cassette.dumps(Cassette(interactions=[stream_interaction(user="my key is KEYHERE")]))
    path.write_text(text.replace("KEYHERE", FAKE_KEY), encoding="utf-8")
    return path
