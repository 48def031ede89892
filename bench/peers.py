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
This file is the entry point: the world bootstrap and the command line. The harness
and the workloads are the modules of ``bench/peerbench/`` (one per workload); the
place to plug in the new plugin is ``AgentReplayContender`` in
``peerbench/agentreplay.py`` (search for ">>> HOOK").

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

if os.environ.get("PEERBENCH_WORLD", "native") == "alias":
    import httpx2 as _httpx2_for_alias

    _httpx2_for_alias.alias_httpx()

import argparse
import json
from pathlib import Path

# bench/ is on the path when this runs as a script; the tests load it by its path.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from peerbench.config import WORLD
from peerbench.orchestrate import orchestrate
from peerbench.registry import all_contenders
from peerbench.report import problems, render_report
from peerbench.w1_scaling import run_scaling_worker
from peerbench.w5_fakes import run_fake_worker
from peerbench.w23_streams import run_stream_worker

__all__ = ["main", "problems", "render_report"]


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
