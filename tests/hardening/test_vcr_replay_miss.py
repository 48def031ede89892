"""Item 9, the other clients under a cassette: requests and urllib3 replay through
vcrpy, and a request the cassette does not hold raises the same ``CassetteMiss`` as an
httpx miss — a ``BaseException`` naming the test and the closest recorded request —
never vcrpy's ``CannotOverwriteExistingCassetteException``, an ``Exception`` that an
agent's ``except Exception`` (or retry loop) would swallow.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
import urllib3

from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.errors import CassetteMiss
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.cassettes.io import save
from tests.cli._helpers import stream_interaction

URL = "https://api.anthropic.com/v1/messages"
CLIENTS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "requests": lambda body: requests.post(URL, json=body, timeout=5),
    "urllib3": lambda body: urllib3.PoolManager().request("POST", URL, json=body),
}


@pytest.fixture
def agentreplay_config(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "c.yaml"
    save(path, Cassette(interactions=[stream_interaction()]))
    return {"cassette": str(path)}


def _agent_call(client: str, swallowed: list[Exception]) -> None:
    """What an agent's tool does: any ``Exception`` is logged and the loop goes on."""
    try:
        CLIENTS[client]({"model": "m", "messages": ["not recorded"]})
    except Exception as error:
        swallowed.append(error)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_replay_miss_through_vcrpy_fails_like_an_httpx_miss(
    client: str, agentreplay: AgentReplay, request: pytest.FixtureRequest
) -> None:
    swallowed: list[Exception] = []
    with pytest.raises(CassetteMiss) as info:
        _agent_call(client, swallowed)
    assert swallowed == []
    message = str(info.value)
    assert request.node.nodeid in message
    assert f"interactions[0]: POST {URL}" in message
    assert agentreplay.live_calls == []
