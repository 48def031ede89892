"""vcrpy's ``additional_matchers`` (issue 26): parts matched besides ``match_on``.

pytest-recording passes ``vcr_config`` and its marker's keywords to vcrpy's
``use_cassette``, which appends ``additional_matchers`` to ``match_on`` (its own, or
vcrpy's default). pydantic-ai writes ``@pytest.mark.vcr(additional_matchers=['body'])``
for the tests whose claim rests on the request body. The key was refused as unknown,
pointing to a guide that did not name it; it now adds parts here too: to the test's
``match_on``, or to the cassette's default one (vcrpy's, for a vcrpy file).
"""

from __future__ import annotations

import pytest

from tests.cassettes._plugin_runs import cassette, run

pytest_plugins = ["pytester"]


def _interaction(n: int) -> str:
    return f"""\
- request:
    body: '{{"n": {n}}}'
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: https://api.example.test/items?page=1
  response:
    body:
      string: '{{"id": {n}}}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
"""


VCR_CASSETTE = "interactions:\n" + _interaction(1) + _interaction(2) + "version: 1\n"
"""Two requests to one URI that differ by their body only, as vcrpy writes them."""

TEST = """
import httpx2, pytest

{config}

@pytest.mark.agentreplay({kwargs})
def test_items(agentreplay):
    # sent in the other order than recorded
    second = httpx2.post("https://api.example.test/items?page=1", json={{"n": 2}}).json()
    first = httpx2.post("https://api.example.test/items?page=1", json={{"n": 1}}).json()
    assert (first, second) == ({{"id": 1}}, {{"id": 2}})
"""

CONFIG = """
@pytest.fixture
def agentreplay_config():
    return {"additional_matchers": ["body"]}
"""


def _suite(pytester: pytest.Pytester, *, kwargs: str = "", config: str = "") -> None:
    pytester.makepyfile(test_user=TEST.format(kwargs=kwargs, config=config))
    path = cassette(pytester, "test_items")
    path.parent.mkdir(parents=True)
    path.write_text(VCR_CASSETTE)


def test_a_vcrpy_cassette_plays_in_recorded_order_without_it(pytester: pytest.Pytester) -> None:
    """The control: vcrpy's default matching (method and URI) ignores the body."""
    _suite(pytester)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*assert ({'id': 2}, {'id': 1}) == ({'id': 1}, {'id': 2})*"])


@pytest.mark.parametrize(
    ("kwargs", "config"),
    [
        ("additional_matchers=['body']", ""),
        ("", CONFIG),
        ("additional_matchers=('raw_body',)", ""),
    ],
    ids=["marker", "agentreplay_config", "raw_body"],
)
def test_additional_body_matching_picks_each_request_by_its_body(
    pytester: pytest.Pytester, kwargs: str, config: str
) -> None:
    _suite(pytester, kwargs=kwargs, config=config)
    run(pytester).assert_outcomes(passed=1)


def test_it_adds_to_match_on_when_match_on_is_set(pytester: pytest.Pytester) -> None:
    _suite(pytester, kwargs="match_on=['method', 'path'], additional_matchers=['body']")
    run(pytester).assert_outcomes(passed=1)


def test_it_names_a_matcher_of_the_configure_hook(pytester: pytest.Pytester) -> None:
    """vcrpy's ``register_matcher`` name becomes a ``settings.matchers`` name."""
    pytester.makeconftest(
        """
        import json

        def pytest_agentreplay_configure(config, settings):
            settings.matchers["n"] = lambda request: json.loads(request.content())["n"]
        """
    )
    _suite(pytester, kwargs="additional_matchers=['n']")
    run(pytester).assert_outcomes(passed=1)


def test_a_part_that_is_not_known_names_the_ways_to_add_one(pytester: pytest.Pytester) -> None:
    _suite(pytester, kwargs="additional_matchers=['function_calling_mode']")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "unknown match_on part 'function_calling_mode'; known: method, " in output
    assert "pytest_agentreplay_configure hook: settings.matchers[name] = function" in output


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("'body'", "additional_matchers must be a list (of matcher names), got 'body'"),
        ("[3]", "functions of the request; got 3 in [3]"),
    ],
)
def test_a_value_of_the_wrong_shape_is_refused_at_setup(
    pytester: pytest.Pytester, value: str, message: str
) -> None:
    _suite(pytester, kwargs=f"additional_matchers={value}")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "test_user.py::test_items: additional_matchers " in output
    assert message in output
