#!/usr/bin/env python3
"""peers.py -- side-by-side performance baseline of HTTP record/replay tools for Python.

Written as the peer baseline (../shared/bench/peers.py) that ``pytest_agentreplay``
(a record/replay harness for LLM agents with SSE streaming playback) is measured
against; here it also runs the plugin itself (``AgentReplayContender``, the
``*-anthropic`` W4 variants of issue 10, and W5). It measures every tool on the same
synthetic, deterministic workloads:

  W1  cassette load + replay cost vs number of interactions N (vcrpy, httpx client)
  W2  large Anthropic Messages SSE stream replay (raw httpx and the ``anthropic`` SDK)
  W3  OpenAI Chat Completions SSE stream replay (raw httpx and the ``openai`` SDK)
  W4  per-test overhead inside pytest (pytest-recording vs respx vs pytest-httpx vs
      a plain ``httpx.MockTransport``), 200 generated tests, run as subprocesses that
      load only the tool's own pytest plugin (plugin autoloading off)
  W5  fake-model throughput: scripted calls/s and hypothesis fault-plan examples/s
      (bench/fake_throughput.py; the plugin's FakeModel vs a MockTransport replaying the same bytes)
  W6  (extra) time to first event while *recording* a paced stream

Run (from the repository root, with ``pip install -e '.[bench]'``)::

    python bench/peers.py --quick   # smoke run, ~45 s -> bench/results/peers-quick.json
    python bench/peers.py           # full run, < 10 min -> bench/results/peers.json

See bench/README.md for the workloads, the metrics and how to add a contender.
The place to plug in the new plugin is ``AgentReplayContender`` below
(search for ">>> HOOK").

Design notes
------------
* Everything is generated here from fixed seeds; nothing touches the network.
* A 2-core, noisy machine: every cell is repeated (>= 5 times in a full run unless
  a cell is explicitly capped, see W1) and min + median are reported.  Contenders
  are interleaved round-robin inside each repetition (the order rotates every
  round), so ratios between contenders are taken from the same minutes of the
  same process.  Every worker process also measures the "floor" and the plain
  MockTransport as anchors, so ratios never mix processes.
* Two HTTP stacks: ``httpx`` (0.28) and its fork ``httpx2``.  The SDK versions
  this was written against (anthropic 2.x, openai 3.x) require ``httpx2`` and
  reject ``httpx.Client``.  vcrpy patches both stacks; respx and pytest-httpx only know
  ``httpx``, so with the SDKs they only work after ``httpx2.alias_httpx()``
  (which must run before anything imports httpx).  Such cells run in a separate
  worker process ("alias world") and are compared to that process' own anchors.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------
# World bootstrap.  MUST stay above every other import: in the "alias" world
# `import httpx` has to resolve to httpx2 for respx / pytest-httpx to see SDK traffic.
# ---------------------------------------------------------------------------------
import os
import sys

WORLD = os.environ.get("PEERBENCH_WORLD", "native")
if WORLD == "alias":
    import httpx2 as _httpx2_for_alias

    _httpx2_for_alias.alias_httpx()

import argparse
import contextlib
import dataclasses
import gc
import hashlib
import importlib
import importlib.metadata
import importlib.util
import itertools
import json
import math
import platform
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "peers.json"
DEFAULT_OUT_QUICK = HERE / "results" / "peers-quick.json"
SCHEMA = "peerbench/1"

now = time.perf_counter

# ---------------------------------------------------------------------------------
# Run configurations
# ---------------------------------------------------------------------------------
FULL = {
    "mode": "full",
    "reps": 5,  # repetitions per cell (min/median reported)
    "min_cell_s": 0.25,  # keep adding rounds to tiny cells until this much time ...
    "max_reps": 25,  # ... but never more than this many rounds
    "w1_ns": [10, 100, 1000, 5000],
    "w1_cell_budget_s": 45.0,  # reps are cut so a W1 cell's predicted time fits this ...
    "w1_cap_s": 20.0,  # ... and a cell whose single run won't fit runs once, capped here
    "w2_ks": [1000, 10000, 100000],
    "w2_helper_ks": [10000],  # K values also consumed with anthropic's messages.stream() helper
    "w3_ks": [10000],
    "w4_tests": 200,
    "w4_reps": 4,
    "w4_warmup": True,  # one untimed `pytest --collect-only` per variant first
    "w5_calls": 80,  # scripted calls per W5 cell
    "w5_examples": 80,  # hypothesis examples per W5 fault-plan cell
    "w5_reps": 5,
    "w6_events": 100,
    "w6_pace_s": 0.002,
}
QUICK = {  # a smoke run: same code paths, small sizes, few repeats
    "mode": "quick",
    "reps": 3,
    "min_cell_s": 0.05,
    "max_reps": 6,
    "w1_ns": [10, 100, 1000],
    "w1_cell_budget_s": 2.0,
    "w1_cap_s": 0.5,  # vcrpy at N=1000 is extrapolated from what it replays in this time
    "w2_ks": [1000, 4000],
    "w2_helper_ks": [],
    "w3_ks": [1000],
    "w4_tests": 30,
    "w4_startup_reps": 1,  # the SDK startup project alone takes 2.5 s a run
    "w4_reps": 1,
    "w4_warmup": False,
    "w5_calls": 10,
    "w5_examples": 10,
    "w5_reps": 1,
    "w6_events": 30,
    "w6_pace_s": 0.002,
}

# Requests go to this host; nothing ever resolves it (everything is intercepted).
FAKE_BASE = "http://api.fake-llm.test"
ANTHROPIC_URL = FAKE_BASE + "/v1/messages"
OPENAI_BASE = FAKE_BASE + "/v1"
OPENAI_URL = OPENAI_BASE + "/chat/completions"
ANTHROPIC_MODEL = "claude-bench"  # a neutral name: real names trigger SDK deprecation warnings
OPENAI_MODEL = "gpt-bench"
API_KEY = "sk-bench-not-a-real-key"
FILTER_HEADERS = ["x-api-key", "authorization"]  # what a real LLM test suite filters out
VCR_DEFAULT_MATCH_ON = ("method", "scheme", "host", "port", "path", "query")

# ---------------------------------------------------------------------------------
# Synthetic, deterministic data
# ---------------------------------------------------------------------------------
VOCAB = (
    "the of and to in is you that it he was for on are as with his they at be this have from or "
    "one had by word but not what all were we when your can said there use an each which she do how "
    "their if will up other about out many then them these so some her would make like him into time "
    "has look two more write go see number no way could people my than first water been call who its "
    "now find long down day did get come made may part agent tool result stream token model replay "
    "record cassette request response plan step search read file patch test fix build run check"
).split()


def sentence(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n_words))


def jdump(obj: Any) -> bytes:
    """Compact JSON, the way the SDKs put it on the wire."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


@dataclasses.dataclass
class Interaction:
    request_body: bytes
    response_body: bytes
    response_headers: list[tuple[str, str]]


@dataclasses.dataclass
class ScalingFixture:
    """N small JSON interactions: POST /v1/messages, all bodies distinct."""

    n: int
    seed: int
    url: str
    request_headers: dict[str, str]
    interactions: list[Interaction]

    def digest(self) -> str:
        h = hashlib.sha256()
        for it in self.interactions:
            h.update(it.request_body)
            h.update(it.response_body)
        return h.hexdigest()[:16]


def _json_response_headers(rng: random.Random, i: int) -> list[tuple[str, str]]:
    return [
        ("date", "Sun, 29 Nov 2026 12:00:00 GMT"),
        ("content-type", "application/json"),
        ("request-id", f"req_{rng.getrandbits(64):016x}"),
        ("anthropic-organization-id", "00000000-0000-4000-8000-000000000000"),
        ("anthropic-ratelimit-requests-limit", "4000"),
        ("anthropic-ratelimit-requests-remaining", str(3999 - i % 4000)),
        ("anthropic-ratelimit-requests-reset", "2026-11-29T12:00:01Z"),
        ("anthropic-ratelimit-input-tokens-limit", "400000"),
        ("anthropic-ratelimit-input-tokens-remaining", str(400000 - 25 * (i % 1000))),
        ("anthropic-ratelimit-output-tokens-limit", "80000"),
        ("anthropic-ratelimit-output-tokens-remaining", str(80000 - 60 * (i % 1000))),
        ("server", "cloudflare"),
        ("cf-ray", f"{rng.getrandbits(64):016x}-SJC"),
        ("x-robots-tag", "none"),
    ]


def make_scaling_fixture(n: int, seed: int = 1001) -> ScalingFixture:
    rng = random.Random(seed * 1_000_003 + n)
    interactions = []
    for i in range(n):
        prompt = f"[turn {i}] " + sentence(rng, 40)
        req = {
            "model": ANTHROPIC_MODEL,
            "max_tokens": 1024,
            "system": "You are a coding agent under benchmark.",
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
        }
        text = sentence(rng, 60)
        resp = {
            "id": f"msg_{seed:04d}{i:08d}",
            "type": "message",
            "role": "assistant",
            "model": ANTHROPIC_MODEL,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 40 + i % 7, "output_tokens": 60 + i % 11},
        }
        interactions.append(Interaction(jdump(req), jdump(resp), _json_response_headers(rng, i)))
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": API_KEY,
    }
    return ScalingFixture(n, seed, ANTHROPIC_URL, headers, interactions)


@dataclasses.dataclass
class StreamFixture:
    """One streaming interaction; ``events`` holds one SSE event (wire bytes) per item."""

    kind: str  # "anthropic" | "openai"
    k: int  # number of text deltas
    url: str
    request_body: bytes
    request_headers: dict[str, str]
    response_headers: list[tuple[str, str]]
    events: list[bytes]
    body: bytes
    data_lines: int  # expected number of `data:` lines on the wire
    sdk_items: int  # expected number of objects the SDK iterator yields
    text: str  # expected concatenation of all text deltas

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()[:16]


_SSE_HEADERS = [
    ("date", "Sun, 29 Nov 2026 12:00:00 GMT"),
    ("content-type", "text/event-stream; charset=utf-8"),
    ("cache-control", "no-cache"),
    ("request-id", "req_0123456789abcdef"),
    ("server", "cloudflare"),
    ("cf-ray", "0123456789abcdef-SJC"),
]


def _sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else jdump(data).decode()
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _deltas(rng: random.Random, k: int) -> list[str]:
    # token-ish pieces: mostly one word, sometimes two, always with a trailing space
    return [
        (rng.choice(VOCAB) + (" " + rng.choice(VOCAB) if rng.random() < 0.2 else "")) + " "
        for _ in range(k)
    ]


def make_anthropic_stream(k: int, seed: int = 2002) -> StreamFixture:
    rng = random.Random(seed * 1_000_003 + k)
    deltas = _deltas(rng, k)
    ev = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_stream_{k}",
                    "type": "message",
                    "role": "assistant",
                    "model": ANTHROPIC_MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 1234,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
        ),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _sse("ping", {"type": "ping"}),
    ]
    ev += [
        _sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}},
        )
        for d in deltas
    ]
    ev += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": k},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    req = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 64000,
        "stream": True,
        "messages": [{"role": "user", "content": "Write a very long story."}],
    }
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "anthropic-version": "2023-06-01",
        "x-api-key": API_KEY,
    }
    return StreamFixture(
        "anthropic",
        k,
        ANTHROPIC_URL,
        jdump(req),
        headers,
        list(_SSE_HEADERS),
        ev,
        b"".join(ev),
        data_lines=len(ev),
        sdk_items=len(ev) - 1,
        text="".join(deltas),
    )


def make_openai_stream(k: int, seed: int = 3003) -> StreamFixture:
    rng = random.Random(seed * 1_000_003 + k)
    deltas = _deltas(rng, k)
    base = {
        "id": f"chatcmpl-bench{k}",
        "object": "chat.completion.chunk",
        "created": 1796040000,
        "model": OPENAI_MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_bench",
    }

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return _sse(
            None,
            {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
                "usage": None,
            },
        )

    ev = [chunk({"role": "assistant", "content": "", "refusal": None})]
    ev += [chunk({"content": d}) for d in deltas]
    ev += [
        chunk({}, "stop"),
        _sse(
            None,
            {
                **base,
                "choices": [],
                "usage": {"prompt_tokens": 1234, "completion_tokens": k, "total_tokens": 1234 + k},
            },
        ),
        _sse(None, "[DONE]"),
    ]
    req = {
        "model": OPENAI_MODEL,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "Write a very long story."}],
    }
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "authorization": "Bearer " + API_KEY,
    }
    return StreamFixture(
        "openai",
        k,
        OPENAI_URL,
        jdump(req),
        headers,
        list(_SSE_HEADERS),
        ev,
        b"".join(ev),
        data_lines=len(ev),
        sdk_items=len(ev) - 1,
        text="".join(deltas),
    )


def make_stream_fixture(kind: str, k: int) -> StreamFixture:
    return make_anthropic_stream(k) if kind == "anthropic" else make_openai_stream(k)


def text_from_payloads(kind: str, payloads: list[str]) -> str:
    """Rebuild the streamed text from raw `data:` payloads (used only to verify)."""
    out = []
    for p in payloads:
        if p == "[DONE]":
            continue
        obj = json.loads(p)
        if kind == "anthropic":
            if obj.get("type") == "content_block_delta":
                out.append(obj["delta"]["text"])
        elif obj.get("choices") and obj["choices"][0]["delta"].get("content"):
            out.append(obj["choices"][0]["delta"]["content"])
    return "".join(out)


# ---------------------------------------------------------------------------------
# Small statistics helpers
# ---------------------------------------------------------------------------------
def summarize(xs: list[float]) -> dict[str, Any] | None:
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {
        "min": min(xs),
        "median": statistics.median(xs),
        "max": max(xs),
        "n": len(xs),
        "samples": [round(x, 9) for x in xs],
    }


