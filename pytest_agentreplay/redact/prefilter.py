"""Where a key shape may start: every shape's fixed starts, found in a few passes.

Issue 29: the backstop searched each of its 40 anchors on its own (``"gl" in text``,
then a regex pass): 40 reads of every text, each at the speed of a byte loop, and the
short anchors (``gl``, ``SK``) hit almost any text, so their patterns ran too. A
regular expression that starts with one fixed character is scanned by the regex engine
at C speed, whatever follows it; one that starts with a choice of characters is ten
times slower. So the starts are grouped by one character each of them holds, chosen
to cover all starts with as few and as rare characters as possible (``-`` covers
``sk-``, ``xoxb-``, ``glpat-`` and ``-----BEGIN``; ``A`` covers ``AIza``, ``AKIA``
and ``AccountKey=``), and each group is one pass: that character, then a choice of
look-behinds and look-aheads that spell each start around it. A text is read once per
group (a dozen), and only the places where a start is spelled reach Python.

The passes only say where to look: each shape's own pattern is then matched at those
places (:func:`.shapes.shape_hits`), so what is found does not change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Prefilter", "Trigger"]

# How often each character occurs in the project's real recordings, per 100,000
# characters (measured on tests/corpus/real, cassettes/ and examples/): a pass costs a
# read of the text plus a look at each occurrence of its character, so rare ones are
# cheaper. A character not listed is taken as rare (an uppercase letter is ~180).
_FREQUENCY: Mapping[str, int] = {
    " ": 14200, "e": 6740, "t": 5240, "o": 4350, "n": 3860, "a": 3480, "s": 3130,
    ":": 2960, "r": 2820, "i": 2670, "c": 2600, "d": 2440, "l": 2380, "u": 2270,
    "p": 2060, "m": 1490, "h": 1450, "_": 1400, "f": 1250, "b": 1170, "g": 1150,
    "0": 1130, "y": 1100, "x": 1030, "-": 890, ".": 880, "v": 840, "k": 840,
    "1": 830, "8": 750, "2": 700, "6": 660, "q": 620, "j": 620, "4": 610, "w": 570,
    "T": 560, "7": 540, "z": 530, "9": 460, "5": 400, "3": 390, "/": 230, "=": 30,
}  # fmt: skip
_RARE = 180
_LOOK_BACK = 20
"""How much more a start costs a pass when it must be looked back at from every
occurrence of the pass's character than when the engine rejects it at a glance..."""
_SHARED_LOOK_BACK = 1.5
"""... and when the pass looks back already (its look-back at the character before then
lets more through)."""
_PASS_COST = 1000
"""What one more pass costs, in occurrences of its character: a pass reads the text at
about 0.3 ns a character, an occurrence costs the engine about 30 times that."""


@dataclass(frozen=True)
class Trigger:
    """``text`` (fixed) at a place means shape ``owner`` may match ``offset`` characters
    after it; ``guard``, a regular expression, must match right after ``text`` too (the
    Discord token's ``.xxxxxx.`` after its fixed ``.``)."""

    text: str
    owner: str
    offset: int = 0
    guard: str = ""


@dataclass(frozen=True)
class _Pass:
    char: str
    pattern: re.Pattern[str]
    members: tuple[tuple[Trigger, int], ...]  # each trigger and where ``char`` is in it


def _cost(char: str) -> int:
    return _PASS_COST + _FREQUENCY.get(char, _RARE)


def _choose(triggers: Iterable[Trigger]) -> dict[str, list[tuple[Trigger, int]]]:
    """The triggers by the character each is found by. The characters are a greedy
    cover, each round taking the one with the lowest cost per trigger it finds; then
    each trigger goes to the pass where it is cheapest (:func:`_placing`)."""
    triggers = list(dict.fromkeys(triggers))
    left, chosen = triggers, []
    while left:
        counts: dict[str, int] = {}
        for trigger in left:
            for char in set(trigger.text):
                counts[char] = counts.get(char, 0) + 1
        char = min(counts, key=lambda c: (_cost(c) / counts[c], c))
        chosen.append(char)
        left = [t for t in left if char not in t.text]
    groups: dict[str, list[tuple[Trigger, int]]] = {char: [] for char in chosen}
    places = {t: [(c, at) for at, c in enumerate(t.text) if c in groups] for t in triggers}
    # The passes some start can only look back in: others may look back there too, at
    # little more cost (they share the one look-back at the character before).
    gated = {
        char
        for trigger, options in places.items()
        if all(_looks_back(trigger, at) for _, at in options)
        for char, _ in [min(options, key=lambda option: _FREQUENCY.get(option[0], _RARE))]
    }
    for trigger, options in places.items():
        char, at = min(options, key=lambda o: _placing(trigger, o[0], o[1], gated))
        groups[char].append((trigger, at))
    return {char: members for char, members in groups.items() if members}


def _looks_back(trigger: Trigger, at: int) -> bool:
    """Whether ``trigger``, found by its character at ``at``, ends there (and is checked
    by looking back)."""
    return 0 < at == len(trigger.text) - 1 and not trigger.guard


