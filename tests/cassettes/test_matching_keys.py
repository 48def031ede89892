"""What counts as "the same request": the built-in key parts and body normalization."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.cassette import RecordedRequest
from pytest_agentreplay.cassettes.errors import MatchOnError
from pytest_agentreplay.cassettes.match_parts import body_digest, canonical_text
from pytest_agentreplay.cassettes.matching import (
    MATCH_ON_DEFAULT,
    MATCHERS,
    Index,
    body_without,
    header,
    normalize_body,
    resolve_match_on,
)
from tests.cassettes._cassette_strategies import json_values
from tests.cassettes._matching_helpers import ANTHROPIC, CHAT, RESPONSES, conversation, req


def same(a: RecordedRequest, b: RecordedRequest, match_on=MATCH_ON_DEFAULT) -> bool:
    """Whether ``b`` is served the recording of ``a``."""
    return Index([a], match_on=match_on).take(b) == 0


# -- bodies ------------------------------------------------------------------------


def test_key_order_and_whitespace_are_ignored():
    body = conversation()
    shuffled = dict(reversed(list(body.items())))
    pretty = json.dumps(shuffled, indent=4)
    assert same(req(body=body), req(body=shuffled))
    assert same(req(body=body), req(text=pretty))
    assert same(req(text=pretty), req(body=body))


def test_a_json_text_body_equals_the_same_json_stored_parsed():
    # crewAI's vcrpy cassettes keep request bodies as JSON text.
    body = conversation()
    assert same(req(text=json.dumps(body, separators=(",", ":"))), req(body=body))


def test_float_formatting_does_not_cause_a_miss():
    assert same(
        req(text='{"temperature": 1.0, "n": 1e2}'), req(text='{"n": 100, "temperature": 1}')
    )
    assert same(req(body={"t": 1.0, "x": [2.0]}), req(body={"t": 1, "x": [2]}))
    assert normalize_body(req(body={"t": 1.0, "u": 0.5})) == {"t": 1, "u": 0.5}
    assert isinstance(normalize_body(req(body={"t": 1.0}))["t"], int)


def test_different_values_do_miss():
    assert not same(req(body={"temperature": 0.2}), req(body={"temperature": 0.7}))
    assert not same(req(body=conversation("Leeds")), req(body=conversation("York")))
    # true is not 1, even though Python says True == 1
    assert not same(req(body={"x": True}), req(body={"x": 1}))
    assert not same(req(body={"x": [1, 2]}), req(body={"x": [2, 1]}))


@pytest.mark.parametrize("url", [CHAT, RESPONSES])
def test_openai_stream_options_are_noise(url):
    recorded = req(url, {"model": "m", "stream": True, "stream_options": {"include_usage": True}})
    assert same(recorded, req(url, {"model": "m", "stream": True}))
    assert same(
        recorded,
        req(url, {"model": "m", "stream": True, "stream_options": {"include_obfuscation": False}}),
    )


def test_stream_options_count_outside_the_openai_endpoints():
    # Not a provider endpoint (an embeddings call): nothing is dropped.
    url = "https://api.openai.com/v1/embeddings"
    assert not same(req(url, {"stream_options": {"a": 1}}), req(url, {}))


def test_anthropic_metadata_user_id_is_noise_but_other_metadata_is_not():
    base = conversation()
    assert same(req(body={**base, "metadata": {"user_id": "session-1"}}), req(body=base))
    assert same(
        req(body={**base, "metadata": {"user_id": "a"}}),
        req(body={**base, "metadata": {"user_id": "b"}}),
    )
    # The emptied ``metadata`` object goes with it, but a real one stays.
    assert normalize_body(req(body={"metadata": {"user_id": "a"}, "m": 1})) == {"m": 1}
    assert not same(req(body={**base, "metadata": {"x": 1}}), req(body=base))
    # On OpenAI, metadata.user_id is not dropped.
    assert not same(req(CHAT, {"metadata": {"user_id": "a"}}), req(CHAT, {}))


def test_stream_true_is_part_of_the_key():
    body = conversation()
    assert not same(req(body={**body, "stream": True}), req(body=body))
    assert not same(req(CHAT, {"model": "m", "stream": True}), req(CHAT, {"model": "m"}))


def test_stream_false_equals_no_stream():
    body = conversation()
    assert same(req(body={**body, "stream": False}), req(body=body))
    assert same(req(CHAT, {"model": "m"}), req(CHAT, {"model": "m", "stream": False}))


def test_body_without_stream_relaxes_streaming():
    body = conversation()
    relaxed = ("method", "host", "path", body_without("stream"))
    assert same(req(body=body), req(body={**body, "stream": True}), relaxed)
    assert not same(req(body=conversation("York")), req(body={**body, "stream": True}), relaxed)


def test_body_without_wildcards_and_indexes():
    recorded = {
        "messages": [{"content": "a", "cache_control": {"type": "ephemeral"}}, {"content": "b"}]
    }
    live = {"messages": [{"content": "a"}, {"content": "b", "cache_control": {"type": "x"}}]}
    assert not same(req(body=recorded), req(body=live))
    assert same(req(body=recorded), req(body=live), [body_without("messages[*].cache_control")])
    assert same(req(body={"a": [1, 2]}), req(body={"a": [9, 2]}), [body_without("a[0]")])
    assert not same(req(body={"a": [1, 2]}), req(body={"a": [1, 9]}), [body_without("a[0]")])


@pytest.mark.parametrize("bad", ["", "a..b", "a[x]", "a.[0]"])
def test_body_without_refuses_a_malformed_path(bad):
    with pytest.raises(ValueError, match="not a JSON path"):
        body_without(bad)


def test_empty_body_equals_no_body():
    assert normalize_body(req(text="")) is None
    assert normalize_body(req()) is None
    assert same(req(text=""), req())
    assert not same(req(), req(text="x"))


def test_non_json_bodies_compare_as_exact_bytes():
    form = "a=1&b=2"
    assert normalize_body(req(text=form)) == b"a=1&b=2"
    assert not same(req(text=form), req(text="b=2&a=1"))
    assert not same(req(text="hello"), req(text="hello "))
    binary = RecordedRequest(
        method="POST", url=ANTHROPIC, body_b64=base64.b64encode(b"\x00\xff").decode()
    )
    assert normalize_body(binary) == b"\x00\xff"
    assert same(binary, RecordedRequest(method="POST", url=ANTHROPIC, body_b64="AP8="))


def test_broken_json_falls_back_to_bytes():
    assert normalize_body(req(text='{"a": ')) == b'{"a": '
    assert not same(req(text='{"a": '), req(text='{"a":'))


def test_a_json_content_type_parses_a_scalar_body():
    headers = {"Content-Type": "application/json"}
    assert normalize_body(req(text="1.0", headers=headers)) == 1
    assert normalize_body(req(text="1.0")) == b"1.0"


def test_too_deep_a_body_still_matches_itself():
    deep = "[" * 5000 + "]" * 5000
    assert isinstance(normalize_body(req(text=deep)), bytes)
    assert same(req(text=deep), req(text=deep))
    assert not same(req(text=deep), req(text="[" * 4999 + "]" * 4999))


def test_normalize_body_does_not_modify_the_request():
    body = {"stream": False, "metadata": {"user_id": "u"}, "t": 1.0}
    request = req(body=body)
    normalize_body(request)
    assert request.json_body == {"stream": False, "metadata": {"user_id": "u"}, "t": 1.0}


# -- URL parts ---------------------------------------------------------------------


def test_hosts_compare_case_insensitively_and_without_port():
    assert same(req("https://API.Anthropic.COM/v1/messages"), req(ANTHROPIC))
    # A local server listens on a fresh port every run.
    assert same(req("http://127.0.0.1:5001/v1/messages"), req("http://127.0.0.1:6002/v1/messages"))
    assert not same(req("https://api.openai.com/v1/messages"), req(ANTHROPIC))


def test_default_ports_equal_no_port():
    parts = ("scheme", "host", "port", "path")
    assert same(req("https://api.anthropic.com:443/v1/messages"), req(ANTHROPIC), parts)
    assert same(req("http://h/x"), req("http://h:80/x"), parts)
    assert not same(req("https://h:8443/x"), req("https://h/x"), parts)
    assert not same(req("http://h/x"), req("https://h/x"), parts)


def test_trailing_slash_is_significant():
    assert not same(req(ANTHROPIC + "/"), req(ANTHROPIC))
    assert same(req("https://h"), req("https://h/"))


def test_query_is_order_insensitive_but_values_count():
    parts = ("path", "query")
    assert same(req("https://h/x?a=1&b=2"), req("https://h/x?b=2&a=1"), parts)
    assert same(req("https://h/x?beta=true"), req("https://h/x?beta=true#frag"), parts)
    assert not same(req("https://h/x?a=1"), req("https://h/x?a=2"), parts)
    assert not same(req("https://h/x?a="), req("https://h/x"), parts)
    # Not part of the default key.
    assert same(req(ANTHROPIC + "?beta=true"), req(ANTHROPIC))


def test_scrubbed_query_values_match_by_plain_equality():
    parts = ("path", "query")
    assert same(req("https://h/x?key=REDACTED"), req("https://h/x?key=REDACTED"), parts)


def test_uri_combines_scheme_host_port_path_query():
    assert same(req("https://H:443/x?b=2&a=1"), req("https://h/x?a=1&b=2"), ["uri"])
    assert not same(req("https://h/x?a=1"), req("https://h/y?a=1"), ["uri"])


def test_method_is_case_insensitive_and_significant():
    assert same(req(method="post"), req(method="POST"))
    assert not same(req(method="GET"), req(method="POST"))


def test_a_url_urlsplit_refuses_still_matches_itself():
    bad = "http://[::1/v1/messages"
    assert same(req(bad), req(bad))


# -- headers -----------------------------------------------------------------------


def test_headers_are_not_matched_by_default():
    assert same(req(headers={"anthropic-beta": "a"}), req(headers={"anthropic-beta": "b"}))


def test_headers_matcher_ignores_volatile_headers_and_name_case():
    recorded = req(
        headers={
            "Anthropic-Version": "2023-06-01",
            "X-Stainless-Retry-Count": "0",
            "User-Agent": "a/1",
            "Idempotency-Key": "k1",
        }
    )
    live = req(
        headers={
            "anthropic-version": "2023-06-01",
            "x-stainless-retry-count": "2",
            "user-agent": "b/2",
            "idempotency-key": "k2",
        }
    )
    assert same(recorded, live, ["headers"])
    assert not same(recorded, req(headers={"anthropic-version": "2024-01-01"}), ["headers"])


def test_header_matcher_matches_one_header():
    beta = header("Anthropic-Beta")
    assert beta.__name__ == "header('Anthropic-Beta')"
    assert same(req(headers={"anthropic-beta": "x"}), req(headers={"ANTHROPIC-BETA": "x"}), [beta])
    assert not same(req(headers={"anthropic-beta": "x"}), req(), [beta])


# -- match_on ----------------------------------------------------------------------


def test_builtin_names():
    assert set(MATCHERS) == {
        "method",
        "scheme",
        "host",
        "port",
        "path",
        "query",
        "uri",
        "headers",
        "body",
        "raw_body",
        "conversation",
    }
    assert MATCH_ON_DEFAULT == ("method", "host", "path", "body")


def test_unknown_names_raise_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown match_on part 'bodyy'; known: method, .*body"):
        Index([], match_on=["method", "bodyy"])
    with pytest.raises(MatchOnError, match="raw_body"):
        resolve_match_on(["nope"])


def test_a_bare_string_is_refused():
    with pytest.raises(MatchOnError, match=r"did you mean \('method',\)"):
        Index([], match_on="method")


def test_a_non_callable_item_is_refused():
    with pytest.raises(MatchOnError, match="names or functions, got 3"):
        resolve_match_on(["method", 3])  # type: ignore[list-item]


def test_raw_body_is_exact():
    assert not same(req(text='{"a":1}'), req(text='{"a": 1}'), ["raw_body"])
    assert same(req(text='{"a": 1}'), req(text='{"a": 1}'), ["raw_body"])
    assert same(req(text=""), req(), ["raw_body"])


def test_custom_matcher_is_a_key_part():
    def model(request: RecordedRequest):
        return (request.json_body or {}).get("model")

    recorded = req(body=conversation(model="claude-a"))
    assert same(recorded, req(body=conversation("York", model="claude-a")), ["path", model])
    assert not same(recorded, req(body=conversation(model="claude-b")), ["path", model])


def test_a_failing_custom_matcher_names_itself_and_the_interaction():
    def boom(request: RecordedRequest):
        raise KeyError("model")

    with pytest.raises(MatchOnError, match=r"'boom' failed on interactions\[0\]: KeyError"):
        Index([req()], match_on=[boom])


def test_an_unhashable_custom_matcher_value_is_a_clear_error():
    def listy(request: RecordedRequest):
        return [request.method]

    with pytest.raises(MatchOnError, match="'listy' failed on the live request.*hashable"):
        Index([], match_on=[listy]).take(req())


# -- properties --------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _reformat(value, rnd):
    """The same JSON value as another client would write it: key order shuffled,
    integral numbers written as floats or ints at random."""
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _reformat(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_reformat(v, rnd) for v in value]
    if (
        isinstance(value, float)
        and value.is_integer()
        and abs(value) < 2**53
        and rnd.random() < 0.5
    ):
        return int(value)
    if type(value) is int and abs(value) < 2**53 and rnd.random() < 0.5:
        return float(value)
    return value


@given(
    st.dictionaries(st.text(max_size=5), JSON, max_size=6),
    st.randoms(use_true_random=False),
    st.sampled_from([None, 0, 2]),
)
def test_any_json_body_matches_itself_rewritten(body, rnd, indent):
    live = req(text=json.dumps(_reformat(body, rnd), indent=indent))
    assert same(req(body=body), live)


@given(JSON, JSON)
def test_bodies_match_exactly_when_their_normal_forms_are_equal(a, b):
    assert same(req(body={"v": a}), req(body={"v": b})) == (
        json.dumps(normalize_body(req(body={"v": a})), sort_keys=True)
        == json.dumps(normalize_body(req(body={"v": b})), sort_keys=True)
    )


def test_public_names():
    from pytest_agentreplay.cassettes import matching

    assert set(matching.__all__) == {
        "IMPORTED_MATCH_ON",
        "MATCHERS",
        "MATCH_ON_DEFAULT",
        "VCRPY_MATCH_ON",
        "Index",
        "MatchOnError",
        "Matcher",
        "body_with",
        "body_without",
        "closest",
        "explain_miss",
        "header",
        "json_diff",
        "normalize_body",
        "resolve_match_on",
    }
    for name in matching.__all__:
        assert getattr(matching, name) is not None
    assert issubclass(MatchOnError, ValueError)


@given(json_values)
def test_the_canonical_text_is_json_dumps_sorted_and_compact(value: Any) -> None:
    """The key's text is written by the C encoder called straight away (issue 29): it is
    what ``json.dumps`` writes with the same options."""
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_text(value) == expected


def test_a_body_that_holds_itself_is_keyed_by_its_text() -> None:
    """A cycle (only a test-built request holds one) is a key, not an error."""
    body: list[Any] = [1]
    body.append(body)
    key = body_digest(body)
    assert isinstance(key, tuple) and key[0] == "text"
    assert key == body_digest(body) != body_digest([1, [1]])
