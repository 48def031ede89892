"""The product targets of issues 3, 4, 9, 10 and 29, checked on a run's numbers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .sdk_contenders import SDK_SUFFIX


def target_summary(results: dict) -> list[list[Any]]:
    """The product targets of issues 3, 4, 9, 10 and 29, checked on this run (empty without agentreplay)."""
    rows: list[list[Any]] = []

    def ratio(a: dict, b: dict, key: str) -> tuple[float, float]:
        return a[key]["median"] / b[key]["median"], a[key]["min"] / b[key]["min"]

    def add(
        name: str,
        goal: str,
        pair: tuple[float, float] | None,
        ok: Callable[[float], bool],
        fmt: str = ".2f",
        *,
        unit: str = "x",
    ) -> None:
        if pair is None:
            return
        med_v, min_v = pair
        met = (
            "yes"
            if ok(med_v) and ok(min_v)
            else ("min only" if ok(min_v) else ("median only" if ok(med_v) else "NO"))
        )
        rows.append([name, goal, f"{med_v:{fmt}}{unit} [{min_v:{fmt}}{unit}]", met])

    w1 = results["workloads"].get("W1")
    if w1:
        cells = {
            (c["contender"], c["n"]): c
            for c in w1["cells"]
            if c.get("status") in ("ok", "capped", "skipped")
        }
        ours = {
            n: c
            for (name, n), c in cells.items()
            if name == "agentreplay" and c.get("status") == "ok"
        }
        if ours:
            lo, hi = min(ours), max(ours)
            small = min((n for n in ours if n >= 100), default=lo)
            a, b = ours[hi], ours[small]
            add(
                f"W1 us/request N={hi} / N={small}",
                "flat (<= 1.25x)",
                (
                    a["us_per_request"]["median"] / b["us_per_request"]["median"],
                    a["us_per_request"]["min"] / b["us_per_request"]["min"],
                ),
                lambda v: v <= 1.25,
            )
            w = a.get("window_us")
            if w:
                add(
                    f"W1 last/first 10% of one run, N={hi}",
                    "flat (<= 1.25x)",
                    (w["last_over_first"], w["last_over_first"]),
                    lambda v: v <= 1.25,
                )
            v = cells.get(("vcrpy", hi))
            if v:
                vrep = v.get("extrapolated_replay_s") or (
                    v["replay_s"]["median"] if "replay_s" in v else None
                )
                vmin = v.get("extrapolated_replay_s") or (
                    v["replay_s"]["min"] if "replay_s" in v else None
                )
                if vrep:
                    tag = " (vcrpy extrapolated)" if v.get("status") != "ok" else ""
                    add(
                        f"W1 replay N={hi}: vcrpy / agentreplay{tag}",
                        ">= 10x",
                        (vrep / a["replay_s"]["median"], vmin / a["replay_s"]["min"]),
                        lambda v: v >= 10,
                        ".0f",
                    )
                    if v.get("load_s"):
                        add(
                            f"W1 load+replay N={hi}: vcrpy / agentreplay{tag}",
                            ">= 10x",
                            (
                                (vrep + v["load_s"]["median"])
                                / (a["replay_s"]["median"] + a["load_s"]["median"]),
                                (vmin + v["load_s"]["min"])
                                / (a["replay_s"]["min"] + a["load_s"]["min"]),
                            ),
                            lambda v: v >= 10,
                            ".0f",
                        )
            for n in sorted(ours):
                v = cells.get(("vcrpy", n))
                if n >= 1000 and v and v.get("load_s"):
                    add(
                        f"W1 load N={n}: vcrpy / agentreplay",
                        ">= 3x",
                        ratio(v, ours[n], "load_s"),
                        lambda v: v >= 3,
                        ".1f",
                    )
    st = results["workloads"].get("STREAMS")
    if st:
        ok = [c for c in st["cells"] if c.get("status") == "ok" and c["world"] == "native"]
        by = {(c["workload"], c["consumer"], c["k"], c["contender"]): c for c in ok}
        for (wl, consumer, k, name), c in sorted(by.items()):
            if name != "agentreplay" or consumer not in (
                "anthropic-sdk",
                "openai-sdk",
                "anthropic-helper",
            ):
                continue
            m = by.get((wl, consumer, k, "mocktransport"))
            if m:
                add(
                    f"{wl} {consumer} K={k}: total / mocktransport",
                    "<= 1.3x",
                    ratio(c, m, "total_s"),
                    lambda v: v <= 1.3,
                )
        for wl, consumer in sorted({(w, c) for (w, c, _, n) in by if n == "agentreplay"}):
            ks = sorted(k for (w, cc, k, n) in by if (w, cc, n) == (wl, consumer, "agentreplay"))
            if len(ks) > 1:
                a, b = (
                    by[(wl, consumer, ks[-1], "agentreplay")],
                    by[(wl, consumer, ks[0], "agentreplay")],
                )
                # flat means: within 2x, or within 1 ms (the first event of any stream costs that much)
                add(
                    f"{wl} {consumer} ttfe K={ks[-1]} / K={ks[0]}",
                    "flat (<= 2x or +1 ms)",
                    ratio(a, b, "ttfe_s"),
                    lambda v, a=a, b=b: (
                        v <= 2 or a["ttfe_s"]["median"] - b["ttfe_s"]["median"] < 1e-3
                    ),
                )
        # issue 29: the OpenAI SDK at 10,000 chunks, within 1.1x of a bare MockTransport
        for (wl, consumer, k, name), c in sorted(by.items()):
            m = by.get((wl, consumer, k, "mocktransport"))
            if (wl, consumer, k, name) == ("W3", "openai-sdk", 10000, "agentreplay") and m:
                add(
                    f"W3 openai-sdk K={k}: total / mocktransport (issue 29)",
                    "<= 1.1x",
                    ratio(c, m, "total_s"),
                    lambda v: v <= 1.1,
                )
    w4 = results["workloads"].get("W4")
    if w4:
        ok4 = {c["contender"]: c for c in w4["cells"] if c.get("status") == "ok"}
        a, m = ok4.get("agentreplay"), ok4.get("mocktransport")
        if a and m and "per_test_ms" in a and "per_test_ms" in m:
            # issue 29: the plugin's own cost per test, over the floor (a MockTransport test)
            add(
                "W4 per test: agentreplay - mocktransport (the floor)",
                "<= 1 ms over the floor",
                (
                    a["per_test_ms"] - m["per_test_ms"],
                    a["per_test_ms_from_min"] - m["per_test_ms_from_min"],
                ),
                lambda v: v <= 1.0,
                unit=" ms",
            )
        a = ok4.get("agentreplay")
        if a and "x_mocktransport_wall" in a:
            add(
                "W4 wall: agentreplay / mocktransport",
                "<= 1.2x",
                (a["x_mocktransport_wall"], a["x_mocktransport_wall_from_min"]),
                lambda v: v <= 1.2,
            )
            if "x_mocktransport_per_test" in a:
                add(
                    "W4 per-test: agentreplay / mocktransport",
                    "<= 1.2x",
                    (a["x_mocktransport_per_test"], a["x_mocktransport_per_test_from_min"]),
                    lambda v: v <= 1.2,
                )
        a = ok4.get("agentreplay" + SDK_SUFFIX)
        if a and "x_mocktransport_wall" in a:
            add(
                "W4 anthropic.Anthropic() per test: wall / mocktransport",
                "<= 1.5x",
                (a["x_mocktransport_wall"], a["x_mocktransport_wall_from_min"]),
                lambda v: v <= 1.5,
            )
            if "x_same_sdk_mock_wall" in a:
                add(
                    "W4 anthropic.Anthropic() per test: wall / mock-anthropic",
                    "<= 1.5x",
                    (a["x_same_sdk_mock_wall"], a["x_same_sdk_mock_wall_from_min"]),
                    lambda v: v <= 1.5,
                )
    w5 = results["workloads"].get("W5")
    if w5:  # issue 29: the fake's per-call cost, against the same client on a MockTransport
        for c in w5["cells"]:
            if c.get("part") != "scripted" or c.get("server") != "agentreplay":
                continue
            if "x_mocktransport" not in c:
                continue
            body = "SSE" if c["streaming"] else "JSON"
            raw = c["consumer"] == "httpx2-raw"
            bound = 1.5 if raw else 1.2
            add(
                f"W5 fake call, {c['consumer']} {body}: agentreplay / "
                + ("floor (MockTransport)" if raw else "mocktransport"),
                f"<= {bound}x",
                (c["x_mocktransport"], c["x_mocktransport_min"]),
                lambda v, bound=bound: v <= bound,
            )
    return rows
