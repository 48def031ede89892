"""The old name of :mod:`pytest_agentreplay.cassettes.cassette`, what a cassette holds.

An alias, so that ``from pytest_agentreplay.cassettes.model import Interaction``
written before the module was renamed keeps working: new code imports from
:mod:`pytest_agentreplay.cassettes`. Nothing in the package imports it (an
import-linter contract keeps it so): everywhere else, "model" means the LLM.
"""

from __future__ import annotations

from .cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
    cassette_from_data,
)

__all__ = [
    "Cassette",
    "Interaction",
    "RecordedEvent",
    "RecordedRequest",
    "RecordedResponse",
    "cassette_from_data",
]
