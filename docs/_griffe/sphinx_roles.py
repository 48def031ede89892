"""Render the Sphinx roles of our docstrings (``:class:`~.model.Reply```) as links.

The package's docstrings are plain reST-ish text: Markdown-compatible except for
Sphinx cross-reference roles. This griffe extension rewrites each role into an
*optional* autorefs reference: a link when the target is documented on the site,
plain code when it is not (so ``mkdocs build --strict`` never fails on them).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|meth|func|mod|attr|exc|data|obj):`(~?)([^`]+)`")


def _absolute(target: str, obj: griffe.Object) -> str:
    """The dotted path ``target`` names, as seen from ``obj``."""
    if target.startswith("."):
        package = obj.module.path if obj.module.is_package else obj.module.path.rpartition(".")[0]
        dots = len(target) - len(target.lstrip("."))
        for _ in range(dots - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{target.lstrip('.')}"
    head, _, rest = target.partition(".")
    for scope in (obj, *_parents(obj)):
        if head in scope.members:
            return f"{scope.members[head].path}.{rest}".rstrip(".")
    try:
        resolved = obj.resolve(head)
    except (griffe.NameResolutionError, AttributeError):
        return target
    return f"{resolved}.{rest}".rstrip(".")


def _parents(obj: griffe.Object) -> list[griffe.Object]:
    parents = []
    while obj.parent is not None:
        obj = obj.parent
        parents.append(obj)
    return parents


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in every docstring before it is parsed."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.is_alias:  # imported names are rewritten where they are defined
            return
        docstring = obj.docstring
        if docstring is None or ":`" not in docstring.value:
            return

        def link(match: re.Match[str]) -> str:
            short, target = match.group(1), match.group(2)
            shown = target.rpartition(".")[2] if short else target.lstrip(".")
            path = _absolute(target, obj)
            return f'<autoref identifier="{path}" optional><code>{shown}</code></autoref>'

        docstring.value = _ROLE.sub(link, docstring.value)
