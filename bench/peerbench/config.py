"""What a run is: the full and quick configurations, the fake host every request goes
to, and which world (``native`` or ``alias``) this process is."""

from __future__ import annotations

import os
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # bench/
ENTRY = HERE / "peers.py"  # what the workers run

WORLD = os.environ.get("PEERBENCH_WORLD", "native")
"""Which world this process is: ``native``, or ``alias`` (httpx2.alias_httpx() ran first,
in peers.py, before anything imported httpx)."""
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
    # A scripted cell takes a few ms and its ratio is held to a few per cent: 21 repeats
    # (5 before the sixth round of issue 29), after one untimed cell of each server.
    "w5_reps": 21,
    "w5_fault_reps": 5,  # a fault-plan cell is about 0.3 s
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
    "w5_fault_reps": 1,
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
