"""A text as its readers decode it: escaped key characters written out, for the backstop.

A key can reach a cassette written in escapes a reader decodes: a provider's stream
data with ``sk\\u002dant…`` (JSON), a YAML double-quoted ``sk\\x2dant…``, a URL with
``sk%2Dant…``, a tool call's arguments escaped twice (JSON in JSON: ``\\\\u002d``),
PHP's ``hooks.slack.com\\/services\\/…``. Issue 27 found the first one written to disk
readable, though the key was also the ``ANTHROPIC_API_KEY`` value: the key shapes and
the environment's values are matched against the text as written.

:func:`unescaped` gives the text with every escape of a character that can be part of a
key (letters, digits, ``-_.~+/=:@``) replaced by that character, and maps offsets in it
back to the text. No encoder ever needs to escape those characters, so ordinary text
has none of these escapes and costs one regular-expression search; only a text with
one gets a second look.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["Unescaped", "unescaped"]

# Two hex digits naming a character a key may hold: 0-9 : = (0x30-0x3D), @ A-O (0x40-0x4F),
# P-Z _ (0x50-0x5A, 0x5F), ` a-o (0x60-0x6F), p-z ~ (0x70-0x7A, 0x7E), + - . / (0x2B-0x2F).
_HEX = r"(?:3[0-9ADad]|[46][0-9A-Fa-f]|[57][0-9Aa]|2[BDEFbdef]|5[Ff]|7[Ee])"
_ESCAPE = re.compile(
    r"\\+(?:u00(" + _HEX + r")|x(" + _HEX + r")|U000000(" + _HEX + r")|(/))|%(" + _HEX + r")"
)
# Found first by patterns that start with fixed text (the regex engine skips ahead to it
# at C speed): one pattern for every escape, starting with no fixed text, was tried at
# every position and halved the backstop's speed; four substring searches cost eight
# times what one pattern starting with a backslash costs.
_PERCENT = re.compile("%" + _HEX)
_BACKSLASHED = re.compile(r"\\(?:u00" + _HEX + r"|x" + _HEX + r"|U000000" + _HEX + r"|/)")


@dataclass(frozen=True)
class Unescaped:
    """``text`` is the decoded view; ``original(offset)`` its offset in the source."""

    text: str
    _view: tuple[int, ...]  # offsets in the view where a stretch starts...
    _source: tuple[int, ...]  # ... and where that stretch starts in the source

    def original(self, offset: int) -> int:
        """The source offset of view offset ``offset`` (an escape maps to its start, the
        end of a decoded character to the end of its escape)."""
        at = bisect.bisect_right(self._view, offset) - 1
        return self._source[at] + (offset - self._view[at])


def _has_escape(text: str) -> bool:
    # The regex engine reads from the first backslash (or ``%``) on, found by a memchr
    # ten times faster than it reads (issue 29).
    first = text.find("\\")
    if first >= 0 and _BACKSLASHED.search(text, first) is not None:
        return True
    first = text.find("%")
    return first >= 0 and _PERCENT.search(text, first) is not None


def unescaped(text: str) -> Unescaped | None:
    """``text`` with every escaped key character decoded, or ``None`` when it has none."""
    if not _has_escape(text):
        return None
    pieces: list[str] = []
    view, source = [0], [0]
    last = length = 0
    for match in _ESCAPE.finditer(text):
        hexa = match.group(1) or match.group(2) or match.group(3) or match.group(5)
        char = "/" if match.group(4) else chr(int(hexa, 16))
        pieces += [text[last : match.start()], char]
        length += match.start() - last
        view.append(length)
        source.append(match.start())
        length += 1
        view.append(length)
        source.append(match.end())
        last = match.end()
    pieces.append(text[last:])
    return Unescaped("".join(pieces), tuple(view), tuple(source))
