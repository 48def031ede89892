"""What a session installed, against what pyproject.toml declares.

Lists every requirement of the runtime dependencies and of the ``test`` extra (with the
project's own extras it pulls in) as ``name  declared  installed``. Run by the drift
sessions of noxfile.py, so each CI log says which versions the tests met.

With ``--lowest`` it also checks that every floor was the version tested: a requirement
installed *above* its floor means another requirement needs more, so the floor in
pyproject.toml was never tested; the run fails and names it, with the version to raise
it to. A requirement installed outside what pyproject.toml allows was pinned on purpose
(``nox -s lowest -- --pin NAME==VERSION``): it is reported, not refused, so that the tests
show what that version does.

Always, it checks that every extra an installed package asks for of another (litellm's
``httpx[http2]``) is installed whole: uv's ``--override`` replaces a requirement with
its extras, so an override that forgets one leaves an import to fail deep in a test
(``No module named 'h2'``); ``uv pip check`` does not look at extras.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution, distributions, version
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def requirements(project: dict[str, Any], extra: str) -> list[Requirement]:
    """The runtime dependencies plus ``extra``, the project's own extras expanded."""
    own = canonicalize_name(project["name"])
    extras: dict[str, list[str]] = project["optional-dependencies"]
    found: dict[str, Requirement] = {}
    todo, done = [*project["dependencies"], *extras[extra]], {extra}
    while todo:
        req = Requirement(todo.pop())
        if canonicalize_name(req.name) == own:
            for name in sorted(req.extras - done):
                done.add(name)
                todo += extras[name]
        elif req.marker is None or req.marker.evaluate():
            found[canonicalize_name(req.name)] = req
    return sorted(found.values(), key=lambda r: canonicalize_name(r.name))


def floor(req: Requirement) -> Version | None:
    """The lowest version ``req`` allows, from its ``>=`` / ``==`` / ``~=`` clauses."""
    bounds = [Version(s.version) for s in req.specifier if s.operator in {">=", "==", "~="}]
    return max(bounds) if bounds else None


def report(reqs: list[Requirement], *, lowest: bool) -> list[str]:
    """Print the table; return the problems (floors not tested, with --lowest)."""
    problems = []
    width = max(len(r.name) for r in reqs)
    for req in reqs:
        try:
            installed = Version(version(req.name))
        except PackageNotFoundError:
            problems.append(f"{req.name} is not installed, though pyproject.toml requires it")
            continue
        note = ""
        if installed not in req.specifier:
            note = "  (pinned outside what pyproject.toml allows)"
        elif lowest and (low := floor(req)) is not None and installed > low:
            note = "  <- above its floor"
            problems.append(
                f"{req.name}: pyproject.toml declares {req.specifier}, but the lowest "
                f"resolution installed {installed} (another requirement needs it, or the "
                f"floor cannot be installed), so the floor was never tested. Raise it to "
                f">={installed}."
            )
        print(f"{req.name:<{width}}  {req.specifier!s:<16}  {installed}{note}")
    return problems


def _active(req: Requirement, extra: str = "") -> bool:
    return req.marker is None or req.marker.evaluate({"extra": extra})


def missing_extras() -> list[str]:
    """Each extra an installed package requires (``litellm`` -> ``httpx[http2]``) whose
    own requirements are not all installed."""
    installed = {canonicalize_name(d.metadata["Name"]) for d in distributions()}
    problems = set()
    for dist in distributions():
        for line in dist.requires or []:
            req = Requirement(line)
            if not req.extras or not _active(req) or canonicalize_name(req.name) not in installed:
                continue
            for extra in sorted(req.extras):
                needs = [Requirement(n) for n in distribution(req.name).requires or []]
                absent = [
                    n.name
                    for n in needs
                    if _active(n, extra)
                    and not _active(n)
                    and canonicalize_name(n.name) not in installed
                ]
                if absent:
                    problems.add(
                        f"{dist.metadata['Name']} requires {req.name}[{extra}], but "
                        f"{', '.join(absent)} of that extra is not installed (an override "
                        f"without the extra? write it as {req.name}[{extra}])"
                    )
    return sorted(problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", default="test", help="the extra to list (default: test)")
    parser.add_argument("--lowest", action="store_true", help="fail on a floor not tested")
    args = parser.parse_args(argv)
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    problems = report(requirements(project, args.extra), lowest=args.lowest)
    problems += missing_extras()
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
