"""The fixtures and the marker, seen from a user's test suite (pytester, subprocess)."""

from __future__ import annotations

import anthropic  # noqa: F401 - imported once here, so in-process runs reuse it
import openai  # noqa: F401
import pytest

# Imported once here, so in-process runs reuse them (pytester drops the modules a run
# imported): one copy of our classes, and of PyYAML, whose C extension is not imported
# twice (a second copy of yaml next to the first C part cannot read a cassette).
import pytest_agentreplay.cassettes.yaml.load
import pytest_agentreplay.fakes  # noqa: F401

pytest_plugins = ["pytester"]

HEADER = """
import anthropic, openai, pytest
from pytest_agentreplay import Fault, Reply

def ask(text="hi"):
    client = anthropic.Anthropic(api_key="k", max_retries=0)
    return client.messages.create(model="m", max_tokens=9,
                                  messages=[{"role": "user", "content": text}])
"""


def run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=HEADER + body)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_script_ran_out_fails_the_test_showing_the_request(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_two_calls(scripted_model):
    scripted_model.script(Reply.text("only one"))
    assert ask("first").content[0].text == "only one"
    ask("second question")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*scripted_model: received a model call after its script ran out (call #1)*",
            "*POST https://api.anthropic.com/v1/messages*",
            "*second question*",
        ]
    )


def test_unconsumed_replies_fail_the_test(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_lazy(scripted_model):
    scripted_model.script(Reply.text("used"), Reply.text("never asked for"))
    ask()

def test_opted_out(scripted_model):
    scripted_model.check_unused = False
    scripted_model.script(Reply.text("spare"))
""",
    )
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*1 scripted reply never requested*", "*never asked for*"])


def test_a_failing_test_is_not_masked_by_fake_checks(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_boom(scripted_model):
    scripted_model.script(Reply.text("unused"))
    raise ValueError("the real failure")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ValueError: the real failure*"])
    result.stdout.no_fnmatch_line("*never requested*")


def test_non_model_endpoint_on_a_served_host_fails_the_test(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_models_list(scripted_model):
    client = openai.OpenAI(api_key="k", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.models.list()
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*unexpected request, the fake serves model calls only*",
            "*GET https://api.openai.com/v1/models*",
        ]
    )


def test_blocked_egress_names_the_test(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import httpx2

def test_leaks(scripted_model):
    httpx2.get("https://telemetry.example.com/ping")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*EgressBlocked: pytest-agentreplay blocked a live network call from test "
            "test_user.py::test_leaks: GET https://telemetry.example.com/ping*",
        ]
    )


def test_marker_alone_turns_on_the_guard(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import httpx2
from pytest_agentreplay.transport.router import active_router

@pytest.mark.agentreplay
def test_marked():
    with pytest.raises(BaseException, match="blocked a live network call"):
        httpx2.get("https://example.com/")

def test_unmarked_tests_are_left_alone():
    assert active_router() is None
""",
    )
    result.assert_outcomes(passed=2)


def test_marker_and_fixtures_share_one_router_and_one_cassette(pytester: pytest.Pytester) -> None:
    """The marker opens the test's scope itself; the ``agentreplay`` handle and the fake
    models a marked test also asks for are that scope's, not second ones."""
    result = run(
        pytester,
        """
from pytest_agentreplay.transport.router import active_router

SEEN = {}

@pytest.fixture
def early(agentreplay):
    SEEN["early"] = agentreplay
    return agentreplay

@pytest.mark.agentreplay(cassette="shared.yaml")
def test_marked(early, agentreplay, scripted_model, _agentreplay_router):
    assert agentreplay is early
    assert active_router() is _agentreplay_router
    assert _agentreplay_router.handlers == [agentreplay._session, scripted_model]
    assert agentreplay.path.name == "shared.yaml"
    scripted_model.script(Reply.text("from the fake"))
    assert ask().content[0].text == "from the fake"

def test_fixture_alone(agentreplay, _agentreplay_router):
    assert active_router() is _agentreplay_router
    assert _agentreplay_router.handlers == [agentreplay._session]
    assert agentreplay.path.name == "test_fixture_alone.yaml"

def test_after_them():
    assert active_router() is None
""",
    )
    result.assert_outcomes(passed=3)