def _placing(trigger: Trigger, char: str, at: int, gated: set[str]) -> tuple[float, int]:
    """What finding ``trigger`` by its ``char`` at ``at`` costs, in proportion to how
    often ``char`` occurs: a start that ends there must be looked back at from every
    occurrence (``ya29.`` in the ``.`` pass), unless the pass looks back already; one
    that goes on is rejected at a glance (``ya29.`` in the ``a`` pass, as ``a`` then
    ``29.``)."""
    frequency = _FREQUENCY.get(char, _RARE)
    if not _looks_back(trigger, at):
        return frequency, at
    return frequency * (_SHARED_LOOK_BACK if char in gated else _LOOK_BACK), at


def _compile(char: str, members: list[tuple[Trigger, int]]) -> _Pass:
    """One pass: ``char``, then one look-ahead holding a choice of the starts around
    it. Each choice begins with a fixed character where it can (the engine rejects it
    at a glance): ``sk_live_`` and ``rk_live_``, keyed on their first ``_``, become
    ``live_(?<=sk_live_|rk_live_)``. The starts that end at ``char`` can only look back,
    and a look-back costs the engine ten times more, so they share one: the character
    before ``char`` (``gsk_``, ``ghp_``, ``hf_``: ``(?<=[kpf]_)``), then the two before
    it (``(?<=(?:sk|hp|hf)_)``), before their own: most places fail the first."""
    ahead: dict[tuple[str, str, int], list[str]] = {}  # (what follows, guard, width) -> leads
    behind: dict[int, list[str]] = {}  # width -> the starts that end at ``char``
    for trigger, at in members:
        before, after = trigger.text[: at + 1], trigger.text[at + 1 :]
        if at and not after and not trigger.guard:
            behind.setdefault(len(before), []).append(before)
        else:
            ahead.setdefault((after, trigger.guard, len(before)), []).append(before)
    spelled: list[tuple[str, str]] = []  # what follows, then what to look back at
    choices = []
    for (after, guard, _), befores in ahead.items():
        if not guard and all(before == char for before in befores):
            spelled.append((after, ""))
        elif not guard:
            looks = "|".join(re.escape(before + after) for before in dict.fromkeys(befores))
            spelled.append((after, f"(?<={looks})"))
        else:  # a pattern follows: look back first (rare: the Discord token's ".")
            looks = "|".join(map(re.escape, dict.fromkeys(befores)))
            behind_first = "" if befores == [char] else f"(?<={looks})"
            choices.append(behind_first + re.escape(after) + guard)
    if spelled:
        choices.insert(0, _trie(spelled))
    groups = [
        "(?<=" + "|".join(map(re.escape, dict.fromkeys(befores))) + ")"
        for _, befores in sorted(behind.items())
    ]
    if len(groups) > 1:
        starts = [b for befores in behind.values() for b in befores]
        gate = "".join(sorted({b[-2] for b in starts}))
        gated = f"(?<=[{re.escape(gate)}]{re.escape(char)})"
        if min(map(len, starts)) > 2:  # then the two before it (``nt-`` is not ``gpt-``)
            pairs = "|".join(sorted({re.escape(b[-3:-1]) for b in starts}))
            gated += f"(?<=(?:{pairs}){re.escape(char)})"
        choices.append(f"{gated}(?:{'|'.join(groups)})")
    else:
        choices += groups
    body = "" if "" in choices else "(?=" + "|".join(dict.fromkeys(choices)) + ")"
    return _Pass(char, re.compile(re.escape(char) + body), tuple(members))


def _trie(spelled: list[tuple[str, str]]) -> str:
    """``spelled`` (fixed text, then a look-back) as one choice, the texts sharing their
    common beginnings (``access(?:_key|Key)``): the engine tries one character for all
    the texts that begin with it, not one per text."""
    ends = [tail for text, tail in spelled if not text]
    firsts: dict[str, list[tuple[str, str]]] = {}
    for text, tail in spelled:
        if text:
            firsts.setdefault(text[0], []).append((text[1:], tail))
    choices = list(dict.fromkeys(ends)) + [
        re.escape(first) + _trie(rest) for first, rest in firsts.items()
    ]
    return choices[0] if len(choices) == 1 else "(?:" + "|".join(choices) + ")"


class Prefilter:
    """The places each owner's triggers are found in a text."""

    def __init__(self, triggers: Iterable[Trigger]) -> None:
        groups = _choose(triggers)
        self.passes = tuple(_compile(char, members) for char, members in groups.items())

    def find(self, text: str) -> dict[str, list[int]]:
        """For each owner with a trigger in ``text``, the offsets its shape may match at,
        in order, each once."""
        found: dict[str, list[int]] = {}
        for each in self.passes:
            # One memchr, ten times faster than the regex engine reads: a text often lacks
            # a pass's character, and a rare one's first place is often far in.
            first = text.find(each.char)
            if first < 0:
                continue
            match = each.pattern.search(text, first)  # cheaper than finditer if none is
            while match is not None:
                place = match.start()
                for trigger, at in each.members:
                    start = place - at
                    if start >= 0 and text.startswith(trigger.text, start):
                        found.setdefault(trigger.owner, []).append(start + trigger.offset)
                match = each.pattern.search(text, place + 1)
        for owner, places in found.items():
            found[owner] = sorted(set(places))
        return found
