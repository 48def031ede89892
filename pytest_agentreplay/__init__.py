"""pytest-agentreplay: deterministic tests for LLM agents.

Public names are re-exported here and loaded on first use, so that importing
the pytest plugin (which imports this package) costs nothing in test suites
that never use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from ._version import __version__

if TYPE_CHECKING:
    from . import cassettes as cassettes
    from . import invariants as invariants
    from . import runlog as runlog
    from . import snapshot as snapshot
    from . import strategies as strategies
    from .cassettes.errors import CassetteMiss
    from .errors import AgentReplayError, CodecError, SSEDecodeError, SSEEncodeError
    from .fakes.errors import UnexpectedModelCall
    from .fakes.fake_model import FakeModel
    from .neutral import (
        Citation,
        Fault,
        FaultPlan,
        ModelCall,
        Reply,
        Request,
        SearchResult,
        ServerToolCall,
        Text,
        Thinking,
        ToolCall,
        Usage,
    )
    from .transport.children import no_network
    from .transport.errors import EgressBlocked, NetworkNamespaceUnavailable

__all__ = [
    "AgentReplayError",
    "CassetteMiss",
    "Citation",
    "CodecError",
    "EgressBlocked",
    "FakeModel",
    "Fault",
    "FaultPlan",
    "ModelCall",
    "NetworkNamespaceUnavailable",
    "Reply",
    "Request",
    "SSEDecodeError",
    "SSEEncodeError",
    "SearchResult",
    "ServerToolCall",
    "Text",
    "Thinking",
    "ToolCall",
    "UnexpectedModelCall",
    "Usage",
    "__version__",
    "no_network",
]

# Submodules reachable as attributes (``pytest_agentreplay.strategies``) without an
# import of their own; left out of ``__all__`` so that ``import *`` stays light
# (strategies imports hypothesis, the snapshot extension syrupy).
if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".errors": ("AgentReplayError", "CodecError", "SSEDecodeError", "SSEEncodeError"),
            ".transport.errors": ("EgressBlocked", "NetworkNamespaceUnavailable"),
            ".transport.children": ("no_network",),
            ".cassettes.errors": ("CassetteMiss",),
            ".fakes.fake_model": ("FakeModel",),
            ".fakes.errors": ("UnexpectedModelCall",),
            ".neutral": (
                "Citation",
                "Fault",
                "FaultPlan",
                "ModelCall",
                "Reply",
                "Request",
                "SearchResult",
                "ServerToolCall",
                "Text",
                "Thinking",
                "ToolCall",
                "Usage",
            ),
        },
        submodules=("cassettes", "invariants", "runlog", "snapshot", "strategies"),
    )
