"""Record modes, as pytest-recording users know them, against a real loopback server.

Each test writes a user test module, runs pytest on it in this process with a
record mode, and checks what the ``agentreplay`` handle saw (replayed or live),
what the server received (nothing, in replay) and what is on disk.
"""

from __future__ import annotations

import pytest

from pytest_agentreplay import Reply
from pytest_agentreplay.harness.options import RECORD_MODES
from tests.cassettes._plugin_runs import (
    PRELUDE,
    cassette,
    prompts,
    results,
    run,
    texts,
)
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

CHAT = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_chat(agentreplay):
    answers = [ask(p) for p in os.environ["AR_PROMPTS"].split(",")]
    report(agentreplay, answers=answers)
"""
)


def _chat(
    pytester: pytest.Pytester, echo_server: ProviderServer, prompts: str, *args: str
) -> pytest.RunResult:
    return run(pytester, *args, AR_SERVER=echo_server.url, AR_PROMPTS=prompts)


def test_record_modes_are_the_documented_five() -> None:
    assert RECORD_MODES == ("none", "once", "new_episodes", "all", "rewrite")


def test_none_is_the_default_and_a_missing_cassette_names_the_expected_path(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CHAT)
    result = _chat(pytester, echo_server, "A")
    result.assert_outcomes(failed=1)
    path = cassette(pytester, "test_chat")
    result.stdout.fnmatch_lines([f"*CassetteMiss: pytest-agentreplay: no cassette at {path}*"])
    result.stdout.fnmatch_lines(["*record mode 'none'*--agentreplay-record-mode=*"])
    assert echo_server.requests == [], "replay mode never reaches the network"
    assert not path.exists()


ODD_IDS = (
    PRELUDE
    + """
# The long id is given (pytest 9 names a long value q2 itself; 8 does not).
@pytest.mark.parametrize("q", ["a:b/c[d]", "a-b-c[d]", "x" * 300], ids=str)
@pytest.mark.agentreplay
def test_odd(agentreplay, q):
    report(agentreplay, answers=[ask(q[:20])])
"""
)


def test_parametrize_ids_with_colon_slash_bracket_get_distinct_safe_paths(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    """The path a miss names is the one recording writes, one file per test id, even
    for ids that only differ in characters a file name cannot hold, and for an id too
    long to be a file name (looking for pytest-recording's name of it, which no file
    system can hold, is not an error)."""
    pytester.makepyfile(test_user=ODD_IDS)
    missed = _chat(pytester, echo_server, "-")
    missed.assert_outcomes(failed=3)
    _chat(pytester, echo_server, "-", "--agentreplay-record-mode=once").assert_outcomes(passed=3)
    written = sorted((pytester.path / "cassettes" / "test_user").iterdir())
    assert len(written) == 3
    for path in written:
        assert path.suffix == ".yaml"
        assert ":" not in path.name and "/" not in path.name
        assert len(path.name.encode()) < 255
        assert f"no cassette at {path} " in missed.stdout.str()
    assert {p["path"] for p in results(pytester)} == {str(p) for p in written}
    _chat(pytester, echo_server, "-").assert_outcomes(passed=3)  # and they replay


def test_once_records_when_absent_then_only_replays(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CHAT)
    path = cassette(pytester, "test_chat")
    _chat(pytester, echo_server, "A,B", "--agentreplay-record-mode=once").assert_outcomes(passed=1)
    [recorded] = results(pytester)
    assert recorded["sources"] == ["live", "live"]
    assert prompts(path) == ["A", "B"]
    assert texts(path) == ["echo: A", "echo: B"]
    before = path.read_bytes()
    calls = len(echo_server.requests)

    _chat(pytester, echo_server, "A,B", "--agentreplay-record-mode=once").assert_outcomes(passed=1)
    [replayed] = results(pytester)
    assert replayed["sources"] == ["cassette", "cassette"]
    assert replayed["answers"] == ["echo: A", "echo: B"]

    missed = _chat(pytester, echo_server, "A,C", "--agentreplay-record-mode=once")
    missed.assert_outcomes(failed=1)
    missed.stdout.fnmatch_lines(
        ["*CassetteMiss: no recorded interaction matches*record mode once*"]
    )
    assert len(echo_server.requests) == calls, "once with a cassette never goes live"
    assert path.read_bytes() == before


def test_new_episodes_replays_matches_appends_new_keeps_old(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CHAT)
    path = cassette(pytester, "test_chat")
    _chat(pytester, echo_server, "A", "--agentreplay-record-mode=once").assert_outcomes(passed=1)
    results(pytester)
    old = path.read_text()

    _chat(pytester, echo_server, "A,B", "--agentreplay-record-mode=new_episodes").assert_outcomes(
        passed=1
    )
    [run_] = results(pytester)
    assert run_["sources"] == ["cassette", "live"]
    assert prompts(path) == ["A", "B"]
    # The old interaction is kept byte for byte: the new one is appended after it.
    assert path.read_text().startswith(old.removesuffix("version: 1\n"))


def test_all_never_replays_and_keeps_old_interactions(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CHAT)
    path = cassette(pytester, "test_chat")
    _chat(pytester, echo_server, "A", "--agentreplay-record-mode=once").assert_outcomes(passed=1)
    echo_server.add(Reply.text("a different answer"))
    _chat(pytester, echo_server, "A", "--agentreplay-record-mode=all").assert_outcomes(passed=1)
    assert [r["sources"] for r in results(pytester)] == [["live"], ["live"]]
    assert texts(path) == ["echo: A", "a different answer"]
    assert len(echo_server.requests) == 2


def test_rewrite_replaces_the_cassette(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CHAT)
    path = cassette(pytester, "test_chat")
    _chat(pytester, echo_server, "A,B", "--agentreplay-record-mode=once").assert_outcomes(passed=1)
    _chat(pytester, echo_server, "C", "--agentreplay-record-mode=rewrite").assert_outcomes(passed=1)
    assert [r["sources"] for r in results(pytester)] == [["live", "live"], ["live"]]
    assert prompts(path) == ["C"]


MODES = (
    PRELUDE
    + """
