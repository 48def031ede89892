"""The exceptions of vcrpy compatibility: an installed vcrpy too old, a filter that
returned what vcrpy would not store, a request body vcrpy cannot give back."""

from __future__ import annotations

from ....errors import AgentReplayError

__all__ = ["UnrecordableRequestError", "VcrFilterError", "VcrpyVersionError"]


class UnrecordableRequestError(AgentReplayError):
    """A request vcrpy handed over whose body is an object we cannot turn into the bytes
    the client sent (an aiohttp ``FormData``, a payload object)."""


class VcrpyVersionError(AgentReplayError):
    """The installed vcrpy is older than :data:`~.bridge.VCRPY_FLOOR`."""


class VcrFilterError(AgentReplayError):
    """A ``before_record_response`` returned something that is not vcrpy's response dict."""