def med(d: dict | None) -> float | None:
    return None if d is None else d["median"]


def fit_quadratic_through_origin(points: list[tuple[int, float]]) -> tuple[float, float] | None:
    """Least squares T(i) = a*i + b*i^2 over cumulative checkpoints (i, T).

    c(i) = a + 2*b*i is then the marginal cost of request number i."""
    if len(points) < 3:
        return None
    s11 = sum(i * i for i, _ in points)
    s12 = sum(i**3 for i, _ in points)
    s22 = sum(i**4 for i, _ in points)
    y1 = sum(i * t for i, t in points)
    y2 = sum(i * i * t for i, t in points)
    det = s11 * s22 - s12 * s12
    if det == 0:
        return None
    a = (y1 * s22 - y2 * s12) / det
    b = (s11 * y2 - s12 * y1) / det
    return a, b


def rotate(items: list, k: int) -> list:
    if not items:
        return items
    k %= len(items)
    return items[k:] + items[:k]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def collect_garbage(cfg: dict, *, always_full: bool = False) -> None:
    """Before each sample: a full collection (full runs, and W1 whose per-request cost
    depends on what the collector has to walk), or the young generations only (quick
    stream cells: a full one costs ~40 ms once the SDKs are imported)."""
    gc.collect(2 if always_full or cfg["mode"] == "full" else 1)


def calibration_probe(rounds: int = 7) -> dict[str, Any]:
    """A fixed CPU-bound loop; its spread says how noisy this process' minutes were."""
    xs = []
    for _ in range(rounds):
        t = now()
        acc = 0
        for i in range(200_000):
            acc += i * i % 7
        xs.append(now() - t)
    s = summarize(xs)
    s["spread_max_over_min"] = s["max"] / s["min"]
    return s


# ---------------------------------------------------------------------------------
# Contenders
# ---------------------------------------------------------------------------------
# A contender serves the same recorded data through its own mechanism.  `hx` is the
# HTTP stack module (httpx or httpx2) the consumer uses.  Every *_session() method is
# a context manager yielding an `hx.Client` whose requests are answered by the
# contender; entering it is timed as "load"/"setup" (e.g. parsing a cassette), the
# requests made with the client are timed separately.  Sessions build their client
# with _timed_client(), which books the client's construction into stats["client_ctor_s"]
# (a default hx.Client() builds an SSL context: ~20 ms, more than most cassette loads;
# it is reported apart from "load").  Unimplemented methods raise NotImplementedError
# and the cell is reported as n/a.
#
# Workloads a contender can take part in:
#   "scaling"  W1: scaling_prepare() + scaling_session()
#   "stream"   W2/W3: stream_prepare() + stream_session()
#   "record"   W6: record_session()
#   "pytest"   W4: pytest_project()


class Contender:
    name = "?"
    description = ""
    workloads: frozenset[str] = frozenset()
    anchor = False  # measured in every worker process as a cross-process reference
    in_quick = True  # part of a --quick run unless named with --contenders
    in_full = True  # part of a full run unless named with --contenders
    # W4 rows that are read for a ratio far from any target (tools 3-10x slower than the
    # floor, explanatory references) get fewer timed rounds: they are the slowest rows,
    # and the full run must stay under 10 minutes
    w4_rounds: int | None = None
    # W4 runs every project with pytest's plugin autoloading off, loading only the pytest
    # plugins (entry-point names) of the tool under test: the environment holds every
    # peer's plugin, and the others' startup and autouse fixtures are no part of a tool's
    # cost (they took 0.4 s of a 0.6 s pytest startup and 0.2 ms of each test's setup)
    w4_plugins: tuple[str, ...] = ()
    w4_autoload = False  # the "mock+autoload" reference: every installed plugin loaded
    # W4: whether the tests build a default client (what "beyond ctor" subtracts)
    builds_default_client = True

    def unavailable_reason(self) -> str | None:
        """None if usable, else a short reason shown in the report."""
        return None

    def world(self, stack: str) -> str | None:
        """Which process world can serve `stack` ("httpx"/"httpx2"): "native", "alias" or None."""
        return "native"

    # -- W1 --------------------------------------------------------------------
    def scaling_prepare(self, workdir: Path, fx: ScalingFixture, hx) -> Any:
        """Untimed.  Write whatever the contender loads at test time (e.g. a cassette)."""
        raise NotImplementedError

    def scaling_session(self, prepared: Any, fx: ScalingFixture, hx, stats: dict | None = None):
        """Timed enter = load.  Yield an hx.Client replaying fx.interactions in order."""
        raise NotImplementedError

    # -- W2/W3 -----------------------------------------------------------------
    def stream_prepare(self, workdir: Path, fx: StreamFixture, hx) -> Any:
        return None

    def stream_session(self, prepared: Any, fx: StreamFixture, hx, stats: dict | None = None):
        """Timed enter = setup.  Yield an hx.Client whose POST fx.url returns fx.body as SSE."""
        raise NotImplementedError

    # -- W6 --------------------------------------------------------------------
    def record_session(self, workdir: Path, fx: StreamFixture, hx, upstream):
        """Yield an hx.Client that records while forwarding to transport `upstream`."""
        raise NotImplementedError

    # -- W4 --------------------------------------------------------------------
    def pytest_project(self, projdir: Path, fx: ScalingFixture) -> list[str]:
        """Write a pytest project with fx.n tests (one replayed POST each); return extra pytest args."""
        raise NotImplementedError


def _timed_client(hx, stats: dict | None, **kwargs):
    """hx.Client(**kwargs), its construction time booked into stats["client_ctor_s"]."""
    t = now()
    client = hx.Client(**kwargs)
    if stats is not None:
        stats["client_ctor_s"] = now() - t
    return client


def _write_pytest_common(projdir: Path, fx: ScalingFixture) -> str:
    """Shared header of every generated W4 test module (same data block for all contenders)."""
    projdir.mkdir(parents=True, exist_ok=True)
    (projdir / "pytest.ini").write_text("[pytest]\n")
    reqs = [it.request_body for it in fx.interactions]
    resps = [it.response_body for it in fx.interactions]
    ids = [json.loads(it.response_body)["id"] for it in fx.interactions]
    return (
        "# generated by bench/peers.py (W4) -- do not edit\n"
        "import httpx\nimport pytest\n\n"
        f"URL = {fx.url!r}\n"
        f"HEADERS = {fx.request_headers!r}\n"
        f"RESP_HEADERS = {fx.interactions[0].response_headers!r}\n"
        f"REQ = {reqs!r}\n"
        f"RESP = {resps!r}\n"
        f"IDS = {ids!r}\n\n"
    )


class VcrpyContender(Contender):
    """vcrpy: YAML cassettes, record_mode='none' at replay (pytest-recording in W4)."""

    w4_rounds = 2
    w4_plugins = ("recording",)

    def __init__(self, name: str = "vcrpy", body_matching: bool = False):
        self.name = name
        self.body_matching = body_matching
        self.match_on = VCR_DEFAULT_MATCH_ON + (("body",) if body_matching else ())
        if body_matching:
            self.description = "vcrpy, match_on += body (order-independent prompt matching)"
            self.workloads = frozenset({"scaling"})
        else:
            self.description = "vcrpy, default match_on (method, scheme, host, port, path, query)"
            self.workloads = frozenset({"scaling", "stream", "record", "pytest"})

    def _vcr(self, record_mode: str):
        import vcr

        return vcr.VCR(
            record_mode=record_mode, match_on=self.match_on, filter_headers=FILTER_HEADERS
        )

    # Cassettes are recorded by vcrpy itself (through an hx.MockTransport upstream,
    # which vcrpy patches like any other transport), so their format is exactly
    # what a user would have on disk.
    def scaling_prepare(self, workdir, fx, hx):
        path = workdir / f"vcrpy-scaling-n{fx.n}-{fx.digest()}-{hx.__name__}.yaml"
        if not path.exists():  # shared by the default / +body variants
            lookup = {it.request_body: it for it in fx.interactions}

            def upstream(request):
                it = lookup[request.content]
                return hx.Response(200, headers=it.response_headers, content=it.response_body)

            with (
                self._vcr("all").use_cassette(str(path)),
                hx.Client(transport=hx.MockTransport(upstream)) as c,
            ):
                for it in fx.interactions:
                    c.post(fx.url, content=it.request_body, headers=fx.request_headers)
        return path

    @contextlib.contextmanager
    def scaling_session(self, prepared, fx, hx, stats=None):
        # the client is built first so that its SSL-context cost is not booked as cassette
        # load; vcrpy patches the transport *class*, so an existing client is intercepted too
        with _timed_client(hx, stats) as client, self._vcr("none").use_cassette(str(prepared)):
            yield client

    def stream_prepare(self, workdir, fx, hx):
        path = workdir / f"vcrpy-{fx.kind}-k{fx.k}-{fx.digest}-{hx.__name__}.yaml"
        if not path.exists():

            def upstream(request):
                return hx.Response(200, headers=fx.response_headers, content=iter(fx.events))

            with (
                self._vcr("all").use_cassette(str(path)),
                hx.Client(transport=hx.MockTransport(upstream)) as c,
                c.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r,
            ):
                for _ in r.iter_bytes():
                    pass
        return path

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        with _timed_client(hx, stats) as client, self._vcr("none").use_cassette(str(prepared)):
            yield client

    @contextlib.contextmanager
    def record_session(self, workdir, fx, hx, upstream):
        path = workdir / f"vcrpy-record-{fx.kind}-{time.monotonic_ns()}.yaml"
        with self._vcr("all").use_cassette(str(path)), hx.Client(transport=upstream) as client:
            yield client
        path.unlink(missing_ok=True)

    def pytest_project(self, projdir, fx):
        import httpx

        head = _write_pytest_common(projdir, fx)
        (projdir / "conftest.py").write_text(
            "import pytest\n\n\n@pytest.fixture(scope='module')\ndef vcr_config():\n"
            f"    return {{'filter_headers': {FILTER_HEADERS!r}}}\n"
        )
        tests = []
        for i in range(fx.n):
            tests.append(
                f"@pytest.mark.vcr\ndef test_{i:04d}():\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        # Record one cassette per test where pytest-recording looks for it.
        cdir = projdir / "cassettes" / "test_bench"
        cdir.mkdir(parents=True, exist_ok=True)
        for i, it in enumerate(fx.interactions):

            def upstream(request, it=it):
                return httpx.Response(200, headers=it.response_headers, content=it.response_body)

            with (
                self._vcr("all").use_cassette(str(cdir / f"test_{i:04d}.yaml")),
                httpx.Client(transport=httpx.MockTransport(upstream)) as c,
            ):
                c.post(fx.url, content=it.request_body, headers=fx.request_headers)
        return ["--record-mode=none"]


class RespxContender(Contender):
    name = "respx"
    description = "respx route returning the whole body (respx.mock / respx_mock fixture)"
    workloads = frozenset({"stream", "pytest"})
    w4_plugins = ("respx",)
    w4_rounds = 2

    def world(self, stack):
        # respx patches httpx/httpcore only; the SDKs' httpx2 is reachable via alias_httpx()
        return "native" if stack == "httpx" else "alias"

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        import respx

        with _timed_client(hx, stats) as client, respx.mock(assert_all_called=False) as router:
            router.post(fx.url).mock(
                return_value=hx.Response(200, headers=fx.response_headers, content=fx.body)
            )
            yield client

    def pytest_project(self, projdir, fx):
        head = _write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}(respx_mock):\n"
                f"    respx_mock.post(URL).mock(return_value=httpx.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class PytestHttpxContender(Contender):
    name = "pytest-httpx"
    description = "pytest-httpx add_response(stream=IteratorStream(one chunk per event))"
    workloads = frozenset({"stream", "pytest"})
    w4_plugins = ("pytest_httpx",)
    w4_rounds = 2

    def world(self, stack):
        return "native" if stack == "httpx" else "alias"

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        # Outside pytest we do exactly what the `httpx_mock` fixture does: build an
        # HTTPXMock and patch HTTPTransport.handle_request.  HTTPXMock's constructor
        # and options class are private API of pytest-httpx (checked: 0.36.x).
        from pytest_httpx import HTTPXMock, IteratorStream
        from pytest_httpx._options import _HTTPXMockOptions

        mock = HTTPXMock(_HTTPXMockOptions(assert_all_responses_were_requested=False))
        mock.add_response(
            method="POST", url=fx.url, headers=fx.response_headers, stream=IteratorStream(fx.events)
        )
        real = hx.HTTPTransport.handle_request

        def handle_request(transport, request):
            return mock._handle_request(transport, request)

        client = _timed_client(hx, stats)
        hx.HTTPTransport.handle_request = handle_request
        try:
            with client:
                yield client
        finally:
            hx.HTTPTransport.handle_request = real
            mock.reset()

    def pytest_project(self, projdir, fx):
        head = _write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}(httpx_mock):\n"
                f"    httpx_mock.add_response(method='POST', url=URL, headers=RESP_HEADERS, content=RESP[{i}])\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class MockTransportContender(Contender):
    """A hand-rolled replay: plain hx.MockTransport.  The reference every tool is compared to."""

    name = "mocktransport"
    description = (
        "plain MockTransport (W1: JSON file + dict lookup by body; W2/3: one chunk per event)"
    )
    workloads = frozenset({"scaling", "stream", "pytest"})
    anchor = True
    builds_default_client = False

    def scaling_prepare(self, workdir, fx, hx):
        path = workdir / f"mock-scaling-n{fx.n}-{fx.digest()}.json"
        if not path.exists():
            path.write_text(
                json.dumps(
                    {
                        "interactions": [
                            {
                                "request": it.request_body.decode(),
                                "headers": it.response_headers,
                                "body": it.response_body.decode(),
                            }
                            for it in fx.interactions
                        ]
                    }
                )
            )
        return path

    @contextlib.contextmanager
    def scaling_session(self, prepared, fx, hx, stats=None):
        data = json.loads(Path(prepared).read_text())
        table = {
            d["request"].encode(): ([tuple(h) for h in d["headers"]], d["body"].encode())
            for d in data["interactions"]
        }

        def handler(request):
            headers, body = table[request.content]
            return hx.Response(200, headers=headers, content=body)

        with _timed_client(hx, stats, transport=hx.MockTransport(handler)) as client:
            yield client

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        def handler(request):
            return hx.Response(200, headers=fx.response_headers, content=iter(fx.events))

        with _timed_client(hx, stats, transport=hx.MockTransport(handler)) as client:
            yield client

    def pytest_project(self, projdir, fx):
        head = _write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}():\n"
                f"    transport = httpx.MockTransport(lambda request: httpx.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    with httpx.Client(transport=transport) as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class MockTransportPluginRef(MockTransportContender):
    """W4 only: the floor's project with pytest-agentreplay loaded, and not used.

    What merely having the plugin installed costs a test that does not use it (its
    import at startup, its hooks)."""

    name = "mock+agentreplay-loaded"
    description = "W4 reference: the MockTransport project with pytest-agentreplay loaded, unused"
    workloads = frozenset({"pytest"})
    anchor = False
    in_quick = False  # a reference row: full runs only, to keep --quick well under a minute
    w4_plugins = ("agentreplay",)


