"""Token counts as the frameworks report them, kept the way :class:`~...model.Usage` keeps
them: pydantic-ai, openai-agents and LangChain give ``0`` or ``None`` for a count the
provider did not send."""

from __future__ import annotations

from typing import Any

__all__ = ["token_count"]


def token_count(value: Any) -> int | None:
    """A framework's optional token count as :class:`~pytest_agentreplay.model.Usage`
    keeps it: a positive int, else ``None``."""
    return value if isinstance(value, int) and value else None
