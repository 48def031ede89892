"""The exceptions of the fake models."""

from __future__ import annotations

from _pytest.outcomes import Failed  # pytest.fail.Exception, importable as a base

from ..errors import AgentReplayError

__all__ = ["ControlRequestError", "UnexpectedModelCall"]


class UnexpectedModelCall(Failed):
    """A fake model received a call its script does not cover (the script ran out and
    there is no ``respond`` function).

    A pytest failure outcome (``pytest.fail.Exception``), like
    :class:`~..transport.errors.EgressBlocked`: issue 20 saw a provider 500 here
    retried ten times by the SDK and the agent (about 9 s of backoff) and the user's
    own error shown instead of this one. Raised from the client's send, it passes
    through ``except Exception`` and every retry loop and fails the test at once,
    naming the call number and the request (secrets masked).
    """


class ControlRequestError(AgentReplayError, ValueError):
    """A request to the control API of ``agentreplay serve`` that cannot be done:
    answered with ``status`` (``400`` for a body that is no valid instruction), naming
    the ``field`` (``replies[0].fault.after_event``) and what to send instead."""

    def __init__(self, message: str, *, field: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.field = field
        self.status = status
