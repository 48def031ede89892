"""W4: the per-test overhead inside pytest, 200 generated tests run as subprocesses that
load only the tool's own pytest plugin."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

from .config import now
from .data import make_scaling_fixture
from .registry import contender_by_name
from .sdk_contenders import SDK_SUFFIX
from .stats import log, rotate, summarize
from .tables import fmt, table

# ---------------------------------------------------------------------------------
# W4: per-test overhead inside pytest (driven from the orchestrator)
# ---------------------------------------------------------------------------------
_PYTEST_SUMMARY = re.compile(r"(\d+) passed.*? in ([\d.]+)s")


@dataclasses.dataclass(frozen=True)
class PytestProject:
    """A W4 project: its folder, extra pytest arguments and the plugins it loads."""

    path: Path
    args: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    autoload: bool = False  # every installed plugin instead (the mock+autoload reference)


def _run_pytest(
    project: PytestProject, collect_only: bool = False
) -> tuple[float, float | None, int, str]:
    loads = [arg for name in project.plugins for arg in ("-p", name)]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *loads, *project.args]
    if collect_only:
        cmd.append("--collect-only")
    # PYTHONDONTWRITEBYTECODE would make every run recompile the generated test modules;
    # drop it so the warm-up's .pyc caches are used, as on a usual developer machine
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYTEST_ADDOPTS",
            "PEERBENCH_WORLD",
            "PYTHONDONTWRITEBYTECODE",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
            "PYTEST_PLUGINS",
        )
    }
    if not project.autoload:  # only the tool's own plugins (see Contender.w4_plugins)
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    t0 = now()
    p = subprocess.run(cmd, cwd=project.path, env=env, capture_output=True, text=True, check=False)
    wall = now() - t0
    out = p.stdout + p.stderr
    m = _PYTEST_SUMMARY.search(out)
    passed = int(m.group(1)) if m else 0
    session = float(m.group(2)) if m else None
    if p.returncode != 0:
        raise RuntimeError(f"pytest exited {p.returncode}: {_pytest_failure(out)}")
    shown = " ".join(cmd)
    return (
        wall,
        session,
        passed,
        shown if project.autoload else "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 " + shown,
    )


def _pytest_failure(output: str) -> str:
    """What a failed pytest run says went wrong: its error lines (``E   ...``, ``ERROR ...``)
    first, which a bare tail of the output cuts in half, then the tail."""
    lines = output.splitlines()
    said = [ln.strip() for ln in lines if ln.startswith(("E   ", "ERROR ", "FAILED "))]
    return "; ".join(dict.fromkeys(said))[-400:] + " | tail: " + " ".join(lines[-3:])[-200:]


SDK_STARTUP = "(pytest startup + import anthropic)"


def run_pytest_workload(cfg: dict, names: list[str], workdir: Path) -> dict:
    fx = make_scaling_fixture(cfg["w4_tests"], seed=4004)
    root = workdir / "pytest"
    projects: dict[str, PytestProject] = {}
    cells: list[dict] = []
    # pytest startup + collection of one trivial test: subtracted to get per-test cost
    start = root / "_startup"
    start.mkdir(parents=True, exist_ok=True)
    (start / "pytest.ini").write_text("[pytest]\n")
    (start / "test_bench.py").write_text("def test_nothing():\n    pass\n")
    projects["(pytest startup, 1 empty test)"] = PytestProject(start)
    sdk_wanted = any(n.endswith(SDK_SUFFIX) for n in names)
    if sdk_wanted:  # the SDK variants' startup also imports anthropic: subtract that too
        start_sdk = root / "_startup_sdk"
        start_sdk.mkdir(parents=True, exist_ok=True)
        (start_sdk / "pytest.ini").write_text("[pytest]\n")
        (start_sdk / "test_bench.py").write_text(
            "import anthropic\n\n\ndef test_nothing():\n    pass\n"
        )
        projects[SDK_STARTUP] = PytestProject(start_sdk)
    # timed rounds per project: the startup references are cheap, so they get at least 3
    # (a steadier subtraction); slow reference rows may get fewer (Contender.w4_rounds)
    total_rounds = max(cfg["w4_reps"], cfg.get("w4_startup_reps", 3))
    rounds = dict.fromkeys(projects, total_rounds)
    for name in names:
        c = contender_by_name(name)
        if "pytest" not in c.workloads:
            continue
        rounds[c.name] = min(cfg["w4_reps"], c.w4_rounds or cfg["w4_reps"])
        try:
            projects[c.name] = PytestProject(
                root / c.name,
                tuple(c.pytest_project(root / c.name, fx)),
                c.w4_plugins,
                c.w4_autoload,
            )
        except NotImplementedError:
            continue
        except Exception as e:
            cells.append(
                {
                    "workload": "W4",
                    "contender": c.name,
                    "status": "error",
                    "reason": f"{type(e).__name__}: {e}",
                }
            )
    walls: dict[str, list[float]] = {k: [] for k in projects}
    sessions: dict[str, list[float]] = {k: [] for k in projects}
    errors: dict[str, str] = {}
    commands: dict[str, str] = {}
    order = list(projects)
    startup_key = order[0]
    startups = {startup_key, SDK_STARTUP}

    def run(key: str) -> tuple[float, float | None] | None:
        try:
            wall, session, passed, cmd = _run_pytest(projects[key])
        except Exception as e:
            errors[key] = str(e)[:600]
            return None
        commands[key] = f"cd {projects[key].path} && {cmd}"
        want = 1 if key in startups else fx.n
        if passed != want:  # every run must pass every test
            errors[key] = f"{passed} passed, expected {want}"
            return None
        return wall, session

    if cfg["w4_warmup"]:
        for key in order:  # untimed: imports + writes the assertion-rewrite .pyc caches
            try:
                _run_pytest(projects[key], collect_only=True)
            except Exception as e:
                errors[key] = str(e)[:600]
    for r in range(total_rounds):
        for key in rotate(order, r):
            if key in errors or r >= rounds[key]:
                continue
            res = run(key)
            if res:
                walls[key].append(res[0])
                sessions[key].append(res[1])
        log(f"  [W4] round {r + 1} done")
    bases = {k: summarize(walls[k]) for k in startups if k in walls}
    for key in order:
        base = bases.get(SDK_STARTUP if key.endswith(SDK_SUFFIX) else startup_key)
        if key in errors:
            cells.append(
                {"workload": "W4", "contender": key, "status": "error", "reason": errors[key]}
            )
            log(f"  [W4] {key}: ERROR {errors[key][:200]}")
            continue
        w, s = summarize(walls[key]), summarize(sessions[key])
        n = 1 if key in startups else fx.n
        cell = {
            "workload": "W4",
            "contender": key,
            "status": "ok",
            "tests": n,
            "reps": len(walls[key]),
            "wall_s": w,
            "pytest_reported_s": s,
            "command": commands.get(key),
        }
        if key not in startups and base is not None:
            cell["per_test_ms"] = (w["median"] - base["median"]) / n * 1e3
            # min-based estimate: on a noisy machine the fastest run is closest to the intrinsic cost
            cell["per_test_ms_from_min"] = (w["min"] - base["min"]) / n * 1e3
        cells.append(cell)
        log(f"  [W4] {key:<32} wall {w['median']:.3f} s (min {w['min']:.3f})")
    return {"cells": cells, "tests": fx.n}


W4_COLUMNS = [
    "variant",
    "tests",
    "wall s [min]",
    "pytest s",
    "per-test ms [min]",
    "beyond ctor ms [min]",
    "x mock wall [min]",
    "x sdk mock [min]",
]


def derive(w4: dict) -> None:
    """W4's per-test costs as ratios to the references, added to its cells."""
    ok = {c["contender"]: c for c in w4["cells"] if c.get("status") == "ok"}
    m = ok.get("mocktransport")
    ref = ok.get("mock+client-ctor")
    sdk_m, sdk_ref = ok.get("mock" + SDK_SUFFIX), ok.get("mock+ctor" + SDK_SUFFIX)
    for c in ok.values():
        if m and c is not m and "per_test_ms" in c:
            c["x_mocktransport_wall"] = c["wall_s"]["median"] / m["wall_s"]["median"]
            c["x_mocktransport_wall_from_min"] = c["wall_s"]["min"] / m["wall_s"]["min"]
            if m.get("per_test_ms", 0) > 0.2:  # a ratio to ~0 would be noise
                c["x_mocktransport_per_test"] = c["per_test_ms"] / m["per_test_ms"]
                c["x_mocktransport_per_test_from_min"] = (
                    c["per_test_ms_from_min"] / m["per_test_ms_from_min"]
                )
        sdk = c["contender"].endswith(SDK_SUFFIX)
        mock_same, ctor_ref = (sdk_m, sdk_ref) if sdk else (m, ref)
        if sdk and mock_same and c is not mock_same and "per_test_ms" in c:
            # same SDK, same per-test work, but a MockTransport http_client instead of a default one
            c["x_same_sdk_mock_wall"] = c["wall_s"]["median"] / mock_same["wall_s"]["median"]
            c["x_same_sdk_mock_wall_from_min"] = c["wall_s"]["min"] / mock_same["wall_s"]["min"]
        if (
            ctor_ref
            and c is not ctor_ref
            and "per_test_ms" in c
            and contender_by_name(c["contender"]).builds_default_client
        ):
            c["per_test_ms_beyond_client_ctor"] = c["per_test_ms"] - ctor_ref["per_test_ms"]
            c["per_test_ms_beyond_client_ctor_from_min"] = (
                c["per_test_ms_from_min"] - ctor_ref["per_test_ms_from_min"]
            )


