"""Item 10: requests made from worker threads — a ``ThreadPoolExecutor``,
``asyncio.to_thread``, anyio's worker threads — are replayed from the cassette or
blocked, never sent live.

The cassette points at a real provider server on loopback, which replay would be
allowed to reach: any request that slipped past the cassette would be answered by
it and show up in its log. It must stay empty.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest

from pytest_agentreplay import EgressBlocked, Reply
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.cassettes.io import save
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from tests.servers import ProviderServer

KINDS = ("pool", "to_thread", "anyio")


def _body(prompt: str) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": prompt}]}


def _interaction(url: str, prompt: str) -> Interaction:
    reply = codec_for("anthropic").render_body(Reply.text(f"replayed {prompt}"), RenderContext("m"))
    return Interaction(
        request=RecordedRequest(method="POST", url=url, json=_body(prompt)),
        response=RecordedResponse(
            status=200, headers={"content-type": "application/json"}, json=reply
        ),
    )


@pytest.fixture
def agentreplay_config(echo_server: ProviderServer, tmp_path: Path) -> dict[str, Any]:
    """A cassette recorded against ``echo_server``: one call per kind of worker thread."""
    path = tmp_path / "threads.yaml"
    url = f"{echo_server.url}/v1/messages"
    save(path, Cassette(interactions=[_interaction(url, kind) for kind in KINDS]))
    return {"cassette": str(path)}


def _ask(module: Any, url: str, prompt: str) -> str:
    response = module.post(url, json=_body(prompt), timeout=5)
    return str(response.json()["content"][0]["text"])


async def _in_thread(kind: str, module: Any, url: str, prompt: str) -> str:
    if kind == "pool":
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(_ask, module, url, prompt).result()
    if kind == "to_thread":
        return await asyncio.to_thread(_ask, module, url, prompt)
    return await anyio.to_thread.run_sync(_ask, module, url, prompt)


@pytest.mark.anyio
@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_requests_from_worker_threads_are_replayed_or_blocked_never_live(
    agentreplay: AgentReplay, echo_server: ProviderServer, module: Any
) -> None:
    url = f"{echo_server.url}/v1/messages"
    for kind in KINDS:
        assert await _in_thread(kind, module, url, kind) == f"replayed {kind}"
    for kind in KINDS:
        with pytest.raises(EgressBlocked, match="no recorded interaction matches POST"):
            await _in_thread(kind, module, url, f"{kind} again, not recorded")
    assert [call.source for call in agentreplay.calls] == ["cassette"] * 3
    assert agentreplay.live_calls == []
    assert echo_server.requests == [], "a worker thread's request went out live"