class MockTransportAutoloadRef(MockTransportContender):
    """W4 only: the floor's project with every installed pytest plugin loaded.

    How W4 measured until 2026-11-30: the bench environment holds every peer's plugin
    (pytest-recording's autouse fixtures, respx, pytest-httpx, hypothesis, syrupy,
    anyio, xdist), and each project paid for all of them. They lengthen every run
    alike, so they flattered every ratio to the floor."""

    name = "mock+autoload"
    description = "W4 reference: the MockTransport project with every installed plugin loaded"
    workloads = frozenset({"pytest"})
    anchor = False
    in_quick = False  # a reference row: full runs only, to keep --quick well under a minute
    w4_autoload = True


class MockTransportCtorRef(Contender):
    """W4 only: plain MockTransport tests that *also* build a default httpx.Client() each.

    Transport-patching tools (vcrpy, respx, pytest-httpx) need the test to use a client
    with the default transport, whose construction (SSL context, CA bundle) costs far
    more than the mocking itself.  This variant isolates that cost."""

    name = "mock+client-ctor"
    description = "W4 reference: MockTransport + one default httpx.Client() built per test"
    workloads = frozenset({"pytest"})
    in_quick = False  # a reference row: full runs only, to keep --quick well under a minute
    w4_rounds = 2

    def pytest_project(self, projdir, fx):
        head = _write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}():\n"
                f"    httpx.Client().close()  # what a default-transport client costs\n"
                f"    transport = httpx.MockTransport(lambda request: httpx.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    with httpx.Client(transport=transport) as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class PassThroughContender(Contender):
    """W6 only: no recorder at all, the client talks to the paced upstream directly."""

    name = "no-recorder"
    description = "direct client -> upstream, nothing recorded (W6 baseline)"
    workloads = frozenset({"record"})
    anchor = True

    @contextlib.contextmanager
    def record_session(self, workdir, fx, hx, upstream):
        with hx.Client(transport=upstream) as client:
            yield client


# =================================================================================
# >>> HOOK: the new contender "agentreplay" (pytest_agentreplay) goes here. <<<
#
# Fill in the methods with the plugin's public API; each has the same contract as
# in VcrpyContender above (see the Contender base class).  Methods left raising
# NotImplementedError make their cells "n/a", so this can be wired up piecemeal.
# Once importable, it runs automatically in every workload it lists; pick it alone
# with  --contenders agentreplay,mocktransport.
# =================================================================================
class AgentReplayContender(Contender):
    """pytest_agentreplay, driven as its fixtures drive it (see bench/_agentreplay_support.py).

    Cassettes are recorded *through the plugin* (its record mode, teeing recorder,
    scrubber and writer), so the files replayed are exactly what a user has on disk.
    W1/W2/W3: in process, a ``CassetteSession`` (what the ``agentreplay`` fixture
    opens) in record mode ``none`` under ``intercepting(Router(...))``; entering it is
    the timed load. The client is built *inside* that scope, as in a test, so its
    construction is lazy (no SSL context: issue 10) -- see the ``ctor`` column.
    W4: real pytest runs with ``@pytest.mark.agentreplay`` and default cassette paths.
    W6: records the paced upstream through the plugin's recorder.
    """

    name = "agentreplay"
    description = (
        "pytest_agentreplay: CassetteSession replay (W1-W3), @pytest.mark.agentreplay (W4)"
    )
    workloads = frozenset({"scaling", "stream", "record", "pytest"})
    w4_plugins = ("agentreplay",)

    def unavailable_reason(self):
        try:
            importlib.import_module("pytest_agentreplay")
        except ImportError as e:
            return f"pytest_agentreplay cannot be imported ({type(e).__name__}: {e})"
        return None

    def world(self, stack):
        return "native"  # the plugin patches httpx and httpx2 transports itself

    def scaling_prepare(self, workdir, fx, hx):
        import _agentreplay_support as ar

        path = workdir / f"agentreplay-scaling-n{fx.n}-{fx.digest()}-{hx.__name__}.yaml"
        if not path.exists():
            lookup = {it.request_body: it for it in fx.interactions}

            def upstream(request):
                it = lookup[request.content]
                return hx.Response(200, headers=it.response_headers, content=it.response_body)

            ar.record_exchanges(
                hx,
                path,
                upstream,
                [
                    lambda c, it=it: c.post(
                        fx.url, content=it.request_body, headers=fx.request_headers
                    )
                    for it in fx.interactions
                ],
            )
        return path

    @contextlib.contextmanager
    def scaling_session(self, prepared, fx, hx, stats=None):
        import _agentreplay_support as ar

        with ar.replaying(prepared), _timed_client(hx, stats) as client:
            yield client

    def stream_prepare(self, workdir, fx, hx):
        import _agentreplay_support as ar

        path = workdir / f"agentreplay-{fx.kind}-k{fx.k}-{fx.digest}-{hx.__name__}.yaml"
        if not path.exists():

            def upstream(request):
                return hx.Response(200, headers=fx.response_headers, content=iter(fx.events))

            def send(client):
                with client.stream(
                    "POST", fx.url, content=fx.request_body, headers=fx.request_headers
                ) as r:
                    for _ in r.iter_bytes():
                        pass

            ar.record_exchanges(hx, path, upstream, [send])
        return path

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        import _agentreplay_support as ar

        with ar.replaying(prepared), _timed_client(hx, stats) as client:
            yield client

    @contextlib.contextmanager
    def record_session(self, workdir, fx, hx, upstream):
        import _agentreplay_support as ar

        path = workdir / f"agentreplay-record-{fx.kind}-{time.monotonic_ns()}.yaml"
        with (
            ar.recording(path),
            hx.Client(transport=ar.upstream_transport(hx, upstream)) as client,
        ):
            yield client
        path.unlink(missing_ok=True)

    def pytest_project(self, projdir, fx):
        import _agentreplay_support as ar
        import httpx

        head = _write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"@pytest.mark.agentreplay\ndef test_{i:04d}():\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        # Record one cassette per test where the plugin looks for it by default.
        cdir = projdir / "cassettes" / "test_bench"
        for i, it in enumerate(fx.interactions):

            def upstream(request, it=it):
                return httpx.Response(200, headers=it.response_headers, content=it.response_body)

            ar.record_exchanges(
                httpx,
                cdir / f"test_{i:04d}.yaml",
                upstream,
                [
                    lambda c, it=it: c.post(
                        fx.url, content=it.request_body, headers=fx.request_headers
                    )
                ],
            )
        return []


# ---------------------------------------------------------------------------------
# W4 with the anthropic SDK (issue 10): every test builds its own SDK client, as
# people write tests.  A default anthropic.Anthropic() builds an httpx2 client with
# an SSL context (~20 ms); the "mock-anthropic" reference injects a MockTransport
# http_client instead (no SSL context), "mock+ctor-anthropic" also builds a default
# client per test, to show what that costs.
# ---------------------------------------------------------------------------------
SDK_SUFFIX = "-anthropic"


# messages.create() keyword arguments of request i (this SDK version takes no `temperature`)
_SDK_KEYS = ("model", "max_tokens", "system", "messages")


def _sdk_args(body: bytes) -> dict:
    return {k: v for k, v in json.loads(body).items() if k in _SDK_KEYS}


def _sdk_head(projdir: Path, fx: ScalingFixture) -> str:
    return (
        _write_pytest_common(projdir, fx) + "import json\n\nimport anthropic\nimport httpx2\n\n"
        f"BASE = {FAKE_BASE!r}\nKEY = {API_KEY!r}\n"
        f"ARGS = [{{k: v for k, v in json.loads(r).items() if k in {_SDK_KEYS!r}}} for r in REQ]\n\n"
    )


def _sdk_call(i: int, client: str = "client") -> str:
    return (
        f"    message = {client}.messages.create(**ARGS[{i}])\n    assert message.id == IDS[{i}]\n"
    )


def _sdk_upstream(fx: ScalingFixture, hx):
    lookup = {it.request_body: it for it in fx.interactions}
    by_text = {json.loads(k)["messages"][0]["content"]: v for k, v in lookup.items()}

    def upstream(request):
        it = by_text[json.loads(request.content)["messages"][0]["content"]]
        return hx.Response(200, headers=it.response_headers, content=it.response_body)

    return upstream


def _sdk_record(fx: ScalingFixture, http_client, i: int) -> None:
    import anthropic

    client = anthropic.Anthropic(
        api_key=API_KEY, base_url=FAKE_BASE, max_retries=0, http_client=http_client
    )
    client.messages.create(**_sdk_args(fx.interactions[i].request_body))


