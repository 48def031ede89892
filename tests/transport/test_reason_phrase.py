"""One reason phrase per status, wherever one is made: the loopback server's status line,
aiohttp's ``response.reason`` from a fake, and the ``message`` a vcrpy cassette stores.

The three were copies that had drifted: the server said ``Unknown`` for a status with
no standard phrase (Anthropic's 529 ``overloaded_error``, a real one), the other two
said nothing. A client reading the status line of an agent served by
``agentreplay serve`` then saw another reason than the same agent served in-process.
"""

from __future__ import annotations

import http.client
import json

import aiohttp
import pytest
import yaml

from pytest_agentreplay import FakeModel, Fault
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.formats.vcrpy import vcr_text
from pytest_agentreplay.transport.playback import reason_phrase

URL = "https://api.anthropic.com/v1/messages"
BODY = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
STATUSES = {429: "Too Many Requests", 529: "", 503: "Service Unavailable"}


@pytest.mark.parametrize(("status", "phrase"), STATUSES.items())
def test_the_phrase(status: int, phrase: str) -> None:
    assert reason_phrase(status) == phrase


def _status_line_reason(status: int) -> str:
    fake = FakeModel(Fault.http(status, "busy"))
    with fake.listen() as server:
        connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
        try:
            connection.request(
                "POST", "/v1/messages", json.dumps(BODY), {"content-type": "application/json"}
            )
            response = connection.getresponse()
            response.read()
        finally:
            connection.close()
    assert response.status == status
    return response.reason


async def _aiohttp_reason(status: int) -> str:
    with FakeModel(Fault.http(status, "busy")):
        async with aiohttp.ClientSession() as session, session.post(URL, json=BODY) as response:
            assert response.status == status
            return response.reason or ""


def _vcrpy_message(status: int) -> str:
    interaction = Interaction(
        request=RecordedRequest(method="POST", url=URL, json=BODY),
        response=RecordedResponse(status=status, json={"error": "busy"}),
    )
    document = yaml.safe_load(vcr_text(Cassette(interactions=[interaction])))
    message: str = document["interactions"][0]["response"]["status"]["message"]
    return message


@pytest.mark.anyio
@pytest.mark.parametrize("status", STATUSES)
async def test_the_server_aiohttp_and_vcrpy_give_the_same_phrase(status: int) -> None:
    assert _status_line_reason(status) == reason_phrase(status)
    assert await _aiohttp_reason(status) == reason_phrase(status)
    assert _vcrpy_message(status) == reason_phrase(status)
