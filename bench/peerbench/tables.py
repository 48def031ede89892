"""Fixed-width text tables and the number format of the report."""

from __future__ import annotations

from typing import Any


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cols = (
        [
            [str(h)] + [("" if v is None else str(v)) for v in col]
            for h, col in zip(headers, zip(*rows, strict=True), strict=True)
        ]
        if rows
        else [[h] for h in headers]
    )
    widths = [max(len(x) for x in col) for col in cols]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    for r in rows:
        lines.append(
            "  ".join(
                ("" if v is None else str(v)).rjust(w) if i else str(v).ljust(w)
                for i, (v, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    return "\n".join(lines)


def fmt(x: float | None, spec: str) -> str | None:
    return None if x is None else format(x, spec)