class MockSdkRef(Contender):
    """W4 reference: anthropic SDK tests on a bare httpx2.MockTransport (no SSL context)."""

    name = "mock" + SDK_SUFFIX
    description = "W4 reference: anthropic.Anthropic(http_client=httpx2.Client(transport=MockTransport)) per test"
    workloads = frozenset({"pytest"})
    builds_default_client = False
    ctor = False

    def pytest_project(self, projdir, fx):
        head = _sdk_head(projdir, fx)
        tests = []
        for i in range(fx.n):
            extra = (
                "    anthropic.Anthropic(api_key=KEY, base_url=BASE).close()  # a default client\n"
                if self.ctor
                else ""
            )
            tests.append(
                f"def test_{i:04d}():\n{extra}"
                f"    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    client = anthropic.Anthropic(api_key=KEY, base_url=BASE, max_retries=0,\n"
                f"                                 http_client=httpx2.Client(transport=transport))\n"
                + _sdk_call(i)
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class MockSdkCtorRef(MockSdkRef):
    name = "mock+ctor" + SDK_SUFFIX
    # Explanatory (what a default SDK client costs per test, i.e. the plugin's lazy
    # transport switched off); run it by name: it would push a full run past 10 minutes.
    in_quick = in_full = False
    description = "W4 reference: mock-anthropic + one default anthropic.Anthropic() built per test"
    ctor = True
    builds_default_client = True


class VcrpySdkContender(Contender):
    """pytest-recording with the anthropic SDK: a default anthropic.Anthropic() per test."""

    name = "vcrpy" + SDK_SUFFIX
    description = "pytest-recording (@pytest.mark.vcr), anthropic.Anthropic() built per test"
    workloads = frozenset({"pytest"})
    w4_plugins = ("recording",)
    w4_rounds = 2
    in_quick = False  # full runs only, to keep --quick under a minute

    def pytest_project(self, projdir, fx):
        import httpx2
        import vcr

        head = _sdk_head(projdir, fx)
        (projdir / "conftest.py").write_text(
            "import pytest\n\n\n@pytest.fixture(scope='module')\ndef vcr_config():\n"
            f"    return {{'filter_headers': {FILTER_HEADERS!r}}}\n"
        )
        tests = [
            f"@pytest.mark.vcr\ndef test_{i:04d}():\n"
            f"    client = anthropic.Anthropic(api_key=KEY, base_url=BASE, max_retries=0)\n"
            + _sdk_call(i)
            for i in range(fx.n)
        ]
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        cdir = projdir / "cassettes" / "test_bench"
        cdir.mkdir(parents=True, exist_ok=True)
        upstream = _sdk_upstream(fx, httpx2)
        for i in range(fx.n):
            with vcr.VCR(record_mode="all", filter_headers=FILTER_HEADERS).use_cassette(
                str(cdir / f"test_{i:04d}.yaml")
            ):
                _sdk_record(fx, httpx2.Client(transport=httpx2.MockTransport(upstream)), i)
        return ["--record-mode=none"]


class AgentReplaySdkContender(Contender):
    """@pytest.mark.agentreplay with the anthropic SDK: a default anthropic.Anthropic() per test."""

    name = "agentreplay" + SDK_SUFFIX
    description = "@pytest.mark.agentreplay, anthropic.Anthropic() built per test (issue 10)"
    workloads = frozenset({"pytest"})
    w4_plugins = ("agentreplay",)

    def unavailable_reason(self):
        return AgentReplayContender().unavailable_reason()

    def pytest_project(self, projdir, fx):
        import _agentreplay_support as ar
        import httpx2

        head = _sdk_head(projdir, fx)
        tests = [
            f"@pytest.mark.agentreplay\ndef test_{i:04d}():\n"
            f"    client = anthropic.Anthropic(api_key=KEY, base_url=BASE, max_retries=0)\n"
            + _sdk_call(i)
            for i in range(fx.n)
        ]
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        cdir = projdir / "cassettes" / "test_bench"
        upstream = _sdk_upstream(fx, httpx2)
        for i in range(fx.n):
            with ar.recording(cdir / f"test_{i:04d}.yaml"):
                _sdk_record(
                    fx,
                    httpx2.Client(
                        transport=ar.upstream_transport(httpx2, httpx2.MockTransport(upstream))
                    ),
                    i,
                )
        return []


def all_contenders() -> list[Contender]:
    return [
        VcrpyContender("vcrpy"),
        VcrpyContender("vcrpy+body", body_matching=True),
        RespxContender(),
        PytestHttpxContender(),
        MockTransportContender(),
        MockTransportPluginRef(),
        MockTransportAutoloadRef(),
        MockTransportCtorRef(),
        PassThroughContender(),
        AgentReplayContender(),  # >>> HOOK: registered here
        MockSdkRef(),
        MockSdkCtorRef(),
        VcrpySdkContender(),
        AgentReplaySdkContender(),
    ]


def contender_by_name(name: str) -> Contender:
    for c in all_contenders():
        if c.name == name:
            return c
    raise KeyError(name)


# ---------------------------------------------------------------------------------
# Stream consumers (W2, W3, W6).  Each returns a sample dict; `collect` (a list) is
# only passed for the untimed verification run.
# ---------------------------------------------------------------------------------
def consume_raw_bytes(client, fx: StreamFixture, hx, collect=None) -> dict:
    first = None
    chunks = nbytes = 0
    first_len = 0
    t0 = now()
    with client.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r:
        for chunk in r.iter_bytes():
            if first is None:
                first = now()
                first_len = len(chunk)
            chunks += 1
            nbytes += len(chunk)
            if collect is not None:
                collect.append(chunk)
    t1 = now()
    return {
        "total": t1 - t0,
        "ttfe": first - t0,
        "items": chunks,
        "bytes": nbytes,
        "chunks": chunks,
        "first_chunk_bytes": first_len,
    }


def consume_raw_lines(client, fx: StreamFixture, hx, collect=None) -> dict:
    first = None
    n = 0
    t0 = now()
    with client.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                if first is None:
                    first = now()
                n += 1
                if collect is not None:
                    collect.append(line[5:].strip())
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_httpx_sse(client, fx: StreamFixture, hx, collect=None) -> dict:
    from httpx_sse import EventSource

    first = None
    n = 0
    t0 = now()
    with client.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r:
        for sse in EventSource(r).iter_sse():
            if first is None:
                first = now()
            n += 1
            if collect is not None:
                collect.append(sse.data)
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_anthropic_sdk(client, fx: StreamFixture, hx, collect=None) -> dict:
    import anthropic

    sdk = anthropic.Anthropic(
        api_key=API_KEY, base_url=FAKE_BASE, max_retries=0, http_client=client
    )
    first = None
    n = 0
    t0 = now()
    stream = sdk.messages.create(
        model=ANTHROPIC_MODEL,
        max_tokens=64000,
        stream=True,
        messages=[{"role": "user", "content": "Write a very long story."}],
    )
    for event in stream:
        if first is None:
            first = now()
        n += 1
        if collect is not None and event.type == "content_block_delta":
            collect.append(event.delta.text)
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_anthropic_helper(client, fx: StreamFixture, hx, collect=None) -> dict:
    """anthropic's high-level messages.stream() helper (accumulates a snapshot per event)."""
    import anthropic

    sdk = anthropic.Anthropic(
        api_key=API_KEY, base_url=FAKE_BASE, max_retries=0, http_client=client
    )
    first = None
    n = 0
    t0 = now()
    with sdk.messages.stream(
        model=ANTHROPIC_MODEL,
        max_tokens=64000,
        messages=[{"role": "user", "content": "Write a very long story."}],
    ) as stream:
        for text in stream.text_stream:
            if first is None:
                first = now()
            n += 1
            if collect is not None:
                collect.append(text)
        stream.get_final_message()
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_openai_sdk(client, fx: StreamFixture, hx, collect=None) -> dict:
    import openai

    sdk = openai.OpenAI(api_key=API_KEY, base_url=OPENAI_BASE, max_retries=0, http_client=client)
    first = None
    n = 0
    t0 = now()
    stream = sdk.chat.completions.create(
        model=OPENAI_MODEL,
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "Write a very long story."}],
    )
    for chunk in stream:
        if first is None:
            first = now()
        n += 1
        if collect is not None and chunk.choices and chunk.choices[0].delta.content:
            collect.append(chunk.choices[0].delta.content)
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


# consumer name -> (function, stack, what `items` counts, expected items, how to verify)
CONSUMERS: dict[str, dict[str, Any]] = {
    "raw-bytes": {"fn": consume_raw_bytes, "stack": "httpx", "unit": "chunks", "floor": None},
    "raw-lines": {
        "fn": consume_raw_lines,
        "stack": "httpx",
        "unit": "data lines",
        "floor": "floor:lines",
    },
    "httpx-sse": {
        "fn": consume_httpx_sse,
        "stack": "httpx",
        "unit": "SSE events",
        "floor": "floor:lines",
        "needs": "httpx_sse",  # in the bench extra only: without it the consumer is skipped
    },
    "anthropic-sdk": {
        "fn": consume_anthropic_sdk,
        "stack": "httpx2",
        "unit": "SDK events",
        "floor": "floor:lines+json",
    },
    "anthropic-helper": {
        "fn": consume_anthropic_helper,
        "stack": "httpx2",
        "unit": "text deltas",
        "floor": "floor:lines+json",
    },
    "openai-sdk": {
        "fn": consume_openai_sdk,
        "stack": "httpx2",
        "unit": "SDK chunks",
        "floor": "floor:lines+json",
    },
}


def expected_items(consumer: str, fx: StreamFixture) -> int | None:
    if consumer == "raw-bytes":
        return None  # depends on the contender's chunking
    if consumer in ("raw-lines", "httpx-sse"):
        return fx.data_lines
    if consumer == "anthropic-helper":
        return fx.k
    return fx.sdk_items


def verify(consumer: str, fx: StreamFixture, collected: list) -> str | None:
    """None if the consumer saw exactly the recorded stream, else what went wrong."""
    if consumer == "raw-bytes":
        got = b"".join(collected)
        return None if got == fx.body else f"body differs ({len(got)} vs {len(fx.body)} bytes)"
    if consumer in ("raw-lines", "httpx-sse"):
        text = text_from_payloads(fx.kind, collected)
    else:
        text = "".join(collected)
    return None if text == fx.text else f"text differs ({len(text)} vs {len(fx.text)} chars)"


# ---------------------------------------------------------------------------------
# Physical floors (pure Python on bytes already in memory)
# ---------------------------------------------------------------------------------
def floor_lines(fx: StreamFixture) -> dict:
    """Split the in-memory body into lines and count the `data:` lines."""
    t0 = now()
    n = 0
    for line in fx.body.split(b"\n"):
        if line.startswith(b"data:"):
            n += 1
    return {"total": now() - t0, "ttfe": None, "items": n}


def floor_lines_json(fx: StreamFixture) -> dict:
    """Decode, split into lines, json.loads every `data:` payload: the least any SDK must do."""
    t0 = now()
    n = 0
    loads = json.loads
    for line in fx.body.decode().split("\n"):
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload != "[DONE]":
                loads(payload)
            n += 1
    return {"total": now() - t0, "ttfe": None, "items": n}


FLOORS = {"floor:lines": floor_lines, "floor:lines+json": floor_lines_json}


def measure_client_construction(rounds: int = 7) -> dict[str, Any]:
    """What building a client costs.  Transport-patching tools need a client with the
    default transport, whose construction loads the CA bundle into an SSL context."""
    import anthropic
    import httpx
    import httpx2
    import openai

    cases: dict[str, Callable[[], Any]] = {}
    for hx in (httpx, httpx2):
        n = hx.__name__
        cases[f"{n}.Client()"] = hx.Client
        cases[f"{n}.Client(verify=False)"] = lambda hx=hx: hx.Client(verify=False)
        cases[f"{n}.Client(transport=MockTransport)"] = lambda hx=hx: hx.Client(
            transport=hx.MockTransport(lambda r: None)
        )
    cases["anthropic.Anthropic()"] = lambda: anthropic.Anthropic(
        api_key=API_KEY, base_url=FAKE_BASE
    )
    cases["openai.OpenAI()"] = lambda: openai.OpenAI(api_key=API_KEY, base_url=OPENAI_BASE)
    out = {}
    for name, make in cases.items():
        xs = []
        for _ in range(rounds):
            t = now()
            obj = make()
            xs.append(now() - t)
            obj.close()
        out[name] = summarize(xs)
    return out


