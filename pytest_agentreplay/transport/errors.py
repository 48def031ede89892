"""The exceptions of the transport: a call the egress guard refused, a network namespace
the child guard could not get, and a request the loopback server could not read."""

from __future__ import annotations

from _pytest.outcomes import Failed  # pytest.fail.Exception, importable as a base

from ..errors import AgentReplayError

__all__ = [
    "BadRequestError",
    "EgressBlocked",
    "IncompleteRequestError",
    "NetworkNamespaceUnavailable",
]


class EgressBlocked(Failed):
    """A live network call was refused because the test runs in replay mode.

    A pytest failure outcome (``pytest.fail.Exception``), hence a ``BaseException``:
    agent code's ``except Exception`` and SDK retry loops cannot swallow it, while
    test runners that pass pytest outcomes through — anyio's, for async tests —
    report it as the test's failure instead of treating it like Ctrl-C.
    """


class NetworkNamespaceUnavailable(AgentReplayError):  # noqa: N818 - says what it means
    """No network namespace can be made here: the reason says why (not Linux, no
    ``unshare``, user namespaces not permitted)."""


class BadRequestError(Exception):
    """A request that cannot be read: answer ``status`` with ``reason``, then close."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class IncompleteRequestError(Exception):
    """The client closed (or reset) the connection before its request was whole."""