def report(w4: dict) -> list[str]:
    """W4's table."""
    out: list[str] = []
    rows = []
    for c in w4["cells"]:
        if c.get("status") != "ok":
            # as many columns as the headers below (W4_COLUMNS), the message in the third
            rows.append(
                [c["contender"], None, "ERROR: " + c.get("reason", "")[:80]]
                + [None] * (len(W4_COLUMNS) - 3)
            )
            continue

        def both(key: str, c: dict = c) -> str | None:
            if c.get(key) is None:
                return None
            return f"{c[key]:.2f} [{c[key + '_from_min']:.2f}]"

        rows.append(
            [
                c["contender"],
                c["tests"],
                fmt(c["wall_s"]["median"], ".3f") + f" [{c['wall_s']['min']:.3f}]",
                fmt(
                    c["pytest_reported_s"]["median"] if c.get("pytest_reported_s") else None,
                    ".2f",
                ),
                both("per_test_ms"),
                both("per_test_ms_beyond_client_ctor"),
                both("x_mocktransport_wall"),
                both("x_same_sdk_mock_wall"),
            ]
        )
    out += [
        "",
        "W4  pytest -q -p no:cacheprovider, one replayed POST per test (subprocess wall time)",
        "    per-test = (wall - wall of the 1-test startup run) / tests, from medians [from mins];",
        "    beyond ctor = per-test minus the mock+client-ctor reference, i.e. what the tool costs beyond",
        "    building one default httpx.Client per test (*-anthropic rows: beyond mock+ctor-anthropic,",
        "    and per-test from the startup run that also imports anthropic);",
        "    x mock wall = wall / mocktransport wall; x sdk mock = wall / mock-anthropic wall (same SDK",
        "    call per test, MockTransport http_client): issue 10's ratio",
        table(W4_COLUMNS, rows),
    ]
    return out