# ---------------------------------------------------------------------------------
# Worker: W1 scaling
# ---------------------------------------------------------------------------------
def run_scaling_worker(spec: dict, workdir: Path) -> dict:
    import httpx as hx

    cfg = spec["cfg"]
    contenders = [contender_by_name(n) for n in spec["contenders"]]
    contenders = [c for c in contenders if "scaling" in c.workloads]
    cells: list[dict] = []
    history: dict[str, list[tuple[int, float]]] = {c.name: [] for c in contenders}
    capped_at: dict[str, int] = {}
    budget = cfg["w1_cell_budget_s"]

    def replay(c: Contender, prepared, fx: ScalingFixture, cap_s: float | None) -> dict:
        bodies = [it.request_body for it in fx.interactions]
        expected = [it.response_body for it in fx.interactions]
        step = max(1, fx.n // 50)
        checkpoints: list[tuple[int, float]] = []
        mismatches = 0
        done = 0
        capped = False
        stats: dict = {}
        collect_garbage(cfg, always_full=True)
        t0 = now()
        with c.scaling_session(prepared, fx, hx, stats=stats) as client:
            t1 = now()
            for i, body in enumerate(bodies):
                r = client.post(fx.url, content=body, headers=fx.request_headers)
                if r.content != expected[i]:
                    mismatches += 1
                done = i + 1
                t = now() - t1
                if done % step == 0:
                    checkpoints.append((done, t))
                if cap_s is not None and t > cap_s and done < fx.n:
                    capped = True
                    if done % step:
                        checkpoints.append((done, t))
                    break
            t2 = now()
        t3 = now()
        ctor = stats.get("client_ctor_s", 0.0)
        return {
            "load": t1 - t0 - ctor,
            "client_ctor": ctor,
            "replay": t2 - t1,
            "teardown": t3 - t2,
            "done": done,
            "capped": capped,
            "mismatches": mismatches,
            "checkpoints": checkpoints,
        }

    # warm-up (imports, first-request costs) on a tiny fixture, untimed
    small = make_scaling_fixture(10, seed=7)
    for c in contenders:
        try:
            with c.scaling_session(c.scaling_prepare(workdir, small, hx), small, hx) as client:
                for it in small.interactions:
                    client.post(small.url, content=it.request_body, headers=small.request_headers)
        except Exception as e:  # reported per cell below
            log(f"  [W1] warm-up {c.name}: {type(e).__name__}: {e}")

    for n in cfg["w1_ns"]:
        fx = make_scaling_fixture(n)
        prepared: dict[str, Any] = {}
        plans: dict[str, dict] = {}
        for c in contenders:
            base = {
                "workload": "W1",
                "contender": c.name,
                "match_on": list(c.match_on) if isinstance(c, VcrpyContender) else None,
                "n": n,
                "fixture": fx.digest(),
            }
            if c.name in capped_at:
                hist = history[c.name]
                plans[c.name] = {"skip": True}
                cells.append(
                    {
                        **base,
                        "status": "skipped",
                        "reason": f"already capped at N={capped_at[c.name]}; see extrapolation",
                        "predicted_replay_s": _predict(hist, n),
                    }
                )
                continue
            try:
                t = now()
                prepared[c.name] = c.scaling_prepare(workdir, fx, hx)
                prep_s = now() - t
            except NotImplementedError:
                plans[c.name] = {"skip": True}
                continue
            except Exception as e:
                plans[c.name] = {"skip": True}
                cells.append({**base, "status": "error", "reason": f"{type(e).__name__}: {e}"})
                continue
            predicted = _predict(history[c.name], n)
            reps = cfg["reps"]
            cap = None
            if predicted is not None and predicted * reps > budget:
                if predicted <= cfg["w1_cap_s"]:
                    reps = max(1, int(budget // predicted))
                else:
                    reps, cap = 1, cfg["w1_cap_s"]
            plans[c.name] = {
                "skip": False,
                "reps": reps,
                "cap": cap,
                "predicted": predicted,
                "prep_s": prep_s,
                "base": base,
                "samples": [],
            }
        active = [c for c in contenders if not plans.get(c.name, {"skip": True})["skip"]]
        max_reps = max([plans[c.name]["reps"] for c in active] or [0])
        for rep in range(max_reps):
            for c in rotate(active, rep):
                p = plans[c.name]
                if rep >= p["reps"]:
                    continue
                try:
                    p["samples"].append(replay(c, prepared[c.name], fx, p["cap"]))
                except Exception as e:
                    p["error"] = f"{type(e).__name__}: {e}"
        for c in active:
            p = plans[c.name]
            s = p["samples"]
            if not s:
                cells.append(
                    {**p["base"], "status": "error", "reason": p.get("error", "no samples")}
                )
                continue
            capped = any(x["capped"] for x in s)
            replay_s = summarize([x["replay"] for x in s])
            load_s = summarize([x["load"] for x in s])
            done = s[0]["done"]
            # checkpoints of the median-time sample describe the per-position cost curve
            mid = sorted(s, key=lambda x: x["replay"])[len(s) // 2]
            fit = fit_quadratic_through_origin(mid["checkpoints"])
            cell = {
                **p["base"],
                "status": "capped" if capped else "ok",
                "reps": len(s),
                "requests_done": done,
                "load_s": load_s,
                "replay_s": replay_s,
                "client_ctor_s": summarize([x["client_ctor"] for x in s]),
                "us_per_request": {k: replay_s[k] / done * 1e6 for k in ("min", "median", "max")},
                "teardown_s": summarize([x["teardown"] for x in s]),
                "prepare_s": p["prep_s"],
                "mismatches": sum(x["mismatches"] for x in s),
                "verified": all(x["mismatches"] == 0 for x in s),
                "cap_s": p["cap"],
                "predicted_replay_s_before_run": p["predicted"],
                "checkpoints": mid["checkpoints"],
            }
            if fit:
                a, b = fit
                cell["fit"] = {
                    "a_s": a,
                    "b_s": b,
                    "marginal_us_first": (a + 2 * b * 1) * 1e6,
                    "marginal_us_at_n": (a + 2 * b * n) * 1e6,
                }
                if capped:
                    cell["extrapolated_replay_s"] = a * n + b * n * n
                    cell["extrapolated_us_per_request"] = (a * n + b * n * n) / n * 1e6
            # window costs inside the run: first 10% vs last 10% of completed requests
            cell["window_us"] = _window_costs(mid["checkpoints"])
            if capped:
                capped_at[c.name] = n
                history[c.name].append((n, cell.get("extrapolated_replay_s") or replay_s["median"]))
                cell["fit_for_extrapolation"] = fit
            else:
                history[c.name].append((n, replay_s["median"]))
            cells.append(cell)
            log(
                f"  [W1] N={n:>5} {c.name:<14} load {load_s['median'] * 1e3:9.1f} ms  replay "
                f"{replay_s['median']:9.3f} s  ({cell['us_per_request']['median']:9.1f} us/req, "
                f"{len(s)} reps{f', CAPPED after {done} requests' if capped else ''})"
            )
    # models for skipped cells: extrapolate from the capped fit
    for cell in cells:
        if cell.get("status") == "skipped":
            src = [
                x
                for x in cells
                if x["contender"] == cell["contender"] and x.get("fit_for_extrapolation")
            ]
            if src:
                a, b = src[-1]["fit_for_extrapolation"]
                cell["extrapolated_replay_s"] = a * cell["n"] + b * cell["n"] ** 2
    return {"cells": cells, "calibration": calibration_probe()}


def _predict(history: list[tuple[int, float]], n: int) -> float | None:
    """Pessimistic guess of a replay's duration: quadratic growth from the last point."""
    if not history:
        return None
    n0, t0 = history[-1]
    return t0 * (n / n0) ** 2


def _window_costs(checkpoints: list[tuple[int, float]]) -> dict | None:
    if len(checkpoints) < 10:
        return None
    k = max(1, len(checkpoints) // 10)
    (i0, t0) = (0, 0.0)
    (i1, t1) = checkpoints[k - 1]
    first = (t1 - t0) / (i1 - i0)
    (j0, u0) = checkpoints[-k - 1]
    (j1, u1) = checkpoints[-1]
    last = (u1 - u0) / (j1 - j0)
    return {
        "first_window_us": first * 1e6,
        "last_window_us": last * 1e6,
        "last_over_first": last / first,
    }


# ---------------------------------------------------------------------------------
# Worker: W2 / W3 / W6 streams
# ---------------------------------------------------------------------------------
def run_stream_worker(spec: dict, workdir: Path) -> dict:
    cfg = spec["cfg"]
    names = spec["contenders"]
    contenders = [contender_by_name(n) for n in names]
    cells: list[dict] = []
    floors: list[dict] = []
    floor_done: set = set()
    skipped: list[str] = []  # consumers whose library is not installed

    def rounds(elapsed: float, r: int) -> bool:
        return r < cfg["reps"] or (r < cfg["max_reps"] and elapsed < cfg["min_cell_s"])

    for group in spec["groups"]:
        wl, kind = group["workload"], group["kind"]
        if wl == "W6":
            cells += _run_record_group(group, cfg, contenders, workdir)
            continue
        stack = group["stack"]
        hx = importlib.import_module(stack)
        members = [
            c
            for c in contenders
            if "stream" in c.workloads
            and (c.world(stack) == WORLD or (c.anchor and WORLD != "native"))
        ]
        for k in group["ks"]:
            fx = make_stream_fixture(kind, k)
            # floors, once per (kind, K) per process
            if (kind, k) not in floor_done:
                floor_done.add((kind, k))
                samples = {f: [] for f in FLOORS}
                r, t_start = 0, now()
                while rounds(now() - t_start, r):
                    for f in rotate(list(FLOORS), r):
                        collect_garbage(cfg)
                        samples[f].append(FLOORS[f](fx))
                    r += 1
                for f, s in samples.items():
                    floors.append(
                        {
                            "workload": wl,
                            "kind": kind,
                            "k": k,
                            "floor": f,
                            "world": WORLD,
                            "bytes": len(fx.body),
                            "items": s[0]["items"],
                            "total_s": summarize([x["total"] for x in s]),
                        }
                    )
            prepared: dict[str, Any] = {}
            usable = []
            for c in members:
                try:
                    prepared[c.name] = c.stream_prepare(workdir, fx, hx)
                    usable.append(c)
                except NotImplementedError:
                    pass
                except Exception as e:
                    cells.append(
                        {
                            "workload": wl,
                            "kind": kind,
                            "k": k,
                            "stack": stack,
                            "contender": c.name,
                            "world": WORLD,
                            "status": "error",
                            "reason": f"prepare: {type(e).__name__}: {e}",
                        }
                    )
            for consumer in group["consumers"]:
                if consumer == "anthropic-helper" and k not in cfg["w2_helper_ks"]:
                    continue
                needs = CONSUMERS[consumer].get("needs")
                if needs and importlib.util.find_spec(needs) is None:
                    why = f"{consumer}: {needs} is not installed (pip install -e '.[bench]')"
                    if why not in skipped:
                        skipped.append(why)
                        log(f"  ({wl} consumer {why}: not run)")
                    continue
                fn = CONSUMERS[consumer]["fn"]
                want = expected_items(consumer, fx)
                ok: list[Contender] = []
                errors: dict[str, str] = {}
                # untimed verification + warm-up run: exact stream content must come through
                for c in usable:
                    try:
                        collected: list = []
                        with c.stream_session(prepared[c.name], fx, hx) as client:
                            fn(client, fx, hx, collected)
                        problem = verify(consumer, fx, collected)
                        if problem:
                            errors[c.name] = "verification failed: " + problem
                        else:
                            ok.append(c)
                    except NotImplementedError:
                        pass
                    except Exception as e:
                        errors[c.name] = f"{type(e).__name__}: {str(e)[:300]}"
                samples: dict[str, list[dict]] = {c.name: [] for c in ok}
                r, t_start = 0, now()
                while rounds(now() - t_start, r):
                    for c in rotate(ok, r):
                        try:
                            stats: dict = {}
                            collect_garbage(cfg)
                            t0 = now()
                            with c.stream_session(prepared[c.name], fx, hx, stats=stats) as client:
                                t1 = now()
                                s = fn(client, fx, hx)
                            s["client_ctor"] = stats.get("client_ctor_s", 0.0)
                            s["setup"] = t1 - t0 - s["client_ctor"]
                            if want is not None and s["items"] != want:
                                errors[c.name] = f"got {s['items']} items, expected {want}"
                            samples[c.name].append(s)
                        except Exception as e:
                            errors[c.name] = f"{type(e).__name__}: {str(e)[:300]}"
                    r += 1
                for c in usable:
                    base = {
                        "workload": wl,
                        "kind": kind,
                        "k": k,
                        "stack": stack,
                        "consumer": consumer,
                        "contender": c.name,
                        "world": WORLD,
                        "bytes": len(fx.body),
                        "fixture": fx.digest,
                    }
                    if c.name in errors:
                        cells.append({**base, "status": "error", "reason": errors[c.name]})
                        log(
                            f"  [{wl}] K={k:>6} {consumer:<16} {c.name:<13} ERROR {errors[c.name][:120]}"
                        )
                        continue
                    if c.name not in samples:
                        continue
                    s = samples[c.name]
                    cell = {
                        **base,
                        "status": "ok",
                        "reps": len(s),
                        "unit": CONSUMERS[consumer]["unit"],
                        "items": s[0]["items"],
                        "total_s": summarize([x["total"] for x in s]),
                        "ttfe_s": summarize([x["ttfe"] for x in s]),
                        "setup_s": summarize([x["setup"] for x in s]),
                        "client_ctor_s": summarize([x["client_ctor"] for x in s]),
                    }
                    if consumer == "raw-bytes":
                        cell["chunks"] = s[0]["chunks"]
                        cell["first_chunk_bytes"] = s[0]["first_chunk_bytes"]
                        cell["incremental"] = s[0]["chunks"] > 1
                    cells.append(cell)
                    log(
                        f"  [{wl}] K={k:>6} {consumer:<16} {c.name:<13} total {med(cell['total_s']) * 1e3:9.1f} ms"
                        f"  ttfe {med(cell['ttfe_s']) * 1e3:8.2f} ms  setup {med(cell['setup_s']) * 1e3:8.1f} ms"
                        f"  ({len(s)} reps, {WORLD})"
                    )
    components = measure_client_construction() if WORLD == "native" else None
    return {
        "cells": cells,
        "floors": floors,
        "skipped": skipped,
        "client_construction_s": components,
        "calibration": calibration_probe(),
    }


def _run_record_group(
    group: dict, cfg: dict, contenders: list[Contender], workdir: Path
) -> list[dict]:
    """W6: time to first event seen by the client while the contender *records* a paced stream."""
    import httpx as hx

    fx = make_stream_fixture(group["kind"], group["events"])
    pace = group["pace_s"]

    def upstream_handler(request):
        def paced():
            for e in fx.events:
                time.sleep(pace)
                yield e

        return hx.Response(200, headers=fx.response_headers, content=paced())

    members = [c for c in contenders if "record" in c.workloads and c.world("httpx") == WORLD]
    samples: dict[str, list] = {c.name: [] for c in members}
    errors: dict[str, str] = {}
    for r in range(cfg["reps"]):
        for c in rotate(members, r):
            if c.name in errors:
                continue
            try:
                upstream = hx.MockTransport(upstream_handler)
                with c.record_session(workdir, fx, hx, upstream) as client:
                    s = consume_raw_lines(client, fx, hx)
                samples[c.name].append(s)
            except NotImplementedError:
                errors[c.name] = "n/a"
            except Exception as e:
                errors[c.name] = f"{type(e).__name__}: {str(e)[:300]}"
    cells = []
    for c in members:
        base = {
            "workload": "W6",
            "kind": fx.kind,
            "k": fx.k,
            "stack": "httpx",
            "consumer": "raw-lines",
            "contender": c.name,
            "world": WORLD,
            "pace_s": pace,
            "upstream_duration_s": pace * len(fx.events),
        }
        if c.name in errors:
            if errors[c.name] != "n/a":
                cells.append({**base, "status": "error", "reason": errors[c.name]})
            continue
        s = samples[c.name]
        cell = {
            **base,
            "status": "ok",
            "reps": len(s),
            "total_s": summarize([x["total"] for x in s]),
            "ttfe_s": summarize([x["ttfe"] for x in s]),
        }
        cells.append(cell)
        log(
            f"  [W6] {c.name:<13} ttfe {med(cell['ttfe_s']) * 1e3:8.1f} ms  total {med(cell['total_s']) * 1e3:8.1f} ms"
        )
    return cells


# ---------------------------------------------------------------------------------
# Worker: W5 fake-model throughput (bench/fake_throughput.py)
# ---------------------------------------------------------------------------------
def run_fake_worker(spec: dict, workdir: Path) -> dict:
    import fake_throughput

    out = fake_throughput.run(spec["cfg"], log=log)
    out["calibration"] = calibration_probe()
    return out


# ---------------------------------------------------------------------------------
# W4: per-test overhead inside pytest (driven from the orchestrator)
# ---------------------------------------------------------------------------------
_PYTEST_SUMMARY = re.compile(r"(\d+) passed.*? in ([\d.]+)s")


@dataclasses.dataclass(frozen=True)
class PytestProject:
    """A W4 project: its folder, extra pytest arguments and the plugins it loads."""

    path: Path
    args: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    autoload: bool = False  # every installed plugin instead (the mock+autoload reference)


def _run_pytest(
    project: PytestProject, collect_only: bool = False
) -> tuple[float, float | None, int, str]:
    loads = [arg for name in project.plugins for arg in ("-p", name)]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *loads, *project.args]
    if collect_only:
        cmd.append("--collect-only")
    # PYTHONDONTWRITEBYTECODE would make every run recompile the generated test modules;
    # drop it so the warm-up's .pyc caches are used, as on a usual developer machine
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYTEST_ADDOPTS",
            "PEERBENCH_WORLD",
            "PYTHONDONTWRITEBYTECODE",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
            "PYTEST_PLUGINS",
        )
    }
    if not project.autoload:  # only the tool's own plugins (see Contender.w4_plugins)
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    t0 = now()
    p = subprocess.run(cmd, cwd=project.path, env=env, capture_output=True, text=True, check=False)
    wall = now() - t0
    out = p.stdout + p.stderr
    m = _PYTEST_SUMMARY.search(out)
    passed = int(m.group(1)) if m else 0
    session = float(m.group(2)) if m else None
    if p.returncode != 0:
        raise RuntimeError(f"pytest exited {p.returncode}: {_pytest_failure(out)}")
    shown = " ".join(cmd)
    return (
        wall,
        session,
        passed,
        shown if project.autoload else "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 " + shown,
    )


def _pytest_failure(output: str) -> str:
    """What a failed pytest run says went wrong: its error lines (``E   ...``, ``ERROR ...``)
    first, which a bare tail of the output cuts in half, then the tail."""
    lines = output.splitlines()
    said = [ln.strip() for ln in lines if ln.startswith(("E   ", "ERROR ", "FAILED "))]
    return "; ".join(dict.fromkeys(said))[-400:] + " | tail: " + " ".join(lines[-3:])[-200:]


SDK_STARTUP = "(pytest startup + import anthropic)"


def run_pytest_workload(cfg: dict, names: list[str], workdir: Path) -> dict:
    fx = make_scaling_fixture(cfg["w4_tests"], seed=4004)
    root = workdir / "pytest"
    projects: dict[str, PytestProject] = {}
    cells: list[dict] = []
    # pytest startup + collection of one trivial test: subtracted to get per-test cost
    start = root / "_startup"
    start.mkdir(parents=True, exist_ok=True)
    (start / "pytest.ini").write_text("[pytest]\n")
    (start / "test_bench.py").write_text("def test_nothing():\n    pass\n")
    projects["(pytest startup, 1 empty test)"] = PytestProject(start)
    sdk_wanted = any(n.endswith(SDK_SUFFIX) for n in names)
    if sdk_wanted:  # the SDK variants' startup also imports anthropic: subtract that too
        start_sdk = root / "_startup_sdk"
        start_sdk.mkdir(parents=True, exist_ok=True)
        (start_sdk / "pytest.ini").write_text("[pytest]\n")
        (start_sdk / "test_bench.py").write_text(
            "import anthropic\n\n\ndef test_nothing():\n    pass\n"
        )
        projects[SDK_STARTUP] = PytestProject(start_sdk)
    # timed rounds per project: the startup references are cheap, so they get at least 3
    # (a steadier subtraction); slow reference rows may get fewer (Contender.w4_rounds)
    total_rounds = max(cfg["w4_reps"], cfg.get("w4_startup_reps", 3))
    rounds = dict.fromkeys(projects, total_rounds)
    for name in names:
        c = contender_by_name(name)
        if "pytest" not in c.workloads:
            continue
        rounds[c.name] = min(cfg["w4_reps"], c.w4_rounds or cfg["w4_reps"])
        try:
            projects[c.name] = PytestProject(
                root / c.name,
                tuple(c.pytest_project(root / c.name, fx)),
                c.w4_plugins,
                c.w4_autoload,
            )
        except NotImplementedError:
            continue
        except Exception as e:
            cells.append(
                {
                    "workload": "W4",
                    "contender": c.name,
                    "status": "error",
                    "reason": f"{type(e).__name__}: {e}",
                }
            )
    walls: dict[str, list[float]] = {k: [] for k in projects}
    sessions: dict[str, list[float]] = {k: [] for k in projects}
    errors: dict[str, str] = {}
    commands: dict[str, str] = {}
    order = list(projects)
    startup_key = order[0]
    startups = {startup_key, SDK_STARTUP}

    def run(key: str) -> tuple[float, float | None] | None:
        try:
            wall, session, passed, cmd = _run_pytest(projects[key])
        except Exception as e:
            errors[key] = str(e)[:600]
            return None
        commands[key] = f"cd {projects[key].path} && {cmd}"
        want = 1 if key in startups else fx.n
        if passed != want:  # every run must pass every test
            errors[key] = f"{passed} passed, expected {want}"
            return None
        return wall, session

    if cfg["w4_warmup"]:
        for key in order:  # untimed: imports + writes the assertion-rewrite .pyc caches
            try:
                _run_pytest(projects[key], collect_only=True)
            except Exception as e:
                errors[key] = str(e)[:600]
    for r in range(total_rounds):
        for key in rotate(order, r):
            if key in errors or r >= rounds[key]:
                continue
            res = run(key)
            if res:
                walls[key].append(res[0])
                sessions[key].append(res[1])
        log(f"  [W4] round {r + 1} done")
    bases = {k: summarize(walls[k]) for k in startups if k in walls}
    for key in order:
        base = bases.get(SDK_STARTUP if key.endswith(SDK_SUFFIX) else startup_key)
        if key in errors:
            cells.append(
                {"workload": "W4", "contender": key, "status": "error", "reason": errors[key]}
            )
            log(f"  [W4] {key}: ERROR {errors[key][:200]}")
            continue
        w, s = summarize(walls[key]), summarize(sessions[key])
        n = 1 if key in startups else fx.n
        cell = {
            "workload": "W4",
            "contender": key,
            "status": "ok",
            "tests": n,
            "reps": len(walls[key]),
            "wall_s": w,
            "pytest_reported_s": s,
            "command": commands.get(key),
        }
        if key not in startups and base is not None:
            cell["per_test_ms"] = (w["median"] - base["median"]) / n * 1e3
            # min-based estimate: on a noisy machine the fastest run is closest to the intrinsic cost
            cell["per_test_ms_from_min"] = (w["min"] - base["min"]) / n * 1e3
        cells.append(cell)
        log(f"  [W4] {key:<32} wall {w['median']:.3f} s (min {w['min']:.3f})")
    return {"cells": cells, "tests": fx.n}


# ---------------------------------------------------------------------------------
# Orchestrator
# ---------------------------------------------------------------------------------
PACKAGES = [
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "h11",
    "vcrpy",
    "pytest",
    "pytest-recording",
    "respx",
    "pytest-httpx",
    "anthropic",
    "openai",
    "httpx-sse",
    "PyYAML",
    "pydantic",
    "pydantic_core",
    "jiter",
    "anyio",
    "wrapt",
    "pytest-agentreplay-plugin",
]


def environment_info() -> dict:
    pkgs = {}
    for p in PACKAGES:
        try:
            pkgs[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            pkgs[p] = None
    try:
        import yaml

        libyaml = bool(getattr(yaml, "__with_libyaml__", False))
    except ImportError:
        libyaml = None
    every = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    return {
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "packages": pkgs,
        "all_distributions": every,
        "pyyaml_libyaml": libyaml,
    }


def run_worker(kind: str, spec: dict, workdir: Path, world: str) -> dict:
    spec_path = workdir / f"spec-{kind}-{world}.json"
    result_path = workdir / f"result-{kind}-{world}.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ)
    env.pop("PEERBENCH_WORLD", None)
    if world != "native":
        env["PEERBENCH_WORLD"] = world
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        kind,
        "--spec",
        str(spec_path),
        "--result",
        str(result_path),
        "--workdir",
        str(workdir),
    ]
    t0 = now()
    p = subprocess.run(cmd, env=env, check=False)
    if p.returncode != 0 or not result_path.exists():
        return {"error": f"worker {kind}/{world} exited {p.returncode}", "cells": [], "floors": []}
    out = json.loads(result_path.read_text())
    out["worker_wall_s"] = now() - t0
    return out


def orchestrate(args: argparse.Namespace) -> int:
    cfg = dict(QUICK if args.quick else FULL)
    if args.repeats:
        cfg["reps"] = args.repeats
        cfg["w4_reps"] = args.repeats
    only = set((args.only or "W1,W2,W3,W4,W5,W6").upper().split(","))
    t_start = now()
    scratch = os.environ.get("PEERBENCH_SCRATCH") or None
    workdir = (
        Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="work-", dir=scratch))
    )
    workdir.mkdir(parents=True, exist_ok=True)
    default = [c for c in all_contenders() if (c.in_quick if args.quick else c.in_full)]
    wanted = (
        [c for c in all_contenders() if c.name in args.contenders.split(",")]
        if args.contenders
        else default
    )
    skipped = {c.name: c.unavailable_reason() for c in wanted if c.unavailable_reason()}
    names = [c.name for c in wanted if c.name not in skipped]
    env = environment_info()
    log(f"peerbench {cfg['mode']} run; workdir {workdir}; contenders {', '.join(names)}")
    for n, why in skipped.items():
        log(f"  (skipping {n}: {why})")
    results: dict[str, Any] = {
        "schema": SCHEMA,
        "mode": cfg["mode"],
        "argv": sys.argv,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": env,
        "config": cfg,
        "contenders": {
            c.name: {
                "description": c.description,
                "workloads": sorted(c.workloads),
                "skipped": skipped.get(c.name),
            }
            for c in wanted
        },
        "workloads": {},
        "calibration": {},
    }
    phase_t = now()
    results["phase_wall_s"] = {}
    if "W1" in only:
        log("W1: cassette load + replay vs N (httpx, POST /v1/messages)")
        out = run_worker("scaling", {"cfg": cfg, "contenders": names}, workdir, "native")
        results["phase_wall_s"]["W1"] = now() - phase_t
        results["workloads"]["W1"] = out
        results["calibration"]["W1-native"] = out.get("calibration")
    groups = []
    if "W2" in only:
        groups += [
            {
                "workload": "W2",
                "kind": "anthropic",
                "stack": "httpx",
                "ks": cfg["w2_ks"],
                "consumers": ["raw-bytes", "raw-lines", "httpx-sse"],
            },
            {
                "workload": "W2",
                "kind": "anthropic",
                "stack": "httpx2",
                "ks": cfg["w2_ks"],
                "consumers": ["anthropic-sdk", "anthropic-helper"],
            },
        ]
    if "W3" in only:
        groups += [
            {
                "workload": "W3",
                "kind": "openai",
                "stack": "httpx",
                "ks": cfg["w3_ks"],
                "consumers": ["raw-lines"],
            },
            {
                "workload": "W3",
                "kind": "openai",
                "stack": "httpx2",
                "ks": cfg["w3_ks"],
                "consumers": ["openai-sdk"],
            },
        ]
    if "W6" in only:
        groups.append(
            {
                "workload": "W6",
                "kind": "anthropic",
                "stack": "httpx",
                "events": cfg["w6_events"],
                "pace_s": cfg["w6_pace_s"],
            }
        )
    if groups:
        log("W2/W3/W6: SSE streams (native world)")
        out = run_worker(
            "stream", {"cfg": cfg, "contenders": names, "groups": groups}, workdir, "native"
        )
        stream = {
            "cells": out.get("cells", []),
            "floors": out.get("floors", []),
            "errors": [],
            "skipped": out.get("skipped", []),
            "client_construction_s": out.get("client_construction_s"),
        }
        if out.get("error"):
            stream["errors"].append(out["error"])
        results["calibration"]["stream-native"] = out.get("calibration")
        alias_needed = [
            n
            for n in names
            if any(
                contender_by_name(n).world(g["stack"]) == "alias"
                for g in groups
                if g["workload"] != "W6"
            )
        ]
        sdk_groups = [g for g in groups if g.get("stack") == "httpx2"]
        if alias_needed and sdk_groups:
            log("W2/W3: SSE streams through the SDKs, alias world (httpx2.alias_httpx())")
            alias_names = alias_needed + [
                n for n in names if contender_by_name(n).anchor and n not in alias_needed
            ]
            out2 = run_worker(
                "stream",
                {"cfg": cfg, "contenders": alias_names, "groups": sdk_groups},
                workdir,
                "alias",
            )
            stream["cells"] += out2.get("cells", [])
            stream["floors"] += out2.get("floors", [])
            stream["skipped"] += [s for s in out2.get("skipped", []) if s not in stream["skipped"]]
            if out2.get("error"):
                stream["errors"].append(out2["error"])
            results["calibration"]["stream-alias"] = out2.get("calibration")
        results["workloads"]["STREAMS"] = stream
        results["phase_wall_s"]["W2/W3/W6"] = (
            now() - phase_t - results["phase_wall_s"].get("W1", 0.0)
        )
    if "W5" in only and "agentreplay" in names:
        log("W5: fake-model throughput (scripted calls, hypothesis fault plans)")
        t5 = now()
        out = run_worker("fake", {"cfg": cfg}, workdir, "native")
        results["workloads"]["W5"] = out
        results["calibration"]["W5-native"] = out.get("calibration")
        results["phase_wall_s"]["W5"] = now() - t5
    if "W4" in only:
        log(f"W4: pytest per-test overhead ({cfg['w4_tests']} tests, subprocesses)")
        t4 = now()
        results["workloads"]["W4"] = run_pytest_workload(cfg, names, workdir)
        results["phase_wall_s"]["W4"] = now() - t4
    results["elapsed_s"] = now() - t_start
    results["environment"]["loadavg_at_end"] = (
        os.getloadavg() if hasattr(os, "getloadavg") else None
    )
    derive(results)
    report = render_report(results)
    print(report)
    out_path = Path(args.out) if args.out else (DEFAULT_OUT_QUICK if args.quick else DEFAULT_OUT)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    results["report_text"] = report
    out_path.write_text(_portable(json.dumps(results, indent=1, default=str), workdir) + "\n")
    log(f"results written to {out_path}  (elapsed {results['elapsed_s']:.0f} s)")
    if not args.keep and not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    failed = problems(results)
    if failed:
        log(f"{len(failed)} problem(s), listed at the end of the report: exit status 1")
    return 1 if failed else 0