@pytest.mark.agentreplay(record_mode=os.environ.get("AR_MARKER") or None)
def test_mode(agentreplay):
    report(agentreplay)
"""
)


@pytest.mark.parametrize(
    ("ini", "marker", "cli", "expected"),
    [
        (None, None, None, "none"),
        ("new_episodes", None, None, "new_episodes"),
        ("new_episodes", "all", None, "all"),
        ("new_episodes", "all", "rewrite", "rewrite"),
        (None, "once", "none", "none"),
        ("all", None, "once", "once"),
    ],
)
def test_cli_over_marker_over_ini(
    pytester: pytest.Pytester, ini: str | None, marker: str | None, cli: str | None, expected: str
) -> None:
    pytester.makepyfile(test_user=MODES)
    if ini is not None:
        pytester.makeini(f"[pytest]\nagentreplay_record_mode = {ini}\n")
    args = [f"--agentreplay-record-mode={cli}"] if cli else []
    run(pytester, *args, AR_MARKER=marker or "").assert_outcomes(passed=1)
    assert [r["mode"] for r in results(pytester)] == [expected]


def test_a_bad_record_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=MODES)
    result = run(pytester, AR_MARKER="sometimes")
    result.stdout.fnmatch_lines(["*record_mode 'sometimes' is not one of none, once*"])
    assert result.ret != 0
    pytester.makeini("[pytest]\nagentreplay_record_mode = nope\n")
    result = run(pytester)
    assert result.ret != 0
    assert "'nope'" in result.stdout.str() + result.stderr.str()


def test_ini_record_mode_records(pytester: pytest.Pytester, echo_server: ProviderServer) -> None:
    pytester.makepyfile(test_user=CHAT)
    pytester.makeini("[pytest]\nagentreplay_record_mode = once\n")
    _chat(pytester, echo_server, "A").assert_outcomes(passed=1)
    assert prompts(cassette(pytester, "test_chat")) == ["A"]


INTERLEAVED = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_interleaved(agentreplay):
    with client().messages.stream(model="claude-test", max_tokens=64,
                                  messages=[{"role": "user", "content": "A"}]) as first:
        second = ask(os.environ["AR_PROMPTS"])  # while the first is still open
        text = first.get_final_message().content[0].text
    report(agentreplay, answers=[text, second],
           calls=[(c.index, c.source, c.outcome) for c in agentreplay.calls])
"""
)


def test_the_handle_lists_calls_in_the_order_they_were_made(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    """A replayed stream still open while a second call goes out live: ``calls`` lists
    them as they were made, not as they ended."""
    pytester.makepyfile(test_user=INTERLEAVED)
    _chat(pytester, echo_server, "B", "--agentreplay-record-mode=once").assert_outcomes(passed=1)
    _chat(pytester, echo_server, "C", "--agentreplay-record-mode=new_episodes").assert_outcomes(
        passed=1
    )
    recorded, mixed = results(pytester)
    assert recorded["calls"] == [[0, "live", "completed"], [1, "live", "completed"]]
    assert mixed["calls"] == [[0, "cassette", "completed"], [1, "live", "completed"]]
    assert mixed["answers"] == ["echo: A", "echo: C"]


CONFIG_FIXTURE = """
import pytest

@pytest.fixture
def agentreplay_config():
    return {"record_mode": "new_episodes", "strict": True}
"""


@pytest.mark.parametrize(
    ("marker", "cli", "expected"),
    [(None, None, "new_episodes"), ("all", None, "all"), ("all", "once", "once")],
)
def test_the_config_fixture_sits_between_ini_and_marker(
    pytester: pytest.Pytester, marker: str | None, cli: str | None, expected: str
) -> None:
    pytester.makeini("[pytest]\nagentreplay_record_mode = rewrite\n")
    pytester.makeconftest(CONFIG_FIXTURE)
    pytester.makepyfile(test_user=MODES)
    args = [f"--agentreplay-record-mode={cli}"] if cli else []
    run(pytester, *args, AR_MARKER=marker or "").assert_outcomes(passed=1)
    assert [r["mode"] for r in results(pytester)] == [expected]


def test_the_config_fixture_keys_are_checked(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFIG_FIXTURE.replace('"strict": True', '"stric": True'))
    pytester.makepyfile(test_user=MODES)
    result = run(pytester)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*unknown agentreplay_config key(s) stric; known: *"])
