"""Token counts as the frameworks report them, kept the way :class:`~...model.Usage` keeps
them: pydantic-ai, openai-agents and LangChain give ``0`` or ``None`` for a count the
provider did not send; pydantic-ai's and openai-agents' usage objects share the names of
the two counts every call has."""

from __future__ import annotations

from typing import Any

from ...neutral import Usage

__all__ = ["token_count", "usage_of"]


def token_count(value: Any) -> int | None:
    """A framework's optional token count as :class:`~pytest_agentreplay.neutral.Usage`
    keeps it: a positive int, else ``None``."""
    return value if isinstance(value, int) and value else None


def usage_of(usage: Any, **counts: Any) -> Usage | None:
    """A framework's usage object (``None``: none), its ``input_tokens`` and
    ``output_tokens`` read by attribute, as :class:`~pytest_agentreplay.neutral.Usage`;
    ``counts`` are the optional ones it keeps (``cache_read_input_tokens=...``), each
    as :func:`token_count` keeps it."""
    if usage is None:
        return None
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        **{name: token_count(value) for name, value in counts.items()},
    )
