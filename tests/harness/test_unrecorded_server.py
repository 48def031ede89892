"""A ``model_server`` in a recording run is said loudly in the summary (issue 30): a
fake's answers are never recorded, and the test passed with "cassettes written: 0"
and nothing else. The warning names the test and the way to record from a fake."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

TEST = '''
import subprocess, sys
import pytest
from pytest_agentreplay import Reply

CHILD = """
import anthropic
reply = anthropic.Anthropic(max_retries=0).messages.create(
    model="claude-test", max_tokens=9, messages=[{"role": "user", "content": "hi"}])
print(reply.content[0].text)
"""


@pytest.mark.agentreplay
def test_served_to_a_child(model_server):
    model_server.script(Reply.text("from the fake"))
    out = subprocess.run([sys.executable, "-c", CHILD], env=model_server.env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "from the fake"


def test_not_used(model_server):
    pass
'''


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["plain", "xdist"])
def test_a_recording_run_warns_about_the_fake_it_did_not_record(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_agent=TEST)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--agentreplay-record-mode=once", *args
    )
    result.assert_outcomes(passed=2)
    warnings = [line for line in result.outlines if line.startswith("WARNING: ")]
    assert warnings == [
        "WARNING: test_agent.py::test_served_to_a_child: model_server answered 1 call in "
        "record mode once, and a fake's answers are never recorded: no cassette holds "
        "them. To build a cassette from a fake without an API key, record through "
        "agentreplay serve CASSETTE --record-mode once --upstream URL-OF-THE-FAKE "
        '(docs/serving.md, "Recording a cassette from a fake"); to test against the '
        "fake, run without a record mode."
    ]
    assert not list(pytester.path.rglob("*.yaml"))


def test_a_replaying_run_says_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=TEST.replace("@pytest.mark.agentreplay\n", ""))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert not [line for line in result.outlines if "WARNING" in line]
