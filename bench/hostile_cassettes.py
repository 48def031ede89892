"""How long the loader takes to refuse a hostile cassette.

The hardening test (``tests/hardening/test_hostile_cassettes.py``) checks that each
hostile cassette — a ``!!python/object/apply`` tag, a billion-laughs alias bomb, a
recursive alias, 10,000 levels of nesting — is a format error within a memory budget.
Time is measured here instead: a wall-clock bound in the suite failed on a loaded
2-core machine (issue 18, item 20). Best and median of several loads each, in ms.

Usage::

    python bench/hostile_cassettes.py            # results in bench/results/hostile-cassettes.json
    python bench/hostile_cassettes.py --quick    # fewer repeats
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_agentreplay.cassettes.io import CassetteFormatError, load
from tests.hardening.test_hostile_cassettes import HOSTILE

BUDGET_MS = 1000.0  # what the suite used to assert, on an idle machine


def _time_one(path: Path) -> float:
    started = time.perf_counter()
    try:
        load(path)
    except CassetteFormatError:
        pass
    else:
        raise AssertionError(f"{path} loaded")
    return (time.perf_counter() - started) * 1000


def measure(repeats: int) -> dict[str, dict[str, float]]:
    """Each hostile kind: best and median load time (ms) over ``repeats`` loads."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, build in sorted(HOSTILE.items()):
            path = Path(tmp) / f"{kind}.yaml"
            path.write_text(build(Path(tmp) / "pwned"))
            _time_one(path)  # the first load imports libyaml and the locator
            times = [_time_one(path) for _ in range(repeats)]
            results[kind] = {"best_ms": min(times), "median_ms": statistics.median(times)}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 15")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    results = measure(3 if args.quick else 15)
    name = "hostile-cassettes-quick.json" if args.quick else "hostile-cassettes.json"
    out = args.out or Path(__file__).parent / "results" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"python": platform.python_version(), "results": results}, indent=2) + "\n"
    )
    for kind, row in results.items():
        flag = "" if row["median_ms"] < BUDGET_MS else f"  over {BUDGET_MS:.0f} ms"
        print(f"{kind:16} best {row['best_ms']:8.1f} ms  median {row['median_ms']:8.1f} ms{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
