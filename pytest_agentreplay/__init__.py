"""pytest-agentreplay: deterministic tests for LLM agents.

Public names are re-exported here and loaded on first use, so that importing
the pytest plugin (which imports this package) costs nothing in test suites
that never use them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .cassettes.miss import CassetteMiss
    from .errors import AgentReplayError, CodecError, SSEDecodeError, SSEEncodeError
    from .fakes import FakeModel, UnexpectedModelCall
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
    from .transport.children import NetworkNamespaceUnavailable, no_network
    from .transport.egress import EgressBlocked

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

_LAZY = {
    "AgentReplayError": ".errors",
    "CodecError": ".errors",
    "SSEDecodeError": ".errors",
    "SSEEncodeError": ".errors",
    "EgressBlocked": ".transport.egress",
    "NetworkNamespaceUnavailable": ".transport.children",
    "no_network": ".transport.children",
    "CassetteMiss": ".cassettes.miss",
    "FakeModel": ".fakes",
    "UnexpectedModelCall": ".fakes",
    "FaultPlan": ".neutral",
    "Fault": ".neutral",
    "ModelCall": ".neutral",
    "Reply": ".neutral",
    "Request": ".neutral",
    "Citation": ".neutral",
    "SearchResult": ".neutral",
    "ServerToolCall": ".neutral",
    "Text": ".neutral",
    "Thinking": ".neutral",
    "ToolCall": ".neutral",
    "Usage": ".neutral",
}


# Submodules reachable as attributes (``pytest_agentreplay.strategies``) without an
# import of their own; left out of ``__all__`` so that ``import *`` stays light
# (strategies imports hypothesis, the snapshot extension syrupy).
_SUBMODULES = frozenset({"cassettes", "invariants", "runlog", "snapshot", "strategies"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_agentreplay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *_SUBMODULES})