def test_the_markers_scope_opens_before_every_function_scoped_fixture(
    pytester: pytest.Pytester,
) -> None:
    """The marker's router and cassette open before the test's function-scoped
    fixtures, even an autouse fixture of a plugin loaded before ours (``-p``), which
    ran first while the marker's fixture was autouse too. A fake model or the handle
    such a fixture asks for joins the marker's router and cassette, not second ones,
    and the cassette is the first handler, as in a test without that plugin."""
    pytester.syspathinsert()
    pytester.makepyfile(
        early_plugin="""
import pytest

@pytest.fixture(autouse=True)
def first(request):
    if request.node.name == "test_handle_first":
        request.getfixturevalue("agentreplay")
    else:
        request.getfixturevalue("scripted_model")
"""
    )
    result = run(
        pytester,
        """
from pytest_agentreplay.transport.router import active_router

@pytest.mark.agentreplay
def test_fake_first(scripted_model, agentreplay, _agentreplay_router):
    assert active_router() is _agentreplay_router
    assert _agentreplay_router.handlers == [agentreplay._session, scripted_model]

@pytest.mark.agentreplay
def test_handle_first(agentreplay, _agentreplay_router):
    assert active_router() is _agentreplay_router
    assert _agentreplay_router.handlers == [agentreplay._session]
""",
        "-p",
        "early_plugin",
    )
    result.assert_outcomes(passed=2)


def test_only_tests_that_need_it_get_the_markers_fixture(pytester: pytest.Pytester) -> None:
    """Merely having the plugin installed adds no fixture to a test: the marker's
    fixture goes to tests marked on the function, class, module or one parameter."""
    pytester.makepyfile(
        test_user="""
import pytest

NAME = "_agentreplay_marker"

def test_plain(request):
    assert NAME not in request.fixturenames

@pytest.mark.agentreplay
def test_function(request):
    assert NAME in request.fixturenames

@pytest.mark.agentreplay
class TestClass:
    def test_method(self, request):
        assert NAME in request.fixturenames

@pytest.mark.parametrize("marked", [pytest.param(True, marks=pytest.mark.agentreplay), False])
def test_param(request, marked):
    from pytest_agentreplay.transport.router import active_router
    assert (active_router() is not None) is marked
""",
        test_module="""
import pytest

pytestmark = pytest.mark.agentreplay

def test_module(request):
    assert "_agentreplay_marker" in request.fixturenames
""",
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)


