"""W6 (extra): the time to first event while *recording* a paced upstream stream."""

from __future__ import annotations

import time
from pathlib import Path

from .config import WORLD
from .consumers import consume_raw_lines
from .contenders import Contender
from .data import make_stream_fixture
from .stats import log, med, rotate, summarize
from .tables import fmt, table


def run_record_group(
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


def report(st: dict) -> list[str]:
    """W6's table."""
    out: list[str] = []
    rows = []
    for c in st["cells"]:
        if c["workload"] == "W6" and c.get("status") == "ok":
            rows.append(
                [
                    c["contender"],
                    c["k"],
                    fmt(c["pace_s"] * 1e3, ".1f"),
                    fmt(c["upstream_duration_s"] * 1e3, ".0f"),
                    fmt(c["ttfe_s"]["median"] * 1e3, ".1f") + f" [{c['ttfe_s']['min'] * 1e3:.1f}]",
                    fmt(c["total_s"]["median"] * 1e3, ".1f"),
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
            table(
                ["recorder", "events", "pace ms", "upstream ms", "ttfe ms [min]", "total ms"],
                rows,
            ),
        ]
    return out
