"""The syrupy extension, through pytest: ``--snapshot-update`` writes one readable JSON
file per snapshot, reruns with other ids and clocks pass, a changed run log fails
with a readable diff, an unused snapshot is reported — alone and under xdist."""

from __future__ import annotations

import json
from pathlib import Path

# Imported once here, so that in-process pytester runs (which drop the modules a run
# imports) reuse one copy of the SDKs, the patched transports and our classes.
import anthropic  # noqa: F401
import httpx2  # noqa: F401
import pytest

pytest_plugins = ["pytester"]

CONFTEST = """
import pytest
from pytest_agentreplay.snapshot import AgentReplaySnapshotExtension


@pytest.fixture
def snapshot(snapshot):
    return snapshot.use_extension(AgentReplaySnapshotExtension)
"""

AGENT = '''
import os
import time
import uuid

import anthropic
from pytest_agentreplay import FakeModel, Reply
from pytest_agentreplay.runlog import RunLog


def run_turn(question):
    """One agent turn: random step and turn ids, the wall clock, seeded provider ids."""
    answer = os.environ.get("ANSWER", "Sunny in Leeds.")
    with FakeModel(Reply.text(answer), seed=os.environ.get("SEED", "a")) as fake:
        log = RunLog.from_fake(fake)
        step, turn = uuid.uuid4(), uuid.uuid4()
        log.step_started(step, step_index=0, turn_id=turn, at=time.time())
        client = anthropic.Anthropic(api_key="test", max_retries=0)
        message = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=64,
            messages=[{"role": "user", "content": question}],
        )
        text = message.content[0].text
        log.step_completed(step, text=text, at=time.time())
        log.message("assistant", text, step_id=step, turn_id=turn, at=time.time())
    return log


def test_weather_turn(snapshot):
    assert run_turn("Weather in Leeds?") == snapshot


def test_two_turns(snapshot):
    assert run_turn("Weather in Leeds?") == snapshot
    assert run_turn("And in York?") == snapshot
'''

ONE_TEST = AGENT[: AGENT.index("def test_two_turns")]
SNAPSHOTS = Path("__snapshots__", "test_agent")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_agent=AGENT)
    return pytester


def run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str, **env: str
) -> pytest.RunResult:
    """A pytest run of the project, in-process (the SDKs are imported already) unless
    it uses xdist, whose workers are processes anyway."""
    # Under xdist, this test runs in a worker: the inner run must not think it is one
    # (syrupy defers its report to a controller when PYTEST_XDIST_WORKER is set).
    for name in (
        "SEED",
        "ANSWER",
        "PYTEST_XDIST_WORKER",
        "PYTEST_XDIST_WORKER_COUNT",
        "PYTEST_XDIST_TESTRUNUID",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if "-n" in args:
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_snapshot_update_writes_one_readable_file_per_snapshot(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(project, monkeypatch, "--snapshot-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*3 snapshots generated*"])
    folder = project.path / SNAPSHOTS
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_two_turns.1.json",
        "test_two_turns.json",
        "test_weather_turn.json",
    ]
    stored = json.loads((folder / "test_weather_turn.json").read_text())
    assert stored["entries"][0] == {
        "event": "step_started",
        "step_id": "<step-1>",
        "step_index": 0,
        "turn_id": "<turn-1>",
        "at": "<time>",
    }
    assert stored["model_calls"][0]["messages"] == ["user: Weather in Leeds?"]
    assert stored["model_calls"][0]["reply"] == "assistant: Sunny in Leeds."
    # Entries read in their own order (event first, time last), not sorted.
    message = ["event", "role", "text", "kind", "step_id", "turn_id", "at"]
    assert list(stored["entries"][2]) == message


def test_reruns_with_other_ids_and_clocks_match(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(project, monkeypatch, "--snapshot-update", SEED="a").assert_outcomes(passed=2)
    result = run(project, monkeypatch, SEED="b")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*3 snapshots passed*"])


DIFF = [
    "*_ test_weather_turn _*",
    "E       assert [+ received] == [- snapshot]",
    'E         -       "reply": "assistant: Sunny in Leeds."',
    'E         +       "reply": "assistant: Rainy in Leeds."',
]


def test_a_changed_run_log_fails_with_a_readable_diff(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(project, monkeypatch, "--snapshot-update").assert_outcomes(passed=2)
    result = run(project, monkeypatch, ANSWER="Rainy in Leeds.")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(DIFF)


def test_an_unused_snapshot_is_reported_and_removed_on_update(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(project, monkeypatch, "--snapshot-update").assert_outcomes(passed=2)
    project.makepyfile(test_agent=ONE_TEST)
    result = run(project, monkeypatch)
    result.stdout.fnmatch_lines(["*2 snapshots unused*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    run(project, monkeypatch, "--snapshot-update").stdout.fnmatch_lines(
        ["*2 unused snapshots deleted*"]
    )
    assert [p.name for p in (project.path / SNAPSHOTS).iterdir()] == ["test_weather_turn.json"]


def test_under_xdist(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same three checks with ``-n 2``: matching, then a readable diff and unused
    snapshots in one run (each ``-n 2`` run starts three processes)."""
    run(project, monkeypatch, "--snapshot-update", SEED="a").assert_outcomes(passed=2)
    matching = run(project, monkeypatch, "-n", "2", SEED="b")
    matching.assert_outcomes(passed=2)
    matching.stdout.fnmatch_lines(["*3 snapshots passed*"])
    project.makepyfile(test_agent=ONE_TEST)
    changed = run(project, monkeypatch, "-n", "2", ANSWER="Rainy in Leeds.")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines([*DIFF, "*1 snapshot failed*2 snapshots unused*"])
    assert changed.ret == pytest.ExitCode.TESTS_FAILED