# ---------------------------------------------------------------------------------
# Derived numbers (ratios, growth) and the text report
# ---------------------------------------------------------------------------------
def derive(results: dict) -> None:
    w1 = results["workloads"].get("W1")
    if w1:
        by: dict[str, list[dict]] = {}
        for c in w1["cells"]:
            if c.get("status") in ("ok", "capped"):
                by.setdefault(c["contender"], []).append(c)
        for cs in by.values():
            cs.sort(key=lambda c: c["n"])
            for a, b in itertools.pairwise(cs):
                ta = a.get("extrapolated_replay_s") or a["replay_s"]["median"]
                tb = b.get("extrapolated_replay_s") or b["replay_s"]["median"]
                if ta > 0 and tb > 0:
                    b["growth_exponent_vs_prev_n"] = math.log(tb / ta) / math.log(b["n"] / a["n"])
        mocks = {c["n"]: c for c in by.get("mocktransport", [])}
        for cs in by.values():
            for c in cs:
                m = mocks.get(c["n"])
                if m and m is not c:
                    c["x_mocktransport_replay"] = (
                        c.get("extrapolated_replay_s") or c["replay_s"]["median"]
                    ) / m["replay_s"]["median"]
                    c["x_mocktransport_load"] = c["load_s"]["median"] / m["load_s"]["median"]
    st = results["workloads"].get("STREAMS")
    if st:
        floors = {(f["world"], f["kind"], f["k"], f["floor"]): f for f in st["floors"]}
        ok = [c for c in st["cells"] if c.get("status") == "ok" and c["workload"] != "W6"]
        mocks = {
            (c["world"], c["kind"], c["k"], c["consumer"]): c
            for c in ok
            if c["contender"] == "mocktransport"
        }
        for c in ok:
            t = c["total_s"]["median"]
            c["mb_per_s"] = c["bytes"] / t / 1e6
            c["items_per_s"] = c["items"] / t
            f = floors.get(
                (c["world"], c["kind"], c["k"], CONSUMERS[c["consumer"]]["floor"] or "-")
            )
            if f:
                c["x_floor"] = t / f["total_s"]["median"]
                c["floor_used"] = f["floor"]
            m = mocks.get((c["world"], c["kind"], c["k"], c["consumer"]))
            if m:
                c["x_mocktransport_same_process"] = t / m["total_s"]["median"]
            c["ttfe_over_total"] = c["ttfe_s"]["median"] / t
        for f in st["floors"]:
            t = f["total_s"]["median"]
            f["mb_per_s"] = f["bytes"] / t / 1e6
            f["items_per_s"] = f["items"] / t
    w4 = results["workloads"].get("W4")
    if w4:
        ok = {c["contender"]: c for c in w4["cells"] if c.get("status") == "ok"}
        m = ok.get("mocktransport")
        ref = ok.get("mock+client-ctor")
        sdk_m, sdk_ref = ok.get("mock" + SDK_SUFFIX), ok.get("mock+ctor" + SDK_SUFFIX)
        for c in ok.values():
            if m and c is not m and "per_test_ms" in c:
                c["x_mocktransport_wall"] = c["wall_s"]["median"] / m["wall_s"]["median"]
                c["x_mocktransport_wall_from_min"] = c["wall_s"]["min"] / m["wall_s"]["min"]
                if m.get("per_test_ms", 0) > 0.2:  # a ratio to ~0 would be noise
                    c["x_mocktransport_per_test"] = c["per_test_ms"] / m["per_test_ms"]
                    c["x_mocktransport_per_test_from_min"] = (
                        c["per_test_ms_from_min"] / m["per_test_ms_from_min"]
                    )
            sdk = c["contender"].endswith(SDK_SUFFIX)
            mock_same, ctor_ref = (sdk_m, sdk_ref) if sdk else (m, ref)
            if sdk and mock_same and c is not mock_same and "per_test_ms" in c:
                # same SDK, same per-test work, but a MockTransport http_client instead of a default one
                c["x_same_sdk_mock_wall"] = c["wall_s"]["median"] / mock_same["wall_s"]["median"]
                c["x_same_sdk_mock_wall_from_min"] = c["wall_s"]["min"] / mock_same["wall_s"]["min"]
            if (
                ctor_ref
                and c is not ctor_ref
                and "per_test_ms" in c
                and contender_by_name(c["contender"]).builds_default_client
            ):
                c["per_test_ms_beyond_client_ctor"] = c["per_test_ms"] - ctor_ref["per_test_ms"]
                c["per_test_ms_beyond_client_ctor_from_min"] = (
                    c["per_test_ms_from_min"] - ctor_ref["per_test_ms_from_min"]
                )


