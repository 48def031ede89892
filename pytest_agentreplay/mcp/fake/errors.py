"""The exceptions of the fake tool servers."""

from __future__ import annotations

__all__ = ["ToolScriptError"]


class ToolScriptError(ValueError):
    """A fake tool server was scripted wrongly: a tool it does not have, a JSON schema
    that is no schema, a scripted result of the wrong shape. The message names the
    tool, the field and what to do; raised where the script is written, so the
    traceback points at the line that is wrong."""
