"""Fixtures of the tests that run the frameworks on a fake tool server."""

from __future__ import annotations

import pytest


@pytest.fixture
def framework_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the frameworks need to run offline: provider keys (the model is a fake) and
    openai-agents' tracing off (it would POST to api.openai.com/v1/traces/ingest)."""
    from agents import set_tracing_disabled

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    set_tracing_disabled(True)
