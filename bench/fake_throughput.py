"""W5 of ``bench/peers.py``: fake-model throughput.

Two questions, each against a floor measured in the same process:

* **Scripted calls per second.** A :class:`~pytest_agentreplay.FakeModel` with a
  script of N replies serves N calls (JSON and streamed) to a raw ``httpx2``
  client and to the real ``anthropic`` and ``openai`` SDKs, which build their own
  default clients inside the fake's scope (as a test does). The floor,
  ``mocktransport``, is the same client handed an ``httpx2.MockTransport`` that
  returns the *same bytes* pre-rendered once (one chunk per SSE event): what a
  hand-written fake costs when it does not render anything per call.
* **Hypothesis fault-plan examples per second.** A small agent loop (one tool
  call, then a final answer; retry a failed call up to three times) runs under
  ``@given(fault_plans())``: every example scripts a fresh fake with the plan's
  faults before the two good replies and checks that the loop still ends with the
  final answer and that the fake logged one failed call per fault. References:
  ``hypothesis only`` (the same strategy, an empty test body: the floor of any
  property-based test) and ``mocktransport`` (the same loop and faults served by a
  hand-rolled ``MockTransport`` handler replaying pre-rendered bytes, raising the
  same ``httpx2`` errors).

``fault_plans()`` is a tiny local strategy; ``pytest_agentreplay.strategies`` is
used instead when it exists and has one.

Run alone: ``python bench/fake_throughput.py [--quick]`` (prints JSON).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import openai

from pytest_agentreplay import FakeModel, Fault, Reply, Usage

now = time.perf_counter

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
OPENAI_URL = "https://api.openai.com/v1/chat/completions"
KEY = "sk-bench-not-a-real-key"
TEXT = (
    "The forecast for Leeds is light rain in the morning, clearing by noon, "
    "with a high of fourteen degrees and a gentle westerly breeze."
)
ANTHROPIC_ARGS: dict[str, Any] = {
    "model": "claude-bench",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": "What is the weather in Leeds?"}],
}
OPENAI_ARGS: dict[str, Any] = {
    "model": "gpt-bench",
    "messages": [{"role": "user", "content": "What is the weather in Leeds?"}],
}
USAGE = Usage(input_tokens=12, output_tokens=30)


# --- scripted calls ----------------------------------------------------------------


def _anthropic(streaming: bool) -> Callable[[Any], None]:
    def call(client: anthropic.Anthropic) -> None:
        if streaming:
            text = "".join(
                e.delta.text
                for e in client.messages.create(**ANTHROPIC_ARGS, stream=True)
                if e.type == "content_block_delta"
            )
        else:
            text = client.messages.create(**ANTHROPIC_ARGS).content[0].text
        assert text == TEXT, text

    return call


def _openai(streaming: bool) -> Callable[[Any], None]:
    def call(client: openai.OpenAI) -> None:
        if streaming:
            text = "".join(
                c.choices[0].delta.content or ""
                for c in client.chat.completions.create(**OPENAI_ARGS, stream=True)
                if c.choices
            )
        else:
            text = client.chat.completions.create(**OPENAI_ARGS).choices[0].message.content
        assert text == TEXT, text

    return call


def _raw(streaming: bool) -> Callable[[Any], None]:
    body = {**ANTHROPIC_ARGS, "stream": streaming}

    def call(client: httpx2.Client) -> None:
        if streaming:
            with client.stream("POST", ANTHROPIC_URL, json=body) as r:
                n = sum(1 for line in r.iter_lines() if line.startswith("data:"))
            assert n > 5, n
        else:
            r = client.post(ANTHROPIC_URL, json=body)
            assert r.json()["content"][0]["text"] == TEXT

    return call


# consumer -> (client factory given an optional transport, the call)
def _consumers() -> dict[str, tuple[Callable[[Any], Any], Callable[[bool], Callable[[Any], None]]]]:
    def sdk_a(transport: Any) -> Any:
        http = None if transport is None else httpx2.Client(transport=transport)
        return anthropic.Anthropic(api_key=KEY, max_retries=0, http_client=http)

    def sdk_o(transport: Any) -> Any:
        http = None if transport is None else httpx2.Client(transport=transport)
        return openai.OpenAI(api_key=KEY, max_retries=0, http_client=http)

    def raw(transport: Any) -> Any:
        return httpx2.Client() if transport is None else httpx2.Client(transport=transport)

    return {
        "httpx2-raw": (raw, _raw),
        "anthropic-sdk": (sdk_a, _anthropic),
        "openai-sdk": (sdk_o, _openai),
    }


def _captured(consumer: str, streaming: bool) -> tuple[int, list[tuple[str, str]], list[bytes]]:
    """The exact response (status, headers, body chunks) the fake sends for one call."""
    chunks: list[bytes] = []
    headers: list[tuple[str, str]] = []
    url = OPENAI_URL if consumer == "openai-sdk" else ANTHROPIC_URL
    args = OPENAI_ARGS if consumer == "openai-sdk" else ANTHROPIC_ARGS
    body = {**args, "stream": streaming}
    if consumer == "openai-sdk" and streaming:
        body["stream_options"] = {"include_usage": True}
    with FakeModel(Reply.text(TEXT, usage=USAGE)), httpx2.Client() as client:  # noqa: SIM117
        with client.stream("POST", url, json=body) as r:
            headers = [(k, v) for k, v in r.headers.multi_items() if k != "content-length"]
            chunks = list(r.iter_raw())
            status = r.status_code
    return status, headers, chunks


def _mock_transport(status: int, headers: list[tuple[str, str]], chunks: list[bytes]) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, headers=headers, content=iter(chunks))

    return httpx2.MockTransport(handler)


def scripted_cell(consumer: str, streaming: bool, calls: int, server: str) -> float:
    """Seconds for ``calls`` calls: script (or transport) set up, client built, calls made."""
    make_client, make_call = _consumers()[consumer]
    call = make_call(streaming)
    if server == "mocktransport":
        transport = _mock_transport(*_captured(consumer, streaming))
        gc.collect()
        t0 = now()
        with make_client(transport) as client:
            for _ in range(calls):
                call(client)
        return now() - t0
    gc.collect()
    t0 = now()
    with FakeModel(*[Reply.text(TEXT, usage=USAGE)] * calls), make_client(None) as client:
        for _ in range(calls):
            call(client)
    return now() - t0


# --- fault plans on an agent loop ----------------------------------------------------

RETRIES = 4  # attempts per model call: survives the at most 3 faults a plan holds
MAX_FAULTS = 3
TOOL = [{"name": "weather", "description": "x", "input_schema": {"type": "object"}}]
TOOL_REPLY = Reply.tool_call("weather", {"city": "Leeds"}, id="toolu_bench", usage=USAGE)
# Faults an agent is meant to survive by retrying (no 400/401, no empty answer).
KINDS = ("http", "cut", "timeout", "error_event")
STATUSES = (500, 429, 529, 503)


def _local_faults() -> Any:
    from hypothesis import strategies as st

    after = st.integers(0, 12)
    return st.one_of(
        st.builds(Fault.http, st.sampled_from(STATUSES)),
        st.builds(Fault.cut, after_events=after),
        st.builds(Fault.timeout, after_events=st.none() | after),
        st.builds(Fault.error_event, after_events=after),
    )


def fault_plans() -> tuple[str, Any]:
    """Where the plans come from, and a strategy of scripts: the calls after the tool
    call, each a :class:`Reply` (a faulted one fails), ending with the answer.

    Uses ``pytest_agentreplay.strategies.fault_plans`` when the plugin has it; else a
    tiny local strategy of the same shape (up to three faults, then one answer).
    """
    from hypothesis import strategies as st

    try:
        from pytest_agentreplay import strategies as ours
    except ImportError:
        ours = None  # type: ignore[assignment]
    if ours is not None and hasattr(ours, "fault_plans"):
        plans = ours.fault_plans(
            replies=ours.replies(tool_calls=False, thinking=False),
            faults=ours.faults(kinds=KINDS, statuses=STATUSES),
            max_faults=MAX_FAULTS,
        )
        return "pytest_agentreplay.strategies.fault_plans", plans.map(lambda p: p.script())
    answers = st.builds(Reply.text, st.text(min_size=1, max_size=40), usage=st.just(USAGE))
    return "local", st.builds(
        lambda faults, answer: [*(Reply.failure(f) for f in faults), answer],
        st.lists(_local_faults(), max_size=MAX_FAULTS),
        answers,
    )


def agent_loop(client: anthropic.Anthropic) -> str:
    """Ask, run the tool the model asks for, ask again; retry failed calls."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Leeds?"}]
    for _ in range(4):
        message = _call_with_retries(client, messages)
        tool = next((b for b in message.content if b.type == "tool_use"), None)
        if tool is None:
            return "".join(b.text for b in message.content if b.type == "text")
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in message.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool.id, "content": "rain"}],
            },
        ]
    raise AssertionError("the agent never finished")


