"""The orchestrator: one worker process per workload and world, W4's pytest projects,
the results file and the report."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .config import DEFAULT_OUT, DEFAULT_OUT_QUICK, ENTRY, FULL, QUICK, SCHEMA, now
from .registry import all_contenders, contender_by_name
from .report import derive, portable, problems, render_report
from .stats import log
from .w4_pytest import run_pytest_workload

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
        str(ENTRY),
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
    out_path.write_text(portable(json.dumps(results, indent=1, default=str), workdir) + "\n")
    log(f"results written to {out_path}  (elapsed {results['elapsed_s']:.0f} s)")
    if not args.keep and not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    failed = problems(results)
    if failed:
        log(f"{len(failed)} problem(s), listed at the end of the report: exit status 1")
    return 1 if failed else 0
