"""W5: fake-model throughput, scripted calls/s and hypothesis fault-plan examples/s
(measured by ``bench/fake_throughput.py``)."""

from __future__ import annotations

from pathlib import Path

from .stats import calibration_probe, log
from .tables import fmt, table


# ---------------------------------------------------------------------------------
# Worker: W5 fake-model throughput (bench/fake_throughput.py)
# ---------------------------------------------------------------------------------
def run_fake_worker(spec: dict, workdir: Path) -> dict:
    import fake_throughput

    out = fake_throughput.run(spec["cfg"], log=log)
    out["calibration"] = calibration_probe()
    return out


def report(w5: dict) -> list[str]:
    """W5's two tables: scripted calls, and hypothesis fault plans."""
    out: list[str] = []
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
                fmt(c["total_s"]["median"] * 1e3, ".1f") + f" [{c['total_s']['min'] * 1e3:.1f}]",
                fmt(c["calls_per_s"], ".0f"),
                fmt(c["total_s"]["median"] / c["calls"] * 1e6, ".0f"),
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
        table(
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
            fmt(c["total_s"]["median"], ".3f") + f" [{c['total_s']['min']:.3f}]",
            fmt(c["examples_per_s"], ".1f"),
            fmt(c["total_s"]["median"] / c["examples"] * 1e3, ".2f"),
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
        table(
            ["server", "examples", "total s [min]", "examples/s", "ms/example", "x mock [min]"],
            rows,
        ),
    ]
    return out