def _call_with_retries(client: anthropic.Anthropic, messages: list[dict[str, Any]]) -> Any:
    for attempt in range(RETRIES):
        try:
            with client.messages.stream(
                model="claude-bench", max_tokens=256, messages=messages, tools=TOOL
            ) as stream:
                return stream.get_final_message()
        except (anthropic.APIError, httpx2.HTTPError):
            if attempt == RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def _fake_example(script: list[Reply]) -> None:
    with FakeModel(TOOL_REPLY, *script) as fake:
        client = anthropic.Anthropic(api_key=KEY, max_retries=0)
        assert agent_loop(client) == script[-1].text_content
        client.close()
    failed = [c for c in fake.log if c.outcome != "completed"]
    assert len(failed) == len(script) - 1, [c.outcome for c in fake.log]


_ERROR_BODY = b'{"type":"error","error":{"type":"api_error","message":"x"}}'
_ERROR_EVENT = (
    b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"x"}}\n\n'
)


class _MockScript:
    """A hand-rolled fault-injecting fake for the same loop: the two replies' bytes
    captured from the fake once (whatever the plan's answer says, the mock always
    answers :data:`TEXT`), faults raised as the ``httpx2`` errors a connection raises."""

    def __init__(self) -> None:
        self.bodies = [self._capture(r) for r in (TOOL_REPLY, Reply.text(TEXT, usage=USAGE))]
        self.queue: list[Fault | None] = []
        self.failed = 0

    @staticmethod
    def _capture(reply: Reply) -> tuple[list[tuple[str, str]], list[bytes]]:
        body = {**ANTHROPIC_ARGS, "stream": True}
        with (
            FakeModel(reply),
            httpx2.Client() as client,
            client.stream("POST", ANTHROPIC_URL, json=body) as r,
        ):
            return list(r.headers.multi_items()), list(r.iter_raw())

    def load(self, script: list[Reply]) -> None:
        self.queue = [None, *(r.fault for r in script[:-1]), None]
        self.failed = 0

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        answer = len(self.queue) == 1
        fault = self.queue.pop(0)
        headers, chunks = self.bodies[1 if answer else 0]
        if fault is None:
            return httpx2.Response(200, headers=headers, content=iter(chunks))
        self.failed += 1
        if fault.kind == "http":
            json_headers = {"content-type": "application/json"}
            return httpx2.Response(fault.status or 500, headers=json_headers, content=_ERROR_BODY)
        if fault.kind == "timeout" and fault.after_events is None:
            raise httpx2.ReadTimeout("The read operation timed out", request=request)
        k = fault.after_events or 0
        if fault.kind == "error_event":
            return httpx2.Response(200, headers=headers, content=iter([*chunks[:k], _ERROR_EVENT]))
        error = (
            httpx2.ReadTimeout("The read operation timed out")
            if fault.kind == "timeout"
            else httpx2.RemoteProtocolError("peer closed connection")
        )
        return httpx2.Response(200, headers=headers, content=_fail_after(chunks[:k], error))


