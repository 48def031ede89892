"""W2 and W3: a large Anthropic Messages and an OpenAI Chat Completions SSE stream
replayed, by every consumer through every contender (W6 runs in the same worker:
:mod:`.w6_recording`)."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .config import API_KEY, FAKE_BASE, OPENAI_BASE, WORLD, now
from .consumers import CONSUMERS, FLOORS, expected_items, verify
from .contenders import Contender
from .data import make_stream_fixture
from .registry import contender_by_name
from .stats import calibration_probe, collect_garbage, log, med, rotate, summarize
from .tables import fmt, table
from .w6_recording import report as w6_report
from .w6_recording import run_record_group


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
            cells += run_record_group(group, cfg, contenders, workdir)
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


def derive(st: dict) -> None:
    """Throughput, and ratios to the floors and the MockTransport, added to the stream cells."""
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
        f = floors.get((c["world"], c["kind"], c["k"], CONSUMERS[c["consumer"]]["floor"] or "-"))
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


def report(st: dict) -> list[str]:
    """W2's and W3's tables, with their floors; then W6's, and what the stream worker says."""
    out: list[str] = []
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
                    fmt(c["total_s"]["median"] * 1e3, ".1f")
                    + f" [{c['total_s']['min'] * 1e3:.1f}]",
                    fmt(c["mb_per_s"], ".1f"),
                    fmt(c["items_per_s"] / 1e3, ".1f"),
                    fmt(c["ttfe_s"]["median"] * 1e3, ".2f"),
                    fmt(c["setup_s"]["median"] * 1e3, ".1f"),
                    fmt(c["client_ctor_s"]["median"] * 1e3, ".1f"),
                    c.get("chunks", ""),
                    fmt(c.get("x_floor"), ".1f"),
                    fmt(c.get("x_mocktransport_same_process"), ".2f"),
                ]
            )
        frows = [
            [
                f["floor"] + (" (alias)" if f["world"] == "alias" else ""),
                f["k"],
                f["bytes"],
                f["items"],
                fmt(f["total_s"]["median"] * 1e3, ".2f") + f" [{f['total_s']['min'] * 1e3:.2f}]",
                fmt(f["mb_per_s"], ".1f"),
                fmt(f["items_per_s"] / 1e3, ".0f"),
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
                table(
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
                table(
                    ["floor", "K", "bytes", "data lines", "ms [min]", "MB/s", "k lines/s"],
                    frows,
                ),
            ]
    out += w6_report(st)
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
    return out
