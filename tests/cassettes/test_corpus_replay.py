"""Every real recording in ``tests/corpus/real`` replays through the real client.

Each corpus file is used unchanged as a test's cassette
(``@pytest.mark.agentreplay(cassette=<absolute path>, match_on=["method", "path"])``:
positional replay, as the projects that recorded them matched). Every interaction
is requested once, in recorded order, through the client its provider's users
would use (see :mod:`._corpus_drive`); what the client got from the replay must
equal what it gets from the original bytes read by the independent
``tests.corpus`` reader — the same final message, events, exception and body.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.handle import AgentReplay
from tests import corpus
from tests.cassettes._corpus_drive import IN_STREAM_ERRORS, drive, original

pytestmark = pytest.mark.sdk

FILES = corpus.files()


def _param(path: Path) -> object:
    marker = pytest.mark.agentreplay(cassette=str(path), match_on=["method", "path"])
    return pytest.param(path, id=f"{path.parent.name}/{path.name}", marks=marker)


def test_the_corpus_is_all_here() -> None:
    assert len(FILES) == 55
    assert sum(len(corpus.load(path)) for path in FILES) == 94


@pytest.mark.parametrize("path", [_param(path) for path in FILES])
def test_corpus_file_replays_like_the_original_bytes(path: Path, agentreplay: AgentReplay) -> None:
    items = corpus.load(path)
    assert len(agentreplay.interactions) == len(items)
    for item in items:
        replayed = drive(item, None)
        expected = drive(item, original(item))
        assert replayed == expected, item.id
        if item.status >= 400 and item.provider is not None:
            assert "error" in replayed, item.id  # the SDK raised its status exception
        elif item.is_sse and item.provider is not None:
            in_stream_error = item.id in IN_STREAM_ERRORS
            assert ("error" in replayed) is in_stream_error, item.id
    assert agentreplay.unplayed == []
    assert [call.source for call in agentreplay.calls] == ["cassette"] * len(items)
    assert [call.interaction for call in agentreplay.calls] == list(range(len(items)))
    assert agentreplay.live_calls == []
