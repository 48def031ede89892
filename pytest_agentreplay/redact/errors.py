"""The exceptions of the scrubbing folder: a body it cannot decode to scrub.

:class:`~pytest_agentreplay.redact.SecretLeakError` (a secret found before a write)
is still defined with the scrubber, in the package's ``__init__``: it joins this
module when the scrubber gets a module of its own (issue 28).
"""

from __future__ import annotations

__all__ = ["UnreadableBodyError"]


class UnreadableBodyError(Exception):
    """An opaque body the backstop cannot read: ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
