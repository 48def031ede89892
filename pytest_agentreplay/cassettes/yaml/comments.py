"""The ``#`` comments of a YAML document, counted: what a rewrite of the file drops.

``agentreplay redact`` rewrites a cassette in the writer's layout and ``convert``
writes a new file; neither keeps comments, so both say how many lines held one.
The document is scanned into tokens (nothing is composed or built), so a ``#``
inside a quoted or block scalar is not taken for a comment.
"""

from __future__ import annotations

import bisect
import re

import yaml

__all__ = ["comment_lines"]

_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#", re.MULTILINE)


def comment_lines(text: str) -> int:
    """How many lines of a YAML document hold a ``#`` comment (a rewrite drops them)."""
    if "#" not in text:
        return 0
    spans: list[tuple[int, int]] = []
    try:
        for token in yaml.scan(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(token, yaml.ScalarToken):
                spans.append((token.start_mark.index, token.end_mark.index))
    except yaml.YAMLError:
        return 0
    starts = [start for start, _ in spans]
    lines = set()
    for match in _COMMENT.finditer(text):
        at = bisect.bisect_right(starts, match.start()) - 1
        if at < 0 or spans[at][1] <= match.start():
            lines.add(text.count("\n", 0, match.start()))
    return len(lines)
