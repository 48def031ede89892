"""Refresh requirements/dev.lock on purpose, and say what moved.

The lock pins every package the ``dev`` extra installs, for every Python from 3.11 on
(uv's universal resolution; the test extra needs 3.11: httpx2 and the SDKs built on it
do). The README's commands and ``.ci/run`` install
through it, so CI tests exactly what was tested before; the drift sessions of
noxfile.py are what look at new releases.

    python .ci/lock.py                    # re-resolve what pyproject.toml changed
    python .ci/lock.py --upgrade          # everything to the newest release
    python .ci/lock.py --upgrade anthropic openai   # only these

It prints the versions that moved as Markdown lines for CHANGELOG.md: a refresh is a
commit of its own, with that list under the Unreleased section.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "dev.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)(?:\s*;\s*(.*))?$")


def pins(text: str) -> dict[str, str]:
    """``name (marker)`` -> version, for each pinned line of a lock file."""
    found = {}
    for line in text.splitlines():
        if match := PIN.match(line.strip()):
            name, version, marker = match.groups()
            found[f"{name} ({marker})" if marker else name] = version
    return found


def changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """The moves between two locks, one Markdown line each."""
    lines = []
    for name in sorted(old.keys() | new.keys(), key=str.lower):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        if before is None:
            lines.append(f"- {name} {after} (new)")
        elif after is None:
            lines.append(f"- {name} {before} (removed)")
        else:
            lines.append(f"- {name} {before} -> {after}")
    return lines


def compile_lock(upgrade: list[str] | None) -> None:
    command = [
        "uv", "pip", "compile", "pyproject.toml", "--extra", "dev",
        "--universal", "--python-version", "3.11", "--no-python-downloads",
        "--no-emit-index-url", "--custom-compile-command", "python .ci/lock.py",
        "--quiet", "--output-file", str(LOCK.relative_to(ROOT)),
    ]  # fmt: skip
    if upgrade == []:
        command.append("--upgrade")
    for name in upgrade or []:
        command += ["--upgrade-package", name]
    subprocess.run(command, cwd=ROOT, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--upgrade", nargs="*", metavar="PACKAGE", help="upgrade these (all when none given)"
    )
    args = parser.parse_args(argv)
    old = pins(LOCK.read_text(encoding="utf-8")) if LOCK.exists() else {}
    LOCK.parent.mkdir(exist_ok=True)
    compile_lock(args.upgrade)
    moved = changes(old, pins(LOCK.read_text(encoding="utf-8")))
    print("\n".join(moved) if moved else "nothing moved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
