"""``agentreplay diff A B``: two cassettes compared as conversations, for review.

Interactions are paired by method and URL in order (an inserted call is one
"only in B" line, not a cascade). The URL is compared as matching compares it: the
host without its port, so a re-recording against a local server on a fresh port
differs in nothing replay would notice (``--all`` shows the port too). For each
pair: the request at JSON paths, the status and the headers that shape the API,
the event sequence by type, how the stream ended, and the final message folded
from the stream. Fields that change on every recording (ids, timestamps,
signatures, padding, event times) are left out unless ``--all`` is given; values
that look like secrets are masked.
"""

from __future__ import annotations

import argparse
import difflib
from typing import Any
from urllib.parse import urlsplit

from ..cassettes.conversation import conversation
from ..jsondiff import Mask, json_diff
from ..redact.scrubber import Scrubber, default_scrubber
from .analysis import Source, View, event_label, read_source, timings, views
from .common import EXIT_FINDINGS, EXIT_OK, Output, reading
from .options import FORMATS, exit_codes

__all__ = ["VOLATILE_KEYS", "configure", "run"]

VOLATILE_KEYS = frozenset(
    {
        "id",
        "created",
        "created_at",
        "completed_at",
        "expires_at",
        "system_fingerprint",
        "obfuscation",
        "signature",
        "encrypted_content",
        "responseId",  # Gemini's response id
    }
)
"""JSON keys whose values differ on every recording (keys ending in ``_id`` or ``Id``
too: Gemini's camelCase)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay diff``."""
    parser.description = (
        "Compare two cassettes as conversations, not as text: interactions are paired by "
        "method and URL (in order); for each pair, the request (method, URL, JSON body at "
        "JSON paths, and the headers that shape the API: content-type, *-version, "
        "*-beta), the response status and those headers, the sequence of "
        "events by type, how the stream ended, and the final message folded from the "
        "stream. Both sides are compared scrubbed, as they would be saved. Fields that "
        "change on every recording (ids, timestamps, signatures, obfuscation padding, "
        "event times) are ignored unless --all is given. The files "
        "may be in different formats. " + FORMATS
    )
    parser.epilog = exit_codes("no differences", "differences (printed)")
    parser.add_argument("a", metavar="A", help="the old cassette")
    parser.add_argument("b", metavar="B", help="the new cassette")
    parser.add_argument(
        "--all",
        action="store_true",
        help="compare everything: all headers, volatile fields (ids, timestamps, "
        "signatures), event data and event times; secrets stay redacted, as in every output",
    )
    parser.add_argument(
        "--limit",
        metavar="N",
        type=int,
        default=20,
        help="at most N difference lines per part of an interaction (default: 20)",
    )


def _volatile(key: str) -> bool:
    return key in VOLATILE_KEYS or key.endswith(("_id", "Id"))


