"""The cassette miss: the one place its report is built.

In the replaying modes a request that matches no recorded interaction, and may not
go out live, fails the test at once. :func:`cassette_miss` builds that failure for
every client bridge (httpx, and requests / urllib3 / aiohttp through vcrpy): the
request, the cassette, the test and the record mode; when the cassette exists, the
closest recorded interactions and how each differs (:func:`.matching.explain_miss`);
and the command that re-records it. Every word passes through the scrubber's mask.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .cassette import RecordedRequest
from .errors import CassetteMiss
from .matching import Index, explain_miss

__all__ = ["CassetteMiss", "cassette_miss", "renaming_hint"]

_RECORD_ONCE = "pytest --agentreplay-record-mode=once"


def cassette_miss(
    request: RecordedRequest,
    index: Index | None,
    *,
    cassette: Path,
    test: str,
    record_mode: str,
    rerecord: str,
    mask: Callable[[str], str],
    elsewhere: Path | None = None,
    client: str | None = None,
) -> CassetteMiss:
    """The failure for ``request`` (scrubbed, as matched): ``index`` is the cassette's
    recorded requests, ``None`` when there is no cassette file; ``rerecord`` a record
    mode or a whole command to suggest; ``elsewhere`` the file pytest-recording named
    for this test, when it is there instead; ``client`` the library that sent the
    request (a line of the report: in a mixed suite, which client missed)."""
    if index is None:
        message = (
            f"pytest-agentreplay: no cassette at {cassette} (record mode "
            f"{record_mode!r}) for {request.method} {request.url} in test "
            f"{test}. Record it with: {rerecord or _RECORD_ONCE}"
        )
        if elsewhere is not None:
            message += f". {renaming_hint(elsewhere, cassette)}"
    else:
        message = explain_miss(
            request,
            index,
            cassette=cassette,
            test=test,
            record_mode=record_mode,
            rerecord=rerecord,
            mask=mask,
        )
    if client:
        first, _, rest = message.partition("\n")
        message = f"{first}\nsent by: {client}" + (f"\n{rest}" if rest else "")
    return CassetteMiss(mask(message))


def renaming_hint(found: Path, cassette: Path) -> str:
    """What to do when pytest-recording's file for a test is there under its name
    (``found``) and the test's cassette is not: rename it, or point at it."""
    return (
        f"pytest-recording's name for this test's cassette is there: {found.name}. This "
        f"plugin adds a short hash to a name with a character a file name cannot hold "
        f"(two tests never share a file): rename it to {cassette.name}, or pass "
        f"cassette='{found.name}'"
    )
