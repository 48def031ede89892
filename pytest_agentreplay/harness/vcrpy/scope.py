"""What vcrpy adds to a test's cassette scope (:mod:`..scopes`): the filters its
options ask for, and the bridge for the clients the plugin does not hook itself."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...cassettes.formats.vcrpy import VcrFilters
    from ...cassettes.session import CassetteSession
    from ...transport.router import Router
    from .config import VcrOptions

__all__ = ["bridge_for", "filters_for"]


def bridge_for(mode: str, session: CassetteSession, router: Router) -> AbstractContextManager[None]:
    """vcrpy records and replays requests / urllib3 / aiohttp into the same cassette,
    when it is installed and wanted (``mode``, the ini key ``agentreplay_vcr``:
    patching their modules costs about 2 ms a test, so by default it is done only
    where it can matter)."""
    from ...cassettes.formats import vcrpy  # noqa: PLC0415 - only in a cassette test

    if mode == "never" or not vcrpy.available():
        return nullcontext()
    if mode == "auto" and not session.recording and not vcrpy.clients_imported():
        router.hint += f" {vcrpy.SKIPPED_HINT}"
        return nullcontext()
    return vcrpy.vcr_cassette(session)


def filters_for(options: VcrOptions | None) -> VcrFilters | None:
    """vcrpy's filters of the test's ``agentreplay_config`` / marker, when it sets any."""
    if options is None or not options.filters:
        return None
    from ...cassettes.formats.vcrpy import VcrFilters  # noqa: PLC0415 - vcrpy is optional

    return VcrFilters(options.filters)