def stable(value: Any) -> Any:
    """``value`` without the volatile keys, at any depth."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if not _volatile(str(k))}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def _kept_header(name: str) -> bool:
    return name == "content-type" or name.endswith(("-version", "-beta"))


class _Differ:
    def __init__(self, everything: bool, limit: int, mask: Mask) -> None:
        self.everything = everything
        self.limit = limit
        self.mask = mask

    def _json(self, value: Any) -> Any:
        return value if self.everything else stable(value)

    def _headers(self, headers: dict[str, str]) -> dict[str, str]:
        if self.everything:
            return headers
        return {k: v for k, v in headers.items() if _kept_header(k)}

    def lines(self, a: Any, b: Any) -> list[str]:
        return json_diff(a, b, limit=self.limit, mask=self.mask)

    def request(self, x: View, y: View) -> list[str]:
        if _imported(x) or _imported(y):  # a trace knows the conversation, not the body
            return self.lines(
                conversation(x.interaction.request), conversation(y.interaction.request)
            )

        def side(item: View) -> dict[str, Any]:
            r = item.interaction.request
            body = self._json(r.json_body) if r.json_body is not None else r.body or r.body_b64
            return {
                "method": r.method,
                "url": r.url if self.everything else without_port(r.url),
                "headers": self._headers(r.headers),
                "body": body,
            }

        return self.lines(side(x), side(y))

    def response(self, x: View, y: View) -> list[str]:
        if _imported(x) or _imported(y):  # headers and ids of an import are filled in
            return self.lines(
                {"status": x.response.status, "streaming": x.streaming},
                {"status": y.response.status, "streaming": y.streaming},
            )

        def side(item: View) -> dict[str, Any]:
            r = item.response
            out: dict[str, Any] = {
                "status": r.status,
                "headers": self._headers(r.headers),
                "end": r.end,
                "streaming": item.streaming,
            }
            if item.final_body is None and not item.streaming:
                out["body"] = self._json(r.json_body) if r.json_body is not None else r.body
            return out

        return self.lines(side(x), side(y))

    def events(self, x: View, y: View) -> list[str]:
        ex, ey = x.response.events or [], y.response.events or []
        runs_x, runs_y = _runs([event_label(e) for e in ex]), _runs([event_label(e) for e in ey])
        out = []
        matcher = difflib.SequenceMatcher(None, runs_x, runs_y, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                out += [f"- {run}" for run in runs_x[i1:i2]] + [f"+ {run}" for run in runs_y[j1:j2]]
        if self.everything:
            out += self._timing(x, y)
            data = self.lines([e.data for e in ex], [e.data for e in ey])
            out += [f"data {line}" for line in data]
        if out:
            out.insert(0, f"{len(ex)} → {len(ey)} events")
        return out

    def _timing(self, x: View, y: View) -> list[str]:
        tx, ty = timings(x.response.events or []), timings(y.response.events or [])
        if tx == ty:
            return []

        def show(t: tuple[float, float] | None) -> str:
            return "no times" if t is None else f"first {t[0]:.3f} s, last {t[1]:.3f} s"

        return [f"timing: {show(tx)} → {show(ty)}"]

    def final(self, x: View, y: View) -> list[str]:
        if x.final_body is None and y.final_body is None:
            return []
        return self.lines(self._json(x.final_body), self._json(y.final_body))


def _runs(labels: list[str]) -> list[str]:
    out: list[list[Any]] = []
    for label in labels:
        if out and out[-1][0] == label:
            out[-1][1] += 1
        else:
            out.append([label, 1])
    return [label if n == 1 else f"{label} \u00d7{n}" for label, n in out]


def without_port(url: str) -> str:
    """``url`` with its host lower-cased and no port, as matching's ``host`` sees it
    (a local server on a fresh port each run still matches its recording)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    return parts._replace(netloc=host).geturl()


def _imported(item: View) -> bool:
    origin = item.interaction.origin
    return origin is not None and origin.get("source") == "trace"


def _step(item: View) -> str:
    """`` (step 3 of the trace)`` for an imported interaction."""
    origin = item.interaction.origin
    return f" (step {origin.get('step')} of the trace)" if origin and _imported(item) else ""


def one_form(a: list[View], b: list[View]) -> list[View]:
    """``a`` with each imported step served "as asked" kept in one form only: the one
    the interaction of ``b`` at the same place took (streamed or not)."""
    kept: list[View] = []
    seen: dict[object, int] = {}
    for item in a:
        origin = item.interaction.origin
        if not _imported(item) or origin is None or origin.get("serves") != "as asked":
            kept.append(item)
            continue
        step = (origin.get("trace"), origin.get("step"))
        if step not in seen:
            seen[step] = len(kept)
            kept.append(item)
            continue
        place = seen[step]
        other = b[place] if place < len(b) else None
        if other is not None and other.streaming == item.streaming:
            kept[place] = item
    return kept


