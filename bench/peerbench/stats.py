"""Small statistics and run helpers: summaries (median, min), the quadratic fit of W1,
rotation of the contenders between rounds, garbage collection and the noise probe."""

from __future__ import annotations

import gc
import statistics
import sys
from typing import Any

from .config import now


# ---------------------------------------------------------------------------------
# Small statistics helpers
# ---------------------------------------------------------------------------------
def summarize(xs: list[float]) -> dict[str, Any] | None:
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {
        "min": min(xs),
        "median": statistics.median(xs),
        "max": max(xs),
        "n": len(xs),
        "samples": [round(x, 9) for x in xs],
    }


def med(d: dict | None) -> float | None:
    return None if d is None else d["median"]


def fit_quadratic_through_origin(points: list[tuple[int, float]]) -> tuple[float, float] | None:
    """Least squares T(i) = a*i + b*i^2 over cumulative checkpoints (i, T).

    c(i) = a + 2*b*i is then the marginal cost of request number i."""
    if len(points) < 3:
        return None
    s11 = sum(i * i for i, _ in points)
    s12 = sum(i**3 for i, _ in points)
    s22 = sum(i**4 for i, _ in points)
    y1 = sum(i * t for i, t in points)
    y2 = sum(i * i * t for i, t in points)
    det = s11 * s22 - s12 * s12
    if det == 0:
        return None
    a = (y1 * s22 - y2 * s12) / det
    b = (s11 * y2 - s12 * y1) / det
    return a, b


def rotate(items: list, k: int) -> list:
    if not items:
        return items
    k %= len(items)
    return items[k:] + items[:k]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def collect_garbage(cfg: dict, *, always_full: bool = False) -> None:
    """Before each sample: a full collection (full runs, and W1 whose per-request cost
    depends on what the collector has to walk), or the young generations only (quick
    stream cells: a full one costs ~40 ms once the SDKs are imported)."""
    gc.collect(2 if always_full or cfg["mode"] == "full" else 1)


def calibration_probe(rounds: int = 7) -> dict[str, Any]:
    """A fixed CPU-bound loop; its spread says how noisy this process' minutes were."""
    xs = []
    for _ in range(rounds):
        t = now()
        acc = 0
        for i in range(200_000):
            acc += i * i % 7
        xs.append(now() - t)
    s = summarize(xs)
    s["spread_max_over_min"] = s["max"] / s["min"]
    return s
