"""The old name of :mod:`pytest_agentreplay.cassettes.cassette`, what a cassette holds.

An alias, so that ``from pytest_agentreplay.cassettes.model import Interaction``
written before the module was renamed keeps working: new code imports from
:mod:`pytest_agentreplay.cassettes`. Nothing in the package imports it (an
import-linter contract keeps it so): everywhere else, "model" means the LLM.
"""

from __future__ import annotations

# The new module's public names, the same objects, whatever it adds later.
from .cassette import *  # noqa: F403
from .cassette import __all__  # noqa: F401 - its public names are the alias's
