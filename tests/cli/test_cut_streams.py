"""``inspect`` and ``fold`` agree on a cut stream (issue 30, item 5): it has no stop
reason, both say it was cut, and ``fold`` warns that the terminal event is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_agentreplay.neutral import Provider, Reply
from tests.cli._helpers import cli, save, stream_interaction

PROVIDERS: list[Provider] = ["anthropic", "openai_chat", "openai_responses"]


def _cassette(tmp_path: Path, provider: Provider, *, cut: bool) -> Path:
    interaction = stream_interaction(provider, Reply.text("Rain in Leeds, then sun."))
    if cut:
        interaction.response.events = (interaction.response.events or [])[:4]
        interaction.response.end = "cut"
    return save(tmp_path / f"{provider}.yaml", interaction)


def _folded_stop(provider: Provider, body: dict[str, Any]) -> Any:
    """The stop reason as the provider's own final body holds it."""
    if provider == "anthropic":
        return body["stop_reason"]
    if provider == "openai_chat":
        return body["choices"][0]["finish_reason"]
    return body["status"] if body["status"] != "in_progress" else None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cut_stream_has_no_stop_reason_in_either_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: Provider
) -> None:
    path = _cassette(tmp_path, provider, cut=True)

    shown = cli(capsys, "inspect", path)
    as_json = json.loads(cli(capsys, "inspect", "--json", path).out)
    folded = cli(capsys, "fold", path)

    final = next(line for line in shown.out.splitlines() if line.strip().startswith("final"))
    assert final.split("·")[0].split(None, 1)[1].strip() == "stop none (cut, no terminal event)"
    (item,) = as_json["interactions"]
    assert (item["final"]["stop"], item["final"]["partial"]) == (None, True)
    assert folded.code == 0
    assert _folded_stop(provider, json.loads(folded.out)) is None
    assert folded.err == (
        "warning: interaction #0: cut after 4 events (as recorded), no terminal event; "
        "body is partial, with no stop reason\n"
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_finished_stream_keeps_its_stop_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: Provider
) -> None:
    path = _cassette(tmp_path, provider, cut=False)

    shown = cli(capsys, "inspect", path)
    as_json = json.loads(cli(capsys, "inspect", "--json", path).out)
    folded = cli(capsys, "fold", path)

    assert "final     stop end_turn" in shown.out
    (item,) = as_json["interactions"]
    assert (item["final"]["stop"], item["final"]["partial"]) == ("end_turn", False)
    assert _folded_stop(provider, json.loads(folded.out)) is not None
    assert folded.err == ""
