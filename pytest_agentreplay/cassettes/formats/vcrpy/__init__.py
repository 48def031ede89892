"""vcrpy compatibility: the one home of vcrpy's cassette format and of vcrpy itself.

Everything the package knows of vcrpy / pytest-recording cassettes, and every use
of the ``vcr`` library, is in this folder; the rest of the package asks the names
re-exported here (import-linter contracts keep it so: nothing else imports ``vcr``
or one of these modules). Its pytest side — vcrpy's ``VCR()`` keys in the marker
and ``agentreplay_config``, pytest-recording's ``vcr`` fixture — is
:mod:`pytest_agentreplay.harness.vcrpy`.

* :mod:`.format`: vcrpy's YAML files, told from ours, read (stock PyYAML output,
  crewAI's, pydantic-ai's ``parsed_body``) into our cassette data, seen as written
  (for ``lint`` and ``convert``), and written (``agentreplay convert --to vcrpy``);
  vcrpy's default matching;
* :mod:`.objects`: one interaction to and from vcrpy's ``(Request, response dict)``
  pair;
* :mod:`.bridge`: vcrpy recording and replaying the clients the plugin does not
  hook itself (requests, urllib3, old aiohttp) into the test's cassette;
* :mod:`.filters`: vcrpy's ``filter_*`` / ``before_record_*`` / ``ignore_*``
  options, run by vcrpy's own filter functions on vcrpy's own objects;
* :mod:`.errors`: what goes wrong with each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_exports

if TYPE_CHECKING:
    from .bridge import (
        SKIPPED_HINT,
        VCRPY_FLOOR,
        BridgedSession,
        available,
        clients_imported,
        require_vcrpy,
        too_old,
        vcr_cassette,
    )
    from .errors import UnrecordableRequestError, VcrFilterError, VcrpyVersionError
    from .filters import VcrFilters
    from .format import (
        FIELD_NAMES,
        MATCH_ON,
        from_vcr_data,
        reshaped,
        sent_body,
        sniff,
        sniff_data,
        source_loc,
        stored_responses,
        vcr_text,
        vcr_versioned,
    )
    from .objects import from_vcr, response_bytes, to_vcr, vcr_request, vcr_response

__all__ = [
    "FIELD_NAMES",
    "MATCH_ON",
    "SKIPPED_HINT",
    "VCRPY_FLOOR",
    "BridgedSession",
    "UnrecordableRequestError",
    "VcrFilterError",
    "VcrFilters",
    "VcrpyVersionError",
    "available",
    "clients_imported",
    "from_vcr",
    "from_vcr_data",
    "require_vcrpy",
    "reshaped",
    "response_bytes",
    "sent_body",
    "sniff",
    "sniff_data",
    "source_loc",
    "stored_responses",
    "to_vcr",
    "too_old",
    "vcr_cassette",
    "vcr_request",
    "vcr_response",
    "vcr_text",
    "vcr_versioned",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".bridge": (
                "SKIPPED_HINT",
                "VCRPY_FLOOR",
                "BridgedSession",
                "available",
                "clients_imported",
                "require_vcrpy",
                "too_old",
                "vcr_cassette",
            ),
            ".errors": (
                "UnrecordableRequestError",
                "VcrFilterError",
                "VcrpyVersionError",
            ),
            ".filters": ("VcrFilters",),
            ".format": (
                "FIELD_NAMES",
                "MATCH_ON",
                "from_vcr_data",
                "reshaped",
                "sent_body",
                "sniff",
                "sniff_data",
                "source_loc",
                "stored_responses",
                "vcr_text",
                "vcr_versioned",
            ),
            ".objects": (
                "from_vcr",
                "response_bytes",
                "to_vcr",
                "vcr_request",
                "vcr_response",
            ),
        },
    )