def target_summary(results: dict) -> list[list[Any]]:
    """The product targets of issues 3, 4, 9 and 10, checked on this run (empty without agentreplay)."""
    rows: list[list[Any]] = []

    def ratio(a: dict, b: dict, key: str) -> tuple[float, float]:
        return a[key]["median"] / b[key]["median"], a[key]["min"] / b[key]["min"]

    def add(
        name: str,
        goal: str,
        pair: tuple[float, float] | None,
        ok: Callable[[float], bool],
        fmt: str = ".2f",
        *,
        unit: str = "x",
    ) -> None:
        if pair is None:
            return
        med_v, min_v = pair
        met = (
            "yes"
            if ok(med_v) and ok(min_v)
            else ("min only" if ok(min_v) else ("median only" if ok(med_v) else "NO"))
        )
        rows.append([name, goal, f"{med_v:{fmt}}{unit} [{min_v:{fmt}}{unit}]", met])

    w1 = results["workloads"].get("W1")
    if w1:
        cells = {
            (c["contender"], c["n"]): c
            for c in w1["cells"]
            if c.get("status") in ("ok", "capped", "skipped")
        }
        ours = {
            n: c
            for (name, n), c in cells.items()
            if name == "agentreplay" and c.get("status") == "ok"
        }
        if ours:
            lo, hi = min(ours), max(ours)
            small = min((n for n in ours if n >= 100), default=lo)
            a, b = ours[hi], ours[small]
            add(
                f"W1 us/request N={hi} / N={small}",
                "flat (<= 1.25x)",
                (
                    a["us_per_request"]["median"] / b["us_per_request"]["median"],
                    a["us_per_request"]["min"] / b["us_per_request"]["min"],
                ),
                lambda v: v <= 1.25,
            )
            w = a.get("window_us")
            if w:
                add(
                    f"W1 last/first 10% of one run, N={hi}",
                    "flat (<= 1.25x)",
                    (w["last_over_first"], w["last_over_first"]),
                    lambda v: v <= 1.25,
                )
            v = cells.get(("vcrpy", hi))
            if v:
                vrep = v.get("extrapolated_replay_s") or (
                    v["replay_s"]["median"] if "replay_s" in v else None
                )
                vmin = v.get("extrapolated_replay_s") or (
                    v["replay_s"]["min"] if "replay_s" in v else None
                )
                if vrep:
                    tag = " (vcrpy extrapolated)" if v.get("status") != "ok" else ""
                    add(
                        f"W1 replay N={hi}: vcrpy / agentreplay{tag}",
                        ">= 10x",
                        (vrep / a["replay_s"]["median"], vmin / a["replay_s"]["min"]),
                        lambda v: v >= 10,
                        ".0f",
                    )
                    if v.get("load_s"):
                        add(
                            f"W1 load+replay N={hi}: vcrpy / agentreplay{tag}",
                            ">= 10x",
                            (
                                (vrep + v["load_s"]["median"])
                                / (a["replay_s"]["median"] + a["load_s"]["median"]),
                                (vmin + v["load_s"]["min"])
                                / (a["replay_s"]["min"] + a["load_s"]["min"]),
                            ),
                            lambda v: v >= 10,
                            ".0f",
                        )
            for n in sorted(ours):
                v = cells.get(("vcrpy", n))
                if n >= 1000 and v and v.get("load_s"):
                    add(
                        f"W1 load N={n}: vcrpy / agentreplay",
                        ">= 3x",
                        ratio(v, ours[n], "load_s"),
                        lambda v: v >= 3,
                        ".1f",
                    )
    st = results["workloads"].get("STREAMS")
    if st:
        ok = [c for c in st["cells"] if c.get("status") == "ok" and c["world"] == "native"]
        by = {(c["workload"], c["consumer"], c["k"], c["contender"]): c for c in ok}
        for (wl, consumer, k, name), c in sorted(by.items()):
            if name != "agentreplay" or consumer not in (
                "anthropic-sdk",
                "openai-sdk",
                "anthropic-helper",
            ):
                continue
            m = by.get((wl, consumer, k, "mocktransport"))
            if m:
                add(
                    f"{wl} {consumer} K={k}: total / mocktransport",
                    "<= 1.3x",
                    ratio(c, m, "total_s"),
                    lambda v: v <= 1.3,
                )
        for wl, consumer in {(w, c) for (w, c, _, n) in by if n == "agentreplay"}:
            ks = sorted(k for (w, cc, k, n) in by if (w, cc, n) == (wl, consumer, "agentreplay"))
            if len(ks) > 1:
                a, b = (
                    by[(wl, consumer, ks[-1], "agentreplay")],
                    by[(wl, consumer, ks[0], "agentreplay")],
                )
                # flat means: within 2x, or within 1 ms (the first event of any stream costs that much)
                add(
                    f"{wl} {consumer} ttfe K={ks[-1]} / K={ks[0]}",
                    "flat (<= 2x or +1 ms)",
                    ratio(a, b, "ttfe_s"),
                    lambda v, a=a, b=b: (
                        v <= 2 or a["ttfe_s"]["median"] - b["ttfe_s"]["median"] < 1e-3
                    ),
                )
    w4 = results["workloads"].get("W4")
    if w4:
        ok4 = {c["contender"]: c for c in w4["cells"] if c.get("status") == "ok"}
        a = ok4.get("agentreplay")
        if a and "x_mocktransport_wall" in a:
            add(
                "W4 wall: agentreplay / mocktransport",
                "<= 1.2x",
                (a["x_mocktransport_wall"], a["x_mocktransport_wall_from_min"]),
                lambda v: v <= 1.2,
            )
            if "x_mocktransport_per_test" in a:
                add(
                    "W4 per-test: agentreplay / mocktransport",
                    "<= 1.2x",
                    (a["x_mocktransport_per_test"], a["x_mocktransport_per_test_from_min"]),
                    lambda v: v <= 1.2,
                )
        a = ok4.get("agentreplay" + SDK_SUFFIX)
        if a and "x_mocktransport_wall" in a:
            add(
                "W4 anthropic.Anthropic() per test: wall / mocktransport",
                "<= 1.5x",
                (a["x_mocktransport_wall"], a["x_mocktransport_wall_from_min"]),
                lambda v: v <= 1.5,
            )
            if "x_same_sdk_mock_wall" in a:
                add(
                    "W4 anthropic.Anthropic() per test: wall / mock-anthropic",
                    "<= 1.5x",
                    (a["x_same_sdk_mock_wall"], a["x_same_sdk_mock_wall_from_min"]),
                    lambda v: v <= 1.5,
                )
    return rows


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    cols = (
        [
            [str(h)] + [("" if v is None else str(v)) for v in col]
            for h, col in zip(headers, zip(*rows, strict=True), strict=True)
        ]
        if rows
        else [[h] for h in headers]
    )
    widths = [max(len(x) for x in col) for col in cols]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    for r in rows:
        lines.append(
            "  ".join(
                ("" if v is None else str(v)).rjust(w) if i else str(v).ljust(w)
                for i, (v, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    return "\n".join(lines)


def _f(x: float | None, fmt: str) -> str | None:
    return None if x is None else format(x, fmt)


def _portable(text: str, workdir: Path) -> str:
    """Results without this machine's paths: the scratch folder and the interpreter
    are named, not spelled out (the JSON is committed)."""
    for path, name in ((str(workdir), "<workdir>"), (sys.executable, "python")):
        text = text.replace(json.dumps(path)[1:-1], name)
    return text


W4_COLUMNS = [
    "variant",
    "tests",
    "wall s [min]",
    "pytest s",
    "per-test ms [min]",
    "beyond ctor ms [min]",
    "x mock wall [min]",
    "x sdk mock [min]",
]


def problems(results: dict) -> list[str]:
    """What went wrong in a run: workers that died, cells that raised. A run with any of
    them exits non-zero (the numbers it did get are still written and reported)."""
    out = []
    subject = results.get("contenders", {}).get("agentreplay")
    if subject and subject.get("skipped"):
        out.append(f"agentreplay, the subject of the benchmark, was not run: {subject['skipped']}")
    for name, w in results["workloads"].items():
        errors = ([w["error"]] if w.get("error") else []) + list(w.get("errors") or [])
        out += [f"{name}: {e}" for e in errors]
        for c in w.get("cells", []):
            if c.get("status") == "error":
                where = ", ".join(
                    f"{k}={c[k]}" for k in ("n", "k", "consumer", "world") if c.get(k) is not None
                )
                what = f"{c.get('workload', name)} {c.get('contender', c.get('server', '?'))}"
                out.append(f"{what}{f' ({where})' if where else ''}: {c.get('reason', '')}")
    return out


def render_report(results: dict) -> str:
    env = results["environment"]
    out = [
        f"peerbench ({results['mode']}) -- python {env['python']}, {env['cpu_count']} cpus, "
        f"elapsed {results['elapsed_s']:.0f} s",
        "versions: " + ", ".join(f"{k} {v}" for k, v in env["packages"].items() if v),
        "times: median of the repeats [min]; 'x ...' = ratio of medians to a reference measured in the same "
        "process",
    ]
    w1 = results["workloads"].get("W1")
    if w1:
        rows = []
        order = {c.name: i for i, c in enumerate(all_contenders())}
        for c in sorted(w1["cells"], key=lambda c: (c["n"], order.get(c["contender"], 99))):
            if c.get("status") in ("ok", "capped"):
                w = c.get("window_us") or {}
                capped = c["status"] == "capped"
                rows.append(
                    [
                        c["contender"],
                        c["n"],
                        c["reps"],
                        _f(c["client_ctor_s"]["median"] * 1e3, ".1f"),
                        _f(c["load_s"]["median"] * 1e3, ".1f"),
                        (
                            f"~{c['extrapolated_replay_s']:.1f} (extrapolated)"
                            if capped
                            else _f(c["replay_s"]["median"], ".4f")
                            + f" [{c['replay_s']['min']:.4f}]"
                        ),
                        (
                            f"~{c['extrapolated_us_per_request']:.0f}"
                            if capped
                            else _f(c["us_per_request"]["median"], ".1f")
                        ),
                        (
                            f"capped: {c['requests_done']}/{c['n']} in {c['replay_s']['median']:.0f} s"
                            if capped
                            else "all"
                        )
                        + ("" if c.get("verified", True) else " WRONG RESPONSES"),
                        _f(w.get("last_over_first"), ".1f"),
                        _f(c.get("growth_exponent_vs_prev_n"), ".2f"),
                        _f(c.get("x_mocktransport_replay"), ".0f"),
                    ]
                )
            else:
                ex = c.get("extrapolated_replay_s")
                rows.append(
                    [
                        c["contender"],
                        c["n"],
                        0,
                        None,
                        None,
                        f"~{ex:.0f} (extrapolated)" if ex else None,
                        f"~{ex / c['n'] * 1e6:.0f}" if ex else None,
                        "not run"
                        if c["status"] == "skipped"
                        else f"{c['status']}: {c.get('reason', '')[:60]}",
                        None,
                        None,
                        None,
                    ]
                )
        out += [
            "",
            "W1  cassette load + in-order replay of N small JSON interactions (httpx.Client, POST /v1/messages)",
            "    ctor = building the client (default transport => SSL context); load = rest of entering the",
            "    session (vcrpy: YAML cassette parse); last/first = per-request cost in the last vs first 10% of",
            "    one run; growth exp = d log(replay) / d log(N) vs the previous N (1 = linear, 2 = quadratic)",
            _table(
                [
                    "contender",
                    "N",
                    "reps",
                    "ctor ms",
                    "load ms",
                    "replay s [min]",
                    "us/req",
                    "requests",
                    "last/first",
                    "growth exp",
                    "x mock",
                ],
                rows,
            ),
        ]
    st = results["workloads"].get("STREAMS")
    if st:
        for wl, title in (("W2", "Anthropic Messages SSE"), ("W3", "OpenAI Chat Completions SSE")):
            rows = []
            for c in st["cells"]:
                if c["workload"] != wl:
                    continue
                server = c["contender"] + (" (alias)" if c["world"] == "alias" else "")
                if c.get("status") != "ok":
                    rows.append(
                        [
                            c.get("consumer"),
                            server,
                            c["k"],
                            "ERROR: " + c.get("reason", "")[:70],
                            None,
                            None,
                            None,
                            None,
                            None,
                            None,
                            None,
                            None,
                        ]
                    )
                    continue
                rows.append(
                    [
                        c["consumer"],
                        server,
                        c["k"],
                        _f(c["total_s"]["median"] * 1e3, ".1f")
                        + f" [{c['total_s']['min'] * 1e3:.1f}]",
                        _f(c["mb_per_s"], ".1f"),
                        _f(c["items_per_s"] / 1e3, ".1f"),
                        _f(c["ttfe_s"]["median"] * 1e3, ".2f"),
                        _f(c["setup_s"]["median"] * 1e3, ".1f"),
                        _f(c["client_ctor_s"]["median"] * 1e3, ".1f"),
                        c.get("chunks", ""),
                        _f(c.get("x_floor"), ".1f"),
                        _f(c.get("x_mocktransport_same_process"), ".2f"),
                    ]
                )
            frows = [
                [
                    f["floor"] + (" (alias)" if f["world"] == "alias" else ""),
                    f["k"],
                    f["bytes"],
                    f["items"],
                    _f(f["total_s"]["median"] * 1e3, ".2f") + f" [{f['total_s']['min'] * 1e3:.2f}]",
                    _f(f["mb_per_s"], ".1f"),
                    _f(f["items_per_s"] / 1e3, ".0f"),
                ]
                for f in st["floors"]
                if f["workload"] == wl
            ]
            if rows:
                out += [
                    "",
                    f"{wl}  {title} replay: consumer x server x K text deltas",
                    "    total = request..last item; ttfe = request..first item (first chunk for raw-bytes);",
                    "    setup = entering the server's context (vcrpy: cassette load) without ctor (client",
                    "    construction); chunks = chunks the transport delivered (1 = whole body at once);",
                    "    x floor = vs floor:lines (raw) or floor:lines+json (SDKs); (alias) = measured in the",
                    "    httpx2.alias_httpx() process, x mock there is vs that process' own mocktransport",
                    _table(
                        [
                            "consumer",
                            "server",
                            "K",
                            "total ms [min]",
                            "MB/s",
                            "k items/s",
                            "ttfe ms",
                            "setup ms",
                            "ctor ms",
                            "chunks",
                            "x floor",
                            "x mock",
                        ],
                        rows,
                    ),
                ]
            if frows:
                out += [
                    "",
                    f"{wl}  physical floor: body already in memory, pure Python line split (+ json.loads)",
                    _table(
                        ["floor", "K", "bytes", "data lines", "ms [min]", "MB/s", "k lines/s"],
                        frows,
                    ),
                ]
        rows = []
        for c in st["cells"]:
            if c["workload"] == "W6" and c.get("status") == "ok":
                rows.append(
                    [
                        c["contender"],
                        c["k"],
                        _f(c["pace_s"] * 1e3, ".1f"),
                        _f(c["upstream_duration_s"] * 1e3, ".0f"),
                        _f(c["ttfe_s"]["median"] * 1e3, ".1f")
                        + f" [{c['ttfe_s']['min'] * 1e3:.1f}]",
                        _f(c["total_s"]["median"] * 1e3, ".1f"),
                    ]
                )
            elif c["workload"] == "W6":
                rows.append(
                    [c["contender"], c["k"], None, None, "ERROR: " + c.get("reason", "")[:60], None]
                )
        if rows:
            out += [
                "",
                "W6  (extra) recording a paced upstream stream (raw-lines): when does the client see event 1?",
                _table(
                    ["recorder", "events", "pace ms", "upstream ms", "ttfe ms [min]", "total ms"],
                    rows,
                ),
            ]
        cc = st.get("client_construction_s")
        if cc:
            out += [
                "",
                "client construction, median of 7 (why 'ctor ms' matters): "
                + "; ".join(f"{k} {v['median'] * 1e3:.2f} ms" for k, v in cc.items()),
            ]
        for e in st.get("errors", []):
            out.append("stream worker error: " + e)
        for why in st.get("skipped", []):
            out.append("not run, its library missing: " + why)
    w4 = results["workloads"].get("W4")
    if w4:
        rows = []
        for c in w4["cells"]:
            if c.get("status") != "ok":
                # as many columns as the headers below (W4_COLUMNS), the message in the third
                rows.append(
                    [c["contender"], None, "ERROR: " + c.get("reason", "")[:80]]
                    + [None] * (len(W4_COLUMNS) - 3)
                )
                continue

            def both(key: str, c: dict = c) -> str | None:
                if c.get(key) is None:
                    return None
                return f"{c[key]:.2f} [{c[key + '_from_min']:.2f}]"

            rows.append(
                [
                    c["contender"],
                    c["tests"],
                    _f(c["wall_s"]["median"], ".3f") + f" [{c['wall_s']['min']:.3f}]",
                    _f(
                        c["pytest_reported_s"]["median"] if c.get("pytest_reported_s") else None,
                        ".2f",
                    ),
                    both("per_test_ms"),
                    both("per_test_ms_beyond_client_ctor"),
                    both("x_mocktransport_wall"),
                    both("x_same_sdk_mock_wall"),
                ]
            )
        out += [
            "",
            "W4  pytest -q -p no:cacheprovider, one replayed POST per test (subprocess wall time)",
            "    per-test = (wall - wall of the 1-test startup run) / tests, from medians [from mins];",
            "    beyond ctor = per-test minus the mock+client-ctor reference, i.e. what the tool costs beyond",
            "    building one default httpx.Client per test (*-anthropic rows: beyond mock+ctor-anthropic,",
            "    and per-test from the startup run that also imports anthropic);",
            "    x mock wall = wall / mocktransport wall; x sdk mock = wall / mock-anthropic wall (same SDK",
            "    call per test, MockTransport http_client): issue 10's ratio",
            _table(W4_COLUMNS, rows),
        ]
    w5 = results["workloads"].get("W5")
    if w5 and w5.get("cells"):
        rows = []
        for c in w5["cells"]:
            if c["part"] != "scripted" or c.get("status", "ok") != "ok":
                continue
            rows.append(
                [
                    c["consumer"],
                    "SSE" if c["streaming"] else "JSON",
                    c["server"],
                    c["calls"],
                    _f(c["total_s"]["median"] * 1e3, ".1f") + f" [{c['total_s']['min'] * 1e3:.1f}]",
                    _f(c["calls_per_s"], ".0f"),
                    _f(c["total_s"]["median"] / c["calls"] * 1e6, ".0f"),
                    (
                        f"{c['x_mocktransport']:.2f} [{c['x_mocktransport_min']:.2f}]"
                        if "x_mocktransport" in c
                        else None
                    ),
                ]
            )
        out += [
            "",
            "W5  fake-model throughput: N scripted calls (client built inside the scope, as in a test);",
            "    mocktransport = the same client on an httpx2.MockTransport replaying the fake's own bytes",
            _table(
                [
                    "consumer",
                    "body",
                    "server",
                    "calls",
                    "total ms [min]",
                    "calls/s",
                    "us/call",
                    "x mock [min]",
                ],
                rows,
            ),
        ]
        rows = [
            [
                c["server"],
                c["examples"],
                _f(c["total_s"]["median"], ".3f") + f" [{c['total_s']['min']:.3f}]",
                _f(c["examples_per_s"], ".1f"),
                _f(c["total_s"]["median"] / c["examples"] * 1e3, ".2f"),
                (
                    f"{c['x_mocktransport']:.2f} [{c['x_mocktransport_min']:.2f}]"
                    if "x_mocktransport" in c
                    else None
                ),
            ]
            for c in w5["cells"]
            if c["part"] == "fault-plans" and c.get("status", "ok") == "ok"
        ]
        out += [
            "",
            "W5  hypothesis fault plans on a small agent loop (anthropic SDK, messages.stream, tool call +",
            "    answer, retries): agentreplay = a fresh FakeModel scripted per example; mocktransport = a",
            "    hand-rolled fault-injecting MockTransport; hypothesis only = same strategy, empty body",
            _table(
                ["server", "examples", "total s [min]", "examples/s", "ms/example", "x mock [min]"],
                rows,
            ),
        ]
    targets = target_summary(results)
    if targets:
        out += [
            "",
            "Targets (pytest_agentreplay): value from medians [from mins]",
            _table(["target", "goal", "measured", "met"], targets),
        ]
    cal = results.get("calibration") or {}
    if cal:
        out += [
            "",
            "noise probe (fixed CPU loop x7 at the end of each worker; 1.00 = quiet): "
            + "; ".join(f"{k} max/min {v['spread_max_over_min']:.2f}" for k, v in cal.items() if v),
        ]
    failed = problems(results)
    if failed:
        out += ["", f"PROBLEMS ({len(failed)}): these cells or workers did not measure anything"]
        out += [f"  - {p}" for p in failed]
    la0, la1 = env.get("loadavg_at_start"), env.get("loadavg_at_end")
    if la0 and la1:
        out.append(f"load average (1 min) at start {la0[0]:.2f}, at end {la1[0]:.2f}")
    return "\n".join(out)


# ---------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Workloads: "
        + ", ".join(
            (
                "W1 scaling",
                "W2 anthropic SSE",
                "W3 openai SSE",
                "W4 pytest overhead",
                "W5 fake-model throughput",
                "W6 record ttfe",
            )
        ),
    )
    ap.add_argument(
        "--quick", action="store_true", help="smoke run (< 60 s): fewer sizes and repeats"
    )
    ap.add_argument("--only", help="comma list of workloads to run, e.g. W1,W4 (default: all)")
    ap.add_argument("--contenders", help="comma list of contenders (default: all available)")
    ap.add_argument("--repeats", type=int, help="override repeats per cell")
    ap.add_argument(
        "--out", help="JSON output path (default: bench/results/peers-baseline[-quick].json)"
    )
    ap.add_argument(
        "--workdir",
        help="scratch dir for cassettes/projects (default: a fresh temp dir under "
        "$PEERBENCH_SCRATCH, else the system temp)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the temp workdir")
    ap.add_argument("--list", action="store_true", help="list contenders and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.list:
        for c in all_contenders():
            why = c.unavailable_reason()
            print(
                f"{c.name:<22} {','.join(sorted(c.workloads)):<28} {c.description}"
                + (f"   [unavailable: {why}]" if why else "")
                + ("" if c.in_full else "   [run by name only]")
                + ("" if c.in_quick or not c.in_full else "   [not in --quick]")
            )
        return 0
    if args.worker:
        spec = json.loads(Path(args.spec).read_text())
        workdir = Path(args.workdir)
        fn = {"scaling": run_scaling_worker, "stream": run_stream_worker, "fake": run_fake_worker}[
            args.worker
        ]
        res = fn(spec, workdir)
        res["world"] = WORLD
        Path(args.result).write_text(json.dumps(res, default=str))
        return 0
    return orchestrate(args)


if __name__ == "__main__":
    sys.exit(main())