def test_the_marker_scope_sits_where_an_autouse_fixture_would(
    pytester: pytest.Pytester,
) -> None:
    """Wider-scoped fixtures are set up before the marker's router opens (they outlive
    the test); the test's function-scoped fixtures, asked for by name or autouse,
    after it, so what they send is intercepted."""
    pytester.makeconftest(
        """
import pytest
from pytest_agentreplay.transport.router import active_router

@pytest.fixture(scope="module")
def wide():
    return active_router()

@pytest.fixture(autouse=True)
def auto_user():
    return active_router()

@pytest.fixture
def narrow():
    return active_router()
"""
    )
    pytester.makepyfile(
        test_user="""
import pytest
from pytest_agentreplay.transport.router import active_router

@pytest.mark.agentreplay
def test_order(narrow, wide, auto_user, request):
    assert wide is None
    assert narrow is active_router() is auto_user is not None
    names = request.fixturenames
    assert names.index("wide") < names.index("_agentreplay_marker") < names.index("narrow")
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_marked_test_never_runs_without_its_interception(pytester: pytest.Pytester) -> None:
    """Should the marker's fixture be taken away after collection (here by another
    plugin's hook wrapper), the test errors at setup instead of running with live
    network access; ``--setup-plan``, which runs no fixture, is not an error.
    (pytest-recording is kept out: with it active, its autouse ``vcr`` fixture, which
    this plugin's ``vcr`` overrides, opens the interception in a marked test too.)"""
    pytester.makeconftest(
        """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items):
    yield
    for item in items:
        if "_agentreplay_marker" in item.fixturenames:
            item.fixturenames.remove("_agentreplay_marker")
"""
    )
    pytester.makepyfile(
        test_user="""
import pytest

@pytest.mark.agentreplay
def test_marked():
    pass
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:recording")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*the fixture that intercepts test_user.py::test_marked did not run*"]
    )
    planned = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:recording", "--setup-plan"
    )
    assert planned.ret == 0


def test_block_network_option_guards_every_test(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
from pytest_agentreplay.transport.router import active_router

def test_plain():
    assert active_router() is not None
""",
        "--agentreplay-block-network",
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("agentreplay(casette='x')", "unknown @pytest.mark.agentreplay argument(s) casette"),
        ("agentreplay('x')", "takes keyword arguments only"),
        ("agentreplay(record_mode='sometimes')", "record_mode 'sometimes' is not one of"),
        ("agentreplay(allow_hosts=3)", "allow_hosts must be a host or a list of hosts"),
    ],
)
def test_bad_marker_arguments_are_usage_errors(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    result = run(
        pytester,
        f"""
@pytest.mark.{marker}
def test_marked():
    pass
""",
    )
    assert result.ret != 0
    result.stdout.fnmatch_lines([f"*{message}*"])


def test_record_mode_choices_come_from_one_constant(pytester: pytest.Pytester) -> None:
    from pytest_agentreplay.harness.options import RECORD_MODES

    result = pytester.runpytest_subprocess("--agentreplay-record-mode=bogus")
    assert result.ret != 0
    choices = ", ".join(repr(m) for m in RECORD_MODES)
    result.stderr.fnmatch_lines([f"*invalid choice: 'bogus' (choose from {choices})*"])


def test_fixtures_are_listed_with_their_docs(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--fixtures", "-p", "no:cacheprovider")
    for line in (
        "scripted_model -- *",
        "*A fake model serving a script*",
        "blocking_model -- *",
        "*held before its first byte*",
        "interrupting_model -- *",
        "*cuts its first stream halfway*",
        "failing_model -- *",
        "*failing every call with a provider 500*",
    ):
        result.stdout.fnmatch_lines([line])


def test_fixtures_work_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_user=HEADER
        + """
@pytest.mark.parametrize("n", range(6))
def test_many(scripted_model, n):
    scripted_model.script(Reply.text(f"reply {n}"))
    assert ask().content[0].text == f"reply {n}"
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=6)


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["plain", "xdist"])
def test_xdist_hooks_run_only_when_xdist_distributes(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    """Hooks run for every test of every suite; the ones that carry cassette use from
    xdist workers to the controller are registered only where xdist distributes."""
    pytester.makepyfile(
        test_user="""
def test_hooks(request):
    config = request.config
    per_test = [
        impl.plugin_name
        for hook in (config.hook.pytest_runtest_makereport, config.hook.pytest_runtest_logreport)
        for impl in hook.get_hookimpls()
        if impl.plugin_name.startswith("agentreplay-xdist")
    ]
    worker = hasattr(config, "workerinput")
    assert per_test == (["agentreplay-xdist-worker"] if worker else []), per_test
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("vcr", ["never", "always"])
def test_a_finished_test_lets_go_of_its_cassette(pytester: pytest.Pytester, vcr: str) -> None:
    """Once a test ends, nothing keeps its cassette alive: not the test item (for the
    rest of the run) and not a reference cycle through the replayed call, so it is
    freed at once by reference counting (with the cyclic collector off to prove it).
    A suite replaying big cassettes holds one at a time, not all of them.

    With vcrpy on as well (issue 18, item 20): by default it is on when requests is
    imported, which langsmith's pytest plugin does, so whether it was on depended on
    the plugins installed. vcrpy's per-cassette classes sit in reference cycles; they
    must not hold our cassette."""
    from pytest_agentreplay.cassettes import io as cassette
    from pytest_agentreplay.cassettes.cassette import (
        Cassette,
        Interaction,
        RecordedEvent,
        RecordedRequest,
        RecordedResponse,
    )

    url = "https://api.anthropic.com/v1/messages"
    events = [RecordedEvent(event="ping", data="{}")] * 3
    recorded = Interaction(
        request=RecordedRequest(method="POST", url=url, json={"model": "m"}),
        response=RecordedResponse(status=200, events=events),
    )
    cassette.save(
        pytester.path / "cassettes" / "test_user" / "test_replays.yaml",
        Cassette(interactions=[recorded]),
    )
    pytester.makeini(f"[pytest]\nagentreplay_vcr = {vcr}\n")
    # In a subprocess: an in-process run's hook recorder keeps hook arguments alive.
    pytester.makepyfile(
        test_user=f"""
import gc, weakref
import pytest
import httpx

REFS = []

@pytest.mark.agentreplay
def test_replays(agentreplay):
    gc.disable()  # from here on, only reference counting frees anything
    REFS.extend([weakref.ref(agentreplay._session), weakref.ref(agentreplay.interactions[0])])
    with httpx.Client() as client:
        with client.stream("POST", {url!r}, json={{"model": "m"}}) as response:
            assert response.read().count(b"event: ping") == 3

def test_after_it():
    try:
        assert len(REFS) == 2
        assert [ref() for ref in REFS] == [None, None]
    finally:
        gc.enable()
"""
    )
    # Every plugin of the environment is loaded (langsmith's, installed with langchain,
    # included): the cassette must be let go of whatever else wraps the test.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