def _fail_after(chunks: list[bytes], error: Exception) -> Iterator[bytes]:
    yield from chunks
    raise error


def fault_plan_cell(examples: int, server: str, mock: _MockScript | None = None) -> float:
    """Seconds for ``examples`` hypothesis examples of the agent loop under ``server``."""
    from hypothesis import HealthCheck, Phase, given, settings

    _, plans = fault_plans()
    if server == "agentreplay":
        body: Callable[[list[Reply]], None] = _fake_example
    elif server == "mocktransport":
        assert mock is not None
        http = httpx2.Client(transport=httpx2.MockTransport(mock.handler))
        client = anthropic.Anthropic(api_key=KEY, max_retries=0, http_client=http)

        def body(script: list[Reply]) -> None:
            mock.load(script)
            assert agent_loop(client) == TEXT
            assert mock.failed == len(script) - 1
    else:

        def body(script: list[Reply]) -> None:
            pass

    seen = [0]

    @settings(
        max_examples=examples,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(plans)
    def run(script: list[Reply]) -> None:
        seen[0] += 1
        body(script)

    gc.collect()
    t0 = now()
    run()
    elapsed = now() - t0
    return elapsed / max(seen[0], 1) * examples


# --- the worker ----------------------------------------------------------------------


def _summary(xs: list[float]) -> dict[str, Any]:
    return {
        "min": min(xs),
        "median": statistics.median(xs),
        "max": max(xs),
        "n": len(xs),
        "samples": [round(x, 9) for x in xs],
    }


def run(cfg: dict[str, Any], log: Callable[[str], None] = print) -> dict[str, Any]:
    """All W5 cells; ``cfg`` holds ``w5_calls``, ``w5_examples``, ``w5_reps`` (scripted
    cells) and ``w5_fault_reps`` (fault-plan cells)."""
    calls, examples, reps = cfg["w5_calls"], cfg["w5_examples"], cfg["w5_reps"]
    cells: list[dict[str, Any]] = []
    servers = ["agentreplay", "mocktransport"]
    for consumer in _consumers():
        for streaming in (False, True):
            for s in servers:  # warm-up, untimed: one whole cell each
                scripted_cell(consumer, streaming, calls, s)
            samples: dict[str, list[float]] = {s: [] for s in servers}
            for r in range(reps):
                for s in servers[r % 2 :] + servers[: r % 2]:
                    samples[s].append(scripted_cell(consumer, streaming, calls, s))
            for s in servers:
                t = _summary(samples[s])
                cells.append(
                    {
                        "workload": "W5",
                        "part": "scripted",
                        "consumer": consumer,
                        "streaming": streaming,
                        "server": s,
                        "calls": calls,
                        "total_s": t,
                        "calls_per_s": calls / t["median"],
                        "calls_per_s_best": calls / t["min"],
                    }
                )
            a, m = (samples[s] for s in servers)
            cells[-2]["x_mocktransport"] = statistics.median(a) / statistics.median(m)
            cells[-2]["x_mocktransport_min"] = min(a) / min(m)
            log(
                f"  [W5] scripted {consumer:<13} {'SSE ' if streaming else 'JSON'} "
                f"{cells[-2]['calls_per_s']:8.0f} calls/s (mock {cells[-1]['calls_per_s']:8.0f}), "
                f"x{cells[-2]['x_mocktransport']:.2f}"
            )
    mock = _MockScript()
    source, _ = fault_plans()
    log(f"  [W5] fault plans from {source}")
    fault_servers = ["agentreplay", "mocktransport", "hypothesis only"]
    fault_plan_cell(5, "agentreplay")  # warm-up
    samples = {s: [] for s in fault_servers}
    for r in range(cfg.get("w5_fault_reps", reps)):
        for s in fault_servers[r % 3 :] + fault_servers[: r % 3]:
            samples[s].append(fault_plan_cell(examples, s, mock))
    for s in fault_servers:
        t = _summary(samples[s])
        cell = {
            "workload": "W5",
            "part": "fault-plans",
            "strategy": source,
            "server": s,
            "examples": examples,
            "total_s": t,
            "examples_per_s": examples / t["median"],
            "examples_per_s_best": examples / t["min"],
        }
        if s != "mocktransport":
            cell["x_mocktransport"] = t["median"] / statistics.median(samples["mocktransport"])
            cell["x_mocktransport_min"] = t["min"] / min(samples["mocktransport"])
        cells.append(cell)
        log(f"  [W5] fault plans {s:<16} {cell['examples_per_s']:8.1f} examples/s")
    return {"cells": cells}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cfg = (
        {"w5_calls": 40, "w5_examples": 30, "w5_reps": 3, "w5_fault_reps": 3}
        if args.quick
        else {"w5_calls": 200, "w5_examples": 150, "w5_reps": 21, "w5_fault_reps": 5}
    )
    print(json.dumps(run(cfg), indent=1))


if __name__ == "__main__":
    main()
