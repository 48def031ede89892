"""The writer's last check: the file it wrote loads back as the cassette it was given.

A writer bug (a value it quotes wrongly, an event it drops) must never replace a
good cassette. So before the temporary file takes the cassette's name, it is read
back and compared with what was meant. Up to 1 MB the independent libyaml loader
reads it, so that a writer bug cannot hide behind the canonical reader that mirrors
it; beyond that libyaml would take seconds, and the canonical reader reads the file
a block of lines at a time, each event compared and dropped as it is read: a 50 MB stream is
verified without its text, its lines or a second model in memory (issue 18). Only
when that fails is the file read whole, to say why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import CassetteFormatError
from .cassette import Cassette
from .normal import EventCheck, same, same_data
from .yaml.errors import NotCanonicalError
from .yaml.fast import scan_canonical_file

__all__ = ["LIBYAML_UP_TO", "verify_file"]

LIBYAML_UP_TO = 1024 * 1024
"""Bytes: a file up to this size is read back by libyaml, a larger one line by line."""

Loader = Callable[[bytes], Cassette]


def verify_file(
    written: Path, expected: Cassette, path: str, *, fast: Loader, safe: Loader
) -> None:
    """Raise :class:`CassetteFormatError` (naming ``path``, the cassette's name) unless
    the file ``written`` loads back as ``expected``, which is normalized. ``safe``
    loads a file's bytes with libyaml, ``fast`` as replay does."""
    big = written.stat().st_size > LIBYAML_UP_TO
    if big and _reads_back(written, expected):
        return
    try:
        again = (fast if big else safe)(written.read_bytes())
    except CassetteFormatError as exc:
        loaded, problem = None, str(exc)
    else:
        loaded, problem = again, "it loads back as a different cassette"
    if loaded is None or not same(loaded, expected):
        raise CassetteFormatError(
            f"the text to write would not load back: {problem}",
            path=path,
            hint="Nothing was written. This is a bug in pytest-agentreplay: please report it.",
        )


def _reads_back(written: Path, expected: Cassette) -> bool:
    """Whether the canonical reader reads the file as exactly ``expected``'s data: then
    loading it gives ``expected`` back (``expected`` is normalized, so building it
    from that data and writing it again gives the same text). Cheaper than loading:
    no second model and no text of a 50 MB stream (issue 18)."""
    check = EventCheck(expected)
    try:
        data = scan_canonical_file(written, event=check)
    except NotCanonicalError:
        return False  # the full check decides, and explains
    return check.passed() and same_data(data, expected)
