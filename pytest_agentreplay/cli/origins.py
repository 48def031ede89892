"""Where an interaction came from, as ``inspect`` and ``lint`` say it.

A recorded interaction has no ``origin``; one imported from a trace says which span
and instrumentation it was built from, how it is served, what the import filled in
because the trace could not know it, and what it corrected (see :mod:`..traces`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["origin_lines"]


def origin_lines(origin: Mapping[str, Any] | None) -> list[str]:
    """``("origin", text)`` lines for an imported interaction, nothing for a recording."""
    if origin is None:
        return []
    if origin.get("source") != "trace":
        return [f"origin    {origin.get('source')}"]
    lines = [
        f"origin    imported from a trace: step {origin.get('step')}, "
        f"{origin.get('instrumentation')} ({origin.get('from')}); "
        f"serves {origin.get('serves')}"
    ]
    filled = origin.get("filled") or []
    if filled:
        lines.append("filled    " + "; ".join(map(str, filled)))
    lines += [f"corrected {c}" for c in origin.get("corrected") or []]
    return lines
