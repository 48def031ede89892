"""W1: cassette load and in-order replay of N small JSON interactions, as N grows."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from .config import now
from .contenders import Contender, VcrpyContender
from .data import ScalingFixture, make_scaling_fixture
from .registry import all_contenders, contender_by_name
from .stats import (
    calibration_probe,
    collect_garbage,
    fit_quadratic_through_origin,
    log,
    rotate,
    summarize,
)
from .tables import fmt, table


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


def derive(w1: dict) -> None:
    """W1's growth exponents and ratios to the MockTransport, added to its cells."""
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


def report(w1: dict) -> list[str]:
    """W1's table."""
    out: list[str] = []
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
                    fmt(c["client_ctor_s"]["median"] * 1e3, ".1f"),
                    fmt(c["load_s"]["median"] * 1e3, ".1f"),
                    (
                        f"~{c['extrapolated_replay_s']:.1f} (extrapolated)"
                        if capped
                        else fmt(c["replay_s"]["median"], ".4f") + f" [{c['replay_s']['min']:.4f}]"
                    ),
                    (
                        f"~{c['extrapolated_us_per_request']:.0f}"
                        if capped
                        else fmt(c["us_per_request"]["median"], ".1f")
                    ),
                    (
                        f"capped: {c['requests_done']}/{c['n']} in {c['replay_s']['median']:.0f} s"
                        if capped
                        else "all"
                    )
                    + ("" if c.get("verified", True) else " WRONG RESPONSES"),
                    fmt(w.get("last_over_first"), ".1f"),
                    fmt(c.get("growth_exponent_vs_prev_n"), ".2f"),
                    fmt(c.get("x_mocktransport_replay"), ".0f"),
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
        table(
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
    return out
