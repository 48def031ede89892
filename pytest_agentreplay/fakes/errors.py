"""The exceptions of the fake models."""

from __future__ import annotations

from _pytest.outcomes import Failed  # pytest.fail.Exception, importable as a base

__all__ = ["UnexpectedModelCall"]


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