def _key(item: View) -> tuple[str, str]:
    request = item.interaction.request
    parts = urlsplit(without_port(request.url))
    return request.method, f"{parts.scheme}://{parts.netloc}{parts.path}"


def pairs(a: list[View], b: list[View]) -> list[tuple[View | None, View | None]]:
    """Interactions of A and B paired by method and URL, in order."""
    matcher = difflib.SequenceMatcher(
        None, [_key(i) for i in a], [_key(i) for i in b], autojunk=False
    )
    out: list[tuple[View | None, View | None]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in {"equal", "replace"}:
            paired = min(i2 - i1, j2 - j1)
            out += [(a[i1 + k], b[j1 + k]) for k in range(paired)]
            out += [(x, None) for x in a[i1 + paired : i2]]
            out += [(None, y) for y in b[j1 + paired : j2]]
        elif tag == "delete":
            out += [(x, None) for x in a[i1:i2]]
        else:
            out += [(None, y) for y in b[j1:j2]]
    return out


def _title(x: View | None, y: View | None) -> str:
    item = x or y
    assert item is not None
    request = item.interaction.request
    what = f"{request.method} {request.url}"
    step = _step(x) if x is not None else _step(item)
    step = step or (_step(y) if y is not None else "")
    if x is None:
        return f"#{y.index if y else '?'} only in B: {what}{step}"
    if y is None:
        return f"#{x.index} only in A: {what}{step}"
    number = f"#{x.index}" if x.index == y.index else f"A#{x.index} B#{y.index}"
    return f"{number} {what}{step}"


def _compare(x: View | None, y: View | None, differ: _Differ) -> list[str]:
    if x is None or y is None:
        return [_title(x, y)]
    sections = (
        ("request", differ.request(x, y)),
        ("response", differ.response(x, y)),
        ("events", differ.events(x, y) if _events_known(x, y) else []),
        ("final message", differ.final(x, y)),
    )
    body = [
        line
        for name, found in sections
        if found
        for line in (f"  {name}:", *(f"    {item}" for item in found))
    ]
    return [_title(x, y), *body] if body else []


def _events_known(x: View, y: View) -> bool:
    """Whether the two event sequences are worth comparing: streams, and neither made
    up by an import (a trace holds no event boundaries)."""
    return (x.streaming or y.streaming) and not (_imported(x) or _imported(y))


def run(args: argparse.Namespace, output: Output) -> int:
    """``agentreplay diff A B``."""
    scrubber = Scrubber(keep_volatile=True) if args.all else default_scrubber()
    output.mask = scrubber.mask
    with reading(args.a):
        a = read_source(args.a)
    with reading(args.b):
        b = read_source(args.b)
    with reading(f"{args.a} and {args.b}"):
        return _diff(args, output, scrubber, a, b)


def _diff(
    args: argparse.Namespace, output: Output, scrubber: Scrubber, a: Source, b: Source
) -> int:
    differ = _Differ(args.all, max(1, args.limit), output.mask)
    # Compared as they would be saved: volatile headers dropped, ids normalized. With
    # --all those are kept, but never a secret: a pytest-recording cassette holds its
    # credential headers as recorded, and --all printed them (issue 27).
    left, right = (scrubber.scrub(c) for c in (a.cassette, b.cassette))
    view_a, view_b = views(left), views(right)
    view_a, view_b = one_form(view_a, view_b), one_form(view_b, view_a)
    blocks = [block for x, y in pairs(view_a, view_b) if (block := _compare(x, y, differ))]
    count_a, count_b = len(a.cassette.interactions), len(b.cassette.interactions)
    if not blocks:
        output.print(f"no differences ({count_a} interactions compared)")
        return EXIT_OK
    output.print(f"--- {a.path} ({count_a} interactions)")
    output.print(f"+++ {b.path} ({count_b} interactions)")
    for block in blocks:
        output.print()
        output.lines(block)
    output.print()
    output.print(f"{len(blocks)} interaction(s) differ.")
    return EXIT_FINDINGS
