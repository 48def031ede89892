"""bench/peers.py keeps working: it runs end to end, and a run where something breaks
says what broke and exits non-zero instead of crashing in its report or passing."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
# The committed results of full runs (quick runs write git-ignored *-quick.json files).
STORED = sorted(p for p in BENCH.glob("results/peers*.json") if not p.name.endswith("-quick.json"))
# What names a cell (which contender, which size): kept when a cell is made to fail.
IDENTITY = (
    "workload",
    "contender",
    "server",
    "part",
    "n",
    "k",
    "kind",
    "stack",
    "consumer",
    "world",
    "streaming",
    "calls",
    "examples",
)


@pytest.fixture(scope="module")
def peers() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("peers_under_test", BENCH / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def _bench(tmp_path: Path, *args: str, pythonpath: str | None = None) -> tuple[int, str, dict]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    out = tmp_path / "results.json"
    command = [sys.executable, str(BENCH / "peers.py"), "--quick", "--out", str(out)]
    proc = subprocess.run(
        [*command, "--workdir", str(tmp_path / "work"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    results = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, proc.stdout + proc.stderr, results


@pytest.mark.parametrize("stored", STORED, ids=lambda p: p.name)
def test_the_report_names_every_cell_that_failed(peers: ModuleType, stored: Path) -> None:
    """Each cell of a stored run, made to fail in turn: the report still renders (it
    used to crash on a failed W4 row) and names the failure, which makes the run fail."""
    results = json.loads(stored.read_text())
    assert peers.problems(results) == []
    checked = 0
    for name, workload in results["workloads"].items():
        for i, cell in enumerate(workload.get("cells", [])):
            broken: dict[str, Any] = copy.deepcopy(results)
            reason = f"RuntimeError: cell {name}/{i} broke"
            failed = {k: cell[k] for k in IDENTITY if k in cell}
            broken["workloads"][name]["cells"][i] = failed | {"status": "error", "reason": reason}
            report = peers.render_report(broken)
            assert reason in report, (name, i)
            assert [p for p in peers.problems(broken) if reason in p], (name, i)
            checked += 1
    assert checked >= 10


def test_the_report_names_a_worker_that_died(peers: ModuleType) -> None:
    results = json.loads((BENCH / "results" / "peers.json").read_text())  # every workload
    for name in list(results["workloads"]):
        broken = copy.deepcopy(results)
        died = f"worker for {name} exited 1"
        broken["workloads"][name] = {"error": died, "cells": [], "floors": []}
        report = peers.render_report(broken)
        assert died in report.split("PROBLEMS", 1)[1], name


def test_a_broken_run_exits_nonzero_and_keeps_what_it_has(tmp_path: Path) -> None:
    """With httpx made unimportable, every workload fails: the run still writes its
    results and report, lists each failure, and exits 1."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "httpx.py").write_text('raise ImportError("httpx broken by the test")\n')
    code, output, results = _bench(
        tmp_path,
        "--only",
        "W1,W4",
        "--contenders",
        "agentreplay,mocktransport",
        pythonpath=str(shadow),
    )
    assert code == 1, output
    assert "problem(s), listed at the end of the report: exit status 1" in output
    failures = results["report_text"].split("PROBLEMS", 1)[1]
    assert "W1: worker scaling/native exited 1" in failures
    assert "W4 mocktransport: pytest exited" in failures
    assert "httpx broken by the test" in failures  # the error itself, not a cut-off tail


@pytest.mark.sdk
def test_a_quick_run_measures_every_workload(tmp_path: Path) -> None:
    """The smoke run of the README, with the plugin and the floor only (the peers'
    own packages are not all in the test extra): every workload gets its cells."""
    code, output, results = _bench(tmp_path, "--contenders", "agentreplay,mocktransport")
    assert code == 0, output[-3000:]
    assert "PROBLEMS" not in results["report_text"]
    workloads = results["workloads"]
    assert set(workloads) == {"W1", "STREAMS", "W5", "W4"}
    for name in ("W1", "STREAMS", "W4"):
        ours = [c for c in workloads[name]["cells"] if c.get("contender") == "agentreplay"]
        assert ours, name
        assert all(c["status"] in ("ok", "capped") for c in ours), name
    served = {c["workload"] for c in workloads["STREAMS"]["cells"]}
    assert served == {"W2", "W3", "W6"}
    # httpx-sse is in the bench extra, not the test extra: without it, its cells are
    # skipped and the report says why (not an error: the run still passes)
    consumers = {c.get("consumer") for c in workloads["STREAMS"]["cells"]}
    if importlib.util.find_spec("httpx_sse") is None:
        assert "httpx-sse" not in consumers
        assert "not run, its library missing: httpx-sse" in results["report_text"]
    else:
        assert "httpx-sse" in consumers
    assert {c["part"] for c in workloads["W5"]["cells"]} == {"scripted", "fault-plans"}
    assert "Targets (pytest_agentreplay)" in results["report_text"]
