"""The exceptions of the scrubbing folder, and what they report.

:class:`SecretLeakError` is a write refused because a secret survived scrubbing; each
:class:`Finding` says where and what kind, never the value. :class:`UnreadableBodyError`
is an opaque body the backstop cannot decode to check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentReplayError

__all__ = ["Finding", "SecretLeakError", "UnreadableBodyError"]

_MAX_LISTED = 20


@dataclass(frozen=True)
class Finding:
    """One secret that survived scrubbing: *where* (a field path such as
    ``interactions[2].request.headers.x-foo``, else ``line N``) and *what kind*
    (``anthropic-key``, ``env:OPENAI_API_KEY (base64)``, ...). Never the value."""

    where: str
    kind: str


class SecretLeakError(AgentReplayError):
    """A write was refused because the text still holds a secret.

    ``path`` is the file that was not written (``None`` when checking text that is
    not headed for a file) and ``findings`` say where and what kind; neither the
    message nor the attributes contain the secret itself.
    """

    def __init__(self, path: Path | None, findings: list[Finding]) -> None:
        self.path = path
        self.findings = findings
        super().__init__(_leak_message(path, findings))

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep the attributes when pickled (xdist ships errors between processes).
        return (type(self), (self.path, self.findings))


def _leak_message(path: Path | None, findings: list[Finding]) -> str:
    target = f"refusing to write {path}" if path is not None else "secret check failed"
    lines = [f"  {f.where}: {f.kind}" for f in findings[:_MAX_LISTED]]
    if len(findings) > _MAX_LISTED:
        lines.append(f"  ... and {len(findings) - _MAX_LISTED} more")
    return "\n".join(
        [
            f"{target}: {len(findings)} secret(s) survived scrubbing:",
            *lines,
            "Nothing was written; an existing cassette is unchanged. Scrub the field with "
            "Scrubber(extra_headers=..., extra_query_params=..., extra_body_keys=...) or a "
            "custom scrubber registered in the pytest_agentreplay_configure hook; for a "
            "known-fake value, pass it in Scrubber(allow=[...]).",
        ]
    )


class UnreadableBodyError(Exception):
    """An opaque body the backstop cannot read: ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
