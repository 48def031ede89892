"""What a user reads when a request matches nothing: json_diff and explain_miss."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.matching import Index, explain_miss, json_diff
from tests.cassettes._matching_helpers import ANTHROPIC, CHAT, conversation, req

CASSETTE = Path("tests/cassettes/test_agent/test_weather.yaml")
TEST = "tests/test_agent.py::test_weather[leeds]"


def miss(request, index, **kwargs) -> str:
    options = {
        "cassette": CASSETTE,
        "test": TEST,
        "record_mode": "none",
        "rerecord": "new_episodes",
    }
    options.update(kwargs)
    return explain_miss(request, index, **options)


def entries(report: str) -> list[str]:
    """The closest-interaction entries, one string each."""
    return re.split(r"\n(?=  interactions\[)", report.split("closest recorded interactions", 1)[1])[
        1:
    ]


# -- json_diff ---------------------------------------------------------------------


def test_equal_values_have_no_diff():
    assert json_diff(conversation(), conversation()) == []


def test_a_changed_nested_value_is_named_by_its_json_path():
    assert json_diff(conversation("Leeds"), conversation("York")) == [
        "messages[1].content[1].input.city: 'Leeds' != 'York'"
    ]


def test_labels_missing_and_new_keys():
    a = {"temperature": 0.2, "tools": [{"name": "w"}], "model": "m"}
    b = {"temperature": 0.7, "model": "m", "top_p": 1}
    assert json_diff(a, b, labels=("recorded", "now")) == [
        "temperature: recorded 0.2, now 0.7",
        'tools: missing now (recorded [{"name":"w"}])',
        "top_p: new now: 1",
    ]
    assert json_diff(a, b) == [
        "temperature: 0.2 != 0.7",
        'tools: missing in b (a [{"name":"w"}])',
        "top_p: new in b: 1",
    ]


def test_an_inserted_list_item_is_one_line_not_a_cascade():
    a = {"messages": ["m0", "m1", "m2", "m3"]}
    b = {"messages": ["m0", "m1", "extra", "m2", "m3"]}
    assert json_diff(a, b) == ["messages[2]: new in b: 'extra'"]
    assert json_diff(b, a) == ["messages[2]: missing in b (a 'extra')"]


def test_a_changed_item_in_a_longer_list_is_diffed_inside():
    a = {"messages": [{"c": "m0"}, {"c": "m1"}]}
    b = {"messages": [{"c": "m0"}, {"c": "M1"}, {"c": "m2"}]}
    assert json_diff(a, b) == ["messages[1].c: 'm1' != 'M1'", 'messages[2]: new in b: {"c":"m2"}']


def test_types_are_compared_exactly():
    assert json_diff({"x": True}, {"x": 1}) == ["x: true != 1"]
    assert json_diff({"x": [{"y": False}]}, {"x": [{"y": 0}]}) == ["x[0].y: false != 0"]
    assert json_diff({"x": "1"}, {"x": 1}) == ["x: '1' != 1"]
    assert json_diff({"x": None}, {"x": {}}) == ["x: null != {}"]


def test_the_root_and_odd_keys_are_named_readably():
    assert json_diff(1, 2) == ["(root): 1 != 2"]
    assert json_diff({"a b": {"x.y": 1}}, {"a b": {"x.y": 2}}) == ['["a b"]["x.y"]: 1 != 2']


def test_long_strings_are_cut_around_the_first_difference():
    prefix = "word " * 400
    [line] = json_diff({"s": prefix + "Leeds and more"}, {"s": prefix + "York and more"})
    assert "first difference at char 2,000" in line
    assert "Leeds" in line and "York" in line
    assert len(line) < 250


def test_many_differences_are_capped_and_counted():
    a = {f"k{i}": i for i in range(100)}
    b = {f"k{i}": i + 1 for i in range(100)}
    lines = json_diff(a, b, limit=5)
    assert len(lines) == 6
    assert lines[-1] == "… and 95 more differences"


def test_huge_values_are_shown_cut_to_one_line():
    [line] = json_diff(
        {}, {"tools": [{"name": f"tool{i}", "description": "x" * 50} for i in range(500)]}
    )
    assert line.startswith('tools: new in b: [{"name":"tool0"')
    assert line.endswith("(500 items)")
    assert len(line) < 150


def test_the_walk_is_bounded_on_huge_bodies():
    a = {"rows": [[i, i] for i in range(150_000)]}
    b = {"rows": [[i, i + 1] for i in range(150_000)]}
    lines = json_diff(a, b, limit=3)
    assert lines[:3] == ["rows[0][1]: 0 != 1", "rows[1][1]: 1 != 2", "rows[2][1]: 2 != 3"]
    assert lines[-1].startswith("… diff stopped after 200,000 nodes")


def test_mask_is_applied_to_values_before_they_are_cut():
    secret = "sk-ant-api03-" + "Q" * 60

    def mask(text: str) -> str:
        return text.replace(secret, "***")

    a = {"note": "x" * 100 + secret + "y" * 100, "key": secret}
    b = {"note": "x" * 100 + secret + "z" * 100, "key": secret + "2"}
    text = "\n".join(json_diff(a, b, mask=mask))
    assert "QQQQQQ" not in text
    assert "***" in text


def test_mask_is_applied_to_a_whole_value_shown_cut():
    secret = "sk-ant-api03-" + "Q" * 60
    lines = json_diff(
        {},
        {"k": "x" * 60 + secret, "l": ["y" * 60 + secret]},
        mask=lambda s: s.replace(secret, "***"),
    )
    assert lines == [
        "k: new in b: " + repr("x" * 60 + "***") + "",
        'l: new in b: ["' + "y" * 60 + '***"]',
    ]


def test_a_difference_only_inside_a_masked_value_says_so():
    lines = json_diff(
        {"k": "secret-1"}, {"k": "secret-2"}, mask=lambda s: re.sub(r"secret-\d", "***", s)
    )
    assert lines == ["k: <masked> != <masked> (they differ inside a masked value)"]


# -- explain_miss ------------------------------------------------------------------


def test_report_layout_for_a_changed_nested_value():
    index = Index([req(body=conversation("Leeds"))])
    report = miss(req(body=conversation("York")), index)
    lines = report.splitlines()
    assert lines[0] == (
        f"no recorded interaction matches POST {ANTHROPIC} in cassette {CASSETTE} "
        f"(test {TEST}, record mode none)"
    )
    assert "  interactions[0]: POST https://api.anthropic.com/v1/messages (not played yet)" in lines
    assert "        messages[1].content[1].input.city: recorded 'Leeds', now 'York'" in lines
    assert lines[-1] == (
        "to re-record: pytest 'tests/test_agent.py::test_weather[leeds]' "
        "--agentreplay-record-mode=new_episodes"
    )


def test_report_for_an_extra_message():
    recorded = conversation("Leeds", turns=1)
    live = conversation("Leeds", turns=1)
    live["messages"].append({"role": "user", "content": "And tomorrow?"})
    report = miss(req(body=live), Index([req(body=recorded)]))
    assert '        messages[3]: new now: {"role":"user","content":"And tomorrow?"}' in report
    assert "Leeds" not in report  # nothing else is reported as different


def test_report_for_a_consumed_match():
    index = Index([req(body=conversation()), req(body=conversation("York"))])
    assert index.take(req(body=conversation())) == 0
    report = miss(req(body=conversation()), index)
    first = entries(report)[0]
    assert first.startswith(
        "  interactions[0]: POST https://api.anthropic.com/v1/messages "
        "(already played in this test)"
    )
    assert "it matched, but it was consumed" in first
    assert (
        "one more time than when the cassette was recorded (recorded 1 time, this is call 2)"
        in first
    )
    assert "(of 2; 1 played, 1 not played)" in report


def test_report_for_a_different_path():
    report = miss(req(ANTHROPIC + "/", conversation()), Index([req(body=conversation())]))
    [entry] = entries(report)
    assert "differs in path:" in entry
    assert "path: recorded '/v1/messages', now '/v1/messages/'" in entry


def test_report_for_a_different_host():
    recorded = req("https://api.openai.com/v1/messages", conversation())
    report = miss(req(body=conversation()), Index([recorded]))
    assert "host: recorded 'api.openai.com', now 'api.anthropic.com'" in report


def test_report_for_a_different_host_and_body_puts_the_body_under_a_heading():
    recorded = req("https://api.openai.com/v1/messages", conversation("Leeds"))
    report = miss(req(body=conversation("York")), Index([recorded]))
    assert "      differs in host, body:" in report
    assert (
        "        body:\n          messages[1].content[1].input.city: recorded 'Leeds', now 'York'"
        in report
    )


def test_report_for_a_non_json_body():
    url = "https://uploads.example.com/files"
    recorded = req(url, text="----boundary-1\r\ncontent" + "a" * 200)
    report = miss(req(url, text="----boundary-2\r\ncontent" + "a" * 200), Index([recorded]))
    assert "not JSON, 223 → 223 bytes" in report
    assert "first difference at char 13" in report


def test_report_for_json_against_no_body():
    report = miss(req(body={"a": 1}), Index([req()]))
    assert '(whole body): recorded no body, now JSON {"a":1}' in report


def test_report_shows_at_most_three_ranked_candidates():
    recorded = [req(body=conversation(c, max_tokens=5)) for c in ("A", "B", "C", "D", "E")]
    recorded.append(req(body=conversation("Leeds", temperature=0.3)))
    report = miss(req(body=conversation("Leeds")), Index(recorded))
    found = entries(report)
    assert len(found) == 3
    assert found[0].startswith("  interactions[5]")  # only temperature differs
    assert "temperature: recorded 0.3, now 0.2" in found[0]


def test_report_for_an_empty_cassette():
    report = miss(req(), Index([]), test=None, rerecord="rewrite")
    assert report.splitlines() == [
        f"no recorded interaction matches POST {ANTHROPIC} in cassette {CASSETTE} "
        "(record mode none)",
        "matching on: method, host, path, body",
        "the cassette has no recorded interactions",
        "to re-record: pytest --agentreplay-record-mode=rewrite",
    ]


def test_a_whole_rerecord_command_is_shown_verbatim():
    command = "pytest tests/x.py -k weather --agentreplay-record-mode=rewrite"
    assert miss(req(), Index([]), rerecord=command).endswith(f"to re-record: {command}")


def test_custom_and_header_parts_are_shown():
    def model(request):
        return (request.json_body or {}).get("model")

    index = Index(
        [req(body={"model": "a"}, headers={"Anthropic-Beta": "x"})], match_on=("headers", model)
    )
    report = miss(req(body={"model": "b"}, headers={"anthropic-beta": "y"}), index)
    assert "matching on: headers, model" in report
    assert "model: recorded 'a', now 'b'" in report
    assert "anthropic-beta: recorded 'x', now 'y'" in report


def test_report_masks_secrets_everywhere():
    secret = "sk-ant-api03-" + "Z" * 80

    def mask(text: str) -> str:
        return text.replace(secret, "<masked>")

    recorded = req(CHAT + "?key=" + secret, {"messages": [{"content": "use " + secret + " now"}]})
    live = req(CHAT + "?key=" + secret, {"messages": [{"content": "use " + secret + " later"}]})
    index = Index([recorded], match_on=("path", "query", "body"))
    report = miss(live, index, mask=mask)
    assert "ZZZZZZZZ" not in report
    assert report.count("<masked>") >= 3  # live URL, recorded URL, the body strings
    assert "content: recorded 'use <masked> now', now 'use <masked> later'" in report


def test_report_masks_a_secret_cut_by_shortening():
    secret = "sk-proj-" + "W" * 60
    before = "x" * 30 + secret  # the cut would show only the secret's start
    index = Index([req(body={"prompt": before + "a" * 90})])
    report = miss(
        req(body={"prompt": before + "b" * 90}), index, mask=lambda s: s.replace(secret, "[key]")
    )
    assert "sk-proj" not in report
    assert "WWWW" not in report


@pytest.mark.parametrize("n", [100, 5000])
def test_report_on_a_big_cassette_is_short(n):
    recorded = [req(body=conversation(f"city{i}")) for i in range(n)]
    report = miss(req(body=conversation("Nowhere")), Index(recorded))
    assert len(entries(report)) == 3
    assert len(report.splitlines()) < 20
