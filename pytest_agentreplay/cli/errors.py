"""The exceptions of the ``agentreplay`` command: bad input (exit code 2) and an output
that refused a write. Standard library only, as :mod:`.common`."""

from __future__ import annotations

import os

__all__ = ["CLIError", "OutputError", "one_line"]


def one_line(text: str) -> str:
    """``text`` with its line breaks folded into ``; `` (error messages are one line)."""
    parts = [part.strip() for part in text.splitlines()]
    return "; ".join(part for part in parts if part)


class CLIError(Exception):
    """Bad input: reported as ``agentreplay: <file>: <reason>`` and exit code 2.

    ``path`` is ``None`` when the reason already names the file (a cassette format
    error reads ``file:line:column: ...``) or no file is involved.
    """

    def __init__(self, path: str | os.PathLike[str] | None, reason: str) -> None:
        self.path = None if path is None else os.fspath(path)
        self.reason = one_line(reason)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class OutputError(Exception):
    """Standard output refused a write (a full disk it is redirected to): ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
