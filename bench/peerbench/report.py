"""The text report: a header, each workload's tables (from its own module), the targets,
the noise probe and the problems; and ``derive``, the ratios each workload adds to its
cells before the report is made."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import w1_scaling, w4_pytest, w5_fakes, w23_streams
from .tables import table
from .targets import target_summary


# ---------------------------------------------------------------------------------
# Derived numbers (ratios, growth) and the text report
# ---------------------------------------------------------------------------------
def derive(results: dict) -> None:
    """Ratios and growth, added to the cells of each workload that ran."""
    workloads = results["workloads"]
    for name, module in (("W1", w1_scaling), ("STREAMS", w23_streams), ("W4", w4_pytest)):
        if workloads.get(name):
            module.derive(workloads[name])


def portable(text: str, workdir: Path) -> str:
    """Results without this machine's paths: the scratch folder and the interpreter
    are named, not spelled out (the JSON is committed)."""
    for path, name in ((str(workdir), "<workdir>"), (sys.executable, "python")):
        text = text.replace(json.dumps(path)[1:-1], name)
    return text


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
    workloads = results["workloads"]
    for name, module in (
        ("W1", w1_scaling),
        ("STREAMS", w23_streams),
        ("W4", w4_pytest),
        ("W5", w5_fakes),
    ):
        if workloads.get(name) and (name != "W5" or workloads[name].get("cells")):
            out += module.report(workloads[name])
    targets = target_summary(results)
    if targets:
        out += [
            "",
            "Targets (pytest_agentreplay): value from medians [from mins]",
            table(["target", "goal", "measured", "met"], targets),
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
