"""The backstop: find key-shaped strings and the values of API-key environment variables.

:func:`find` returns raw hits (offsets and a kind, the secret itself stays out of
every result); :func:`locate` turns an offset in a YAML (or JSON) document into
the field path of the scalar holding it, asking the cassettes' node locator
(:class:`~..cassettes.yaml.nodes.NodeLocator`), which composes the node tree —
never constructing objects, so hostile text cannot run code or expand aliases.

The shapes themselves, and why they hold no false positive on real recordings, are
in :mod:`.shapes`.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

from .escapes import unescaped
from .rules import ENV_SUFFIXES
from .shapes import KEY_SHAPES, Hit, shape_hits

__all__ = [
    "ENV_SUFFIXES",
    "KEY_SHAPES",
    "EnvNeedles",
    "Hit",
    "Needles",
    "PieceScan",
    "find",
    "locate",
    "merge_spans",
]


_MIN_ENV_LEN = 8


# -- environment variables ---------------------------------------------------------------


def _b64_fragments(value: bytes) -> set[str]:
    """The base64 text a value turns into wherever it sits in a longer encoded string
    (``Basic base64(user:KEY)``): for each of the 3 alignments, the characters that
    depend on the value's bytes only. Standard and URL-safe alphabets."""
    out: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + value).decode("ascii")
        first = -(-8 * offset // 6)
        last = (8 * (offset + len(value))) // 6
        core = encoded[first:last]
        out |= {core, core.translate(str.maketrans("+/", "-_"))}
    return out


def _forms(value: str) -> Iterable[tuple[str, str]]:
    """The value as it may appear in the text: as is, escaped by YAML or JSON (a quote
    or backslash in it), URL-encoded, base64-encoded."""
    yield value, ""
    escaped = {json.dumps(value, ensure_ascii=False)[1:-1], value.replace("'", "''")}
    for form in escaped - {value}:
        yield form, " (escaped)"
    for encoded in {quote(value, safe=""), quote_plus(value, safe="")} - {value}:
        yield encoded, " (url-encoded)"
    for fragment in _b64_fragments(value.encode("utf-8")):
        yield fragment, " (base64)"


def _is_candidate_name(name: str) -> bool:
    return name.upper().endswith(ENV_SUFFIXES)


def _is_candidate_value(value: str, ignore: frozenset[str]) -> bool:
    # Dummy values ("xxxxxxxx", "00000000", the placeholder itself) are not secrets.
    return len(value) >= _MIN_ENV_LEN and len(set(value)) >= 4 and value.lower() not in ignore


_NAMES_REMEMBERED = 4096
"""How many variable names :class:`EnvNeedles` remembers the verdict of (a suite that
sets ever new names cannot grow the memo without bound)."""


@dataclass(frozen=True)
class Needles:
    """The environment's secret values (and encodings) as they were at one moment: what
    one check searches for, however many texts it scans (issue 29: each window of a
    stream's assembled text read the whole environment again)."""

    items: tuple[tuple[str, str], ...]  # the (name, value) pairs they were built from
    pattern: re.Pattern[str] | None
    kinds: dict[str, str]  # needle -> kind

    def hits(self, text: str) -> Iterable[Hit]:
        """Every occurrence of a needle in ``text``."""
        if self.pattern is None:
            return
        for match in self.pattern.finditer(text):
            yield Hit(match.start(), match.end(), self.kinds[match.group(0)])


class EnvNeedles:
    """The exact values (and encodings) of secret-looking environment variables, as one
    regex; rebuilt only when the environment changed since the last look. The state
    is swapped as one object, so concurrent searches (threads) never see half of it.

    :meth:`current` reads the environment (``os.environ`` decodes every variable, tens
    of microseconds): a check takes it once and searches every text it scans with it."""

    def __init__(self, env: Mapping[str, str] | None, ignore: Iterable[str]) -> None:
        self._env = env
        self._ignore = frozenset(v.lower() for v in ignore)
        self._needles = Needles((), None, {})
        self._remembered: frozenset[tuple[str, str]] = frozenset()
        self._names: dict[str, bool] = {}  # a variable name -> whether it names a key

    def _current(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    def _candidates(self) -> frozenset[tuple[str, str]]:
        """The secret-looking variables now. Only the values of API-key-named variables
        are read: decoding every value of ``os.environ`` was most of a per-test cost
        (bench/ W4). A name's verdict is remembered; its value is read every time."""
        env, verdicts = self._current(), self._names
        found = []
        for name in list(env):
            verdict = verdicts.get(name)
            if verdict is None:
                if len(verdicts) >= _NAMES_REMEMBERED:
                    verdicts.clear()
                verdict = verdicts[name] = _is_candidate_name(name)
            if verdict:
                value = env.get(name)
                if value is not None and _is_candidate_value(value, self._ignore):
                    found.append((name, value))
        return frozenset(found)

    def remember(self) -> None:
        """Keep watching for the values the environment holds now, after they are gone
        from it. Issue 18: a key a test set with ``monkeypatch.setenv`` (or inside
        ``mock.patch.dict(os.environ)``) was restored away before the cassette was
        written, so the backstop no longer knew it and the key reached disk."""
        found = self._candidates()
        if not found <= self._remembered:  # swapped as one object: threads may call it
            self._remembered = self._remembered | found

    def current(self) -> Needles:
        """The values the environment holds now, with those remembered."""
        items = tuple(sorted(self._candidates() | self._remembered))
        current = self._needles
        if items == current.items:
            return current
        kinds: dict[str, str] = {}
        for name, value in items:
            for needle, how in _forms(value):
                kinds.setdefault(needle, f"env:{name}{how}")
        needles = sorted(kinds, key=len, reverse=True)
        pattern = re.compile("|".join(map(re.escape, needles))) if needles else None
        self._needles = current = Needles(items, pattern, kinds)
        return current

    def hits(self, text: str) -> Iterable[Hit]:
        """Every occurrence of a needle in ``text``, the environment read now."""
        return self.current().hits(text)

    def finder(self, allow: frozenset[str]) -> Callable[[str], list[Hit]]:
        """:func:`find` with the needles of now, for the texts of one check."""
        needles = self.current()
        return lambda text: find(text, needles, allow)


def find(text: str, env: EnvNeedles | Needles, allow: frozenset[str]) -> list[Hit]:
    """All hits in ``text``, sorted by position; strings in ``allow`` are never hits.
    Given :class:`EnvNeedles`, the environment is read once (a caller scanning many
    texts passes :meth:`EnvNeedles.current` instead).

    The text is read as written and as its readers decode it: a key whose characters
    are escaped (``sk\\u002dant…``, ``%2D``, ``\\x2d``) is found too, its kind marked
    ``(escaped)`` (issue 27, see :mod:`.escapes`)."""
    if isinstance(env, EnvNeedles):
        env = env.current()
    hits = {h for h in _plain_hits(text, env) if text[h.start : h.end] not in allow}
    view = unescaped(text)
    if view is not None:
        spans = {(h.start, h.end) for h in hits}
        for hit in _plain_hits(view.text, env):
            value = view.text[hit.start : hit.end]
            start, end = view.original(hit.start), view.original(hit.end)
            if value in allow or (start, end) in spans:
                continue  # allowed, or found as written already
            escaped = text[start:end] != value  # else only its context was escaped
            hits.add(Hit(start, end, f"{hit.kind} (escaped)" if escaped else hit.kind))
    return sorted(hits)


def _plain_hits(text: str, env: Needles) -> set[Hit]:
    hits = shape_hits(text)
    hits.update(env.hits(text))
    return hits


def merge_spans(hits: Iterable[Hit]) -> list[tuple[int, int]]:
    """Overlapping hit spans merged, in order (for masking)."""
    spans: list[tuple[int, int]] = []
    for hit in sorted(hits):
        if spans and hit.start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], hit.end))
        else:
            spans.append((hit.start, hit.end))
    return spans


