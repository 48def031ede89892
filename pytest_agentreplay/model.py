"""The old name of :mod:`pytest_agentreplay.neutral`, the provider-neutral types.

An alias, so that ``from pytest_agentreplay.model import Request`` written before
the package was renamed keeps working: new code imports from
:mod:`pytest_agentreplay` or :mod:`pytest_agentreplay.neutral`. Nothing in the
package imports it (an import-linter contract keeps it so): everywhere else,
"model" means the LLM (``FakeModel``, ``scripted_model``, ``ModelCall``).
"""

from __future__ import annotations

# The new module's public names, the same objects, whatever it adds later.
from .neutral import *  # noqa: F403
from .neutral import __all__  # noqa: F401 - its public names are the alias's