# -- locating a hit in a YAML document ---------------------------------------------------


def _line_numbers(text: str, offsets: list[int]) -> dict[int, int]:
    """1-based line of each offset, counting newlines once across the whole text."""
    lines, line, last = {}, 1, 0
    for offset in sorted(set(offsets)):
        line += text.count("\n", last, offset)
        lines[offset], last = line, offset
    return lines


def locate(text: str, offsets: list[int]) -> list[str]:
    """For each offset, the field path of the scalar holding it (``interactions[2].
    request.headers.x-foo``), or ``line N`` when there is none (not YAML, a comment)."""
    # Only to place a finding: loading and replay never import PyYAML through here.
    from ..cassettes.yaml.nodes import NodeLocator  # noqa: PLC0415

    locator = NodeLocator(text)
    paths = [locator.field_at(offset) for offset in offsets]
    lines = _line_numbers(text, [o for o, p in zip(offsets, paths, strict=True) if p is None])
    return [p or f"line {lines[o]}" for o, p in zip(offsets, paths, strict=True)]


# -- a text too big to hold at once -------------------------------------------------------

OVERLAP = 1 << 16
"""Characters of the text before a piece that the piece is scanned with: a secret
shorter than this that straddles two pieces is whole in the second scan."""


class PieceScan:
    """Scans a text given piece by piece, never held whole: the cassette writer scans
    each piece of a 50 MB stream's text before it writes it (issue 18: the whole text,
    held to be scanned, was a third of recording's memory). Each piece is scanned with
    the end of the text before it, from a line start, so a hit across two pieces is
    whole in one scan. A hit may be a false one (a shape whose left context fell
    outside the scan): the caller then checks the whole text, which decides."""

    def __init__(self, find: Callable[[str], list[Hit]]) -> None:
        self._find = find
        self._carried = ""

    def finds(self, piece: str) -> bool:
        """Whether anything is found in ``piece`` (or across it and the text before)."""
        text = self._carried + piece
        if self._find(text):
            return True
        self._carried = _tail(text)
        return False


def _tail(text: str) -> str:
    """The last :data:`OVERLAP` characters of ``text``, from the start of a line when
    one starts there (a shape's left boundary is then the one the text has)."""
    tail = text[-OVERLAP:]
    newline = tail.find("\n")
    return tail[newline + 1 :] if newline >= 0 else tail
