"""Loading bad cassettes: one error type naming file, line, column and field; hostile
input refused without running code; fuzzed bytes never escape as anything else."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.io import CassetteFormatError, load, loads
from pytest_agentreplay.errors import AgentReplayError
from tests import corpus
from tests.cassettes.test_cassette_format import EXPECTED, _example

VCR_SMALL = (
    corpus.CORPUS
    / "anthropic"
    / ("pydantic-ai__test_request_stream_fallback_for_high_max_tokens.yaml")
)


def _error(text: str | bytes) -> CassetteFormatError:
    with pytest.raises(CassetteFormatError) as info:
        loads(text, path="c.yaml")
    return info.value


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# --- the malformed matrix ----------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n\n", b"", b"\xef\xbb\xbf"], ids=repr)
def test_empty_file(text: str | bytes) -> None:
    error = _error(text)
    assert error.problem == "the file is empty"
    assert error.line is None
    assert "re-record" in error.hint


def test_only_comments() -> None:
    assert "nothing but comments" in _error("# nothing here\n").problem


def test_truncated_mid_scalar_names_the_line() -> None:
    cut = EXPECTED[: EXPECTED.index('message_start"}') + 5]
    error = _error(cut)
    assert error.line is not None
    assert error.line >= _line_of(EXPECTED, "message_start")
    assert "quoted scalar" in error.problem


def test_truncated_mid_event_list_is_not_a_shorter_stream() -> None:
    cut = EXPECTED[: EXPECTED.index("    - {t: 0.5")]
    error = _error(cut)
    assert "truncated" in error.problem
    assert error.line == cut.count("\n") + 1


def test_every_truncation_of_our_file_is_refused() -> None:
    # version comes last, so no prefix but the whole file (minus the final newline) loads.
    data = EXPECTED.encode()
    for end in range(len(data) - 1):
        with pytest.raises(CassetteFormatError):
            loads(data[:end], path="c.yaml")
    assert loads(data[:-1]) == _example()


def test_invalid_utf8_names_the_byte_offset_and_line() -> None:
    data = EXPECTED.encode()
    offset = data.index(b"claude-sonnet") + 3
    error = _error(data[:offset] + b"\xff" + data[offset:])
    assert f"byte offset {offset}" in error.problem
    assert error.line == _line_of(EXPECTED, "claude-sonnet")
    assert error.column == EXPECTED.splitlines()[error.line - 1].index("claude") + 4


def test_wrong_version_says_which_one_is_supported() -> None:
    error = _error(EXPECTED.replace("version: 1", "version: 2"))
    assert error.field == "version"
    assert "unsupported version 2" in error.problem
    assert "reads version 1" in error.problem
    assert error.line == EXPECTED.count("\n")
    assert "Upgrade" in error.hint


@pytest.mark.parametrize("version", ["'1'", "true", "1.0", "null"])
def test_version_of_the_wrong_type(version: str) -> None:
    assert _error(EXPECTED.replace("version: 1", f"version: {version}")).field == "version"


def test_missing_key_points_at_its_parent() -> None:
    text = EXPECTED.replace("    status: 404\n", "")
    error = _error(text)
    assert error.field == "interactions[1].response.status"
    assert error.problem == "missing"
    assert error.line == _line_of(text, "  response:\n    body: not found")
    assert str(error).startswith(
        f"c.yaml:{error.line}:3: interactions[1].response.status: missing. "
    )


def test_wrong_type_names_field_line_and_column() -> None:
    text = EXPECTED.replace("status: 404", "status: lost")
    error = _error(text)
    assert error.field == "interactions[1].response.status"
    assert (error.line, error.column) == (_line_of(text, "status: lost"), 5)
    assert "integer" in error.problem


def test_out_of_range_status() -> None:
    error = _error(EXPECTED.replace("status: 404", "status: 700"))
    assert error.field == "interactions[1].response.status"
    assert "599" in error.problem


def test_wrong_type_deep_in_an_event() -> None:
    text = EXPECTED.replace("{t: 0.5, ", "{t: soon, ")
    error = _error(text)
    assert error.field == "interactions[0].response.events[1].t"
    assert error.line == _line_of(text, "t: soon")


def test_unknown_key_is_refused() -> None:
    text = EXPECTED.replace("    status: 404\n", "    status: 404\n    stauts: 1\n")
    error = _error(text)
    assert error.field == "interactions[1].response.stauts"
    assert "unknown key" in error.problem


def test_cr_in_event_data_cannot_be_replayed() -> None:
    error = _error(EXPECTED.replace('data: "a\\nb"', 'data: "a\\rb"'))
    assert error.field == "interactions[0].response.events[3].data"
    assert "line break" in error.problem


def test_duplicate_key_names_both_lines() -> None:
    text = EXPECTED.replace(
        "    url: https://example.invalid/x?a=1#frag\n",
        "    url: https://example.invalid/x?a=1#frag\n    url: https://other.invalid/\n",
    )
    error = _error(text)
    first = _line_of(text, "    url: https://example.invalid")
    assert (
        f"duplicate key 'url' (first on line {first}, again on line {first + 1})" in error.problem
    )
    assert error.line == first + 1


def test_duplicate_keys_differing_only_in_quoting_are_duplicates() -> None:
    error = _error(EXPECTED.replace("      model: claude", "      'model': x\n      model: claude"))
    assert "duplicate key 'model'" in error.problem


@pytest.mark.parametrize("prefix", [b"\xef\xbb\xbf", b""])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_bom_and_crlf_are_accepted(prefix: bytes, newline: bytes) -> None:
    assert loads(prefix + EXPECTED.encode().replace(b"\n", newline)) == _example()


def test_merge_conflict_markers() -> None:
    ours, theirs = EXPECTED.split("- request:\n    method: GET")
    text = f"{ours}<<<<<<< HEAD\n- request:\n    method: GET{theirs}=======\n>>>>>>> branch\n"
    error = _error(text)
    assert "merge-conflict" in error.problem
    assert error.line == _line_of(text, "<<<<<<<")
    assert "Resolve the merge conflict or re-record" in error.hint


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("- a\n- b\n", "the top level is a list"),
        ("just a string\n", "the top level is a str"),
        ("interactions: {}\nversion: 1\n", "is a mapping, expected a list"),
        ("version: 1\n", "no 'interactions' key"),
        ("interactions: [1]\nversion: 1\n", "is an integer, expected a mapping"),
        ("a: 1\n---\nb: 2\n", "single document"),
    ],
)
def test_not_shaped_like_a_cassette(text: str, problem: str) -> None:
    assert problem in str(_error(text))


def test_vcr_shape_errors_point_into_the_source_file() -> None:
    text = VCR_SMALL.read_text().replace("code: 200", "code: OK")
    error = _error(text)
    assert error.field == "interactions[0].response.status.code"
    assert error.line == _line_of(text, "code: OK")
    assert "integer" in error.problem


def test_http_snapshot_syntax_error_has_a_line() -> None:
    error = _error('[\n  {"request": {\n')
    assert error.line is not None
    assert "not valid JSON" in error.problem


def test_the_error_is_an_agentreplay_error_and_pickles() -> None:
    error = _error(EXPECTED.replace("status: 404", "status: lost"))
    assert isinstance(error, AgentReplayError)
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    assert (copy.path, copy.line, copy.field) == (error.path, error.line, error.field)


def test_messages_never_quote_values() -> None:
    secret = "sk-ant-api03-" + "x" * 40
    text = EXPECTED.replace("status: 404", f"status: {secret}")
    assert secret not in str(_error(text))


def test_load_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("version: 1\n")
    with pytest.raises(CassetteFormatError, match=r"bad\.yaml") as info:
        load(path)
    assert info.value.path == path


# --- hostile input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/apply:subprocess.check_call [['touch', '{marker}']]",
        "!!python/object/new:pathlib.Path ['{marker}']",
        "!!python/name:os.system",
        "!custom {{}}",
    ],
)
def test_object_tags_are_refused_and_run_nothing(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "pwned"
    value = tag.format(marker=marker)
    text = EXPECTED.replace("x-trap", "x").replace("body: not found", f"body: {value}")
    error = _error(text)
    assert "tag" in error.problem
    assert error.line == _line_of(text, "body: !")
    assert "do not trust it" in error.hint
    assert not marker.exists()


def _laughs(levels: int = 9) -> str:
    lines = ["lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels):
        refs = ", ".join([f"*lol{n - 1}"] * 9)
        lines.append(f"lol{n}: &lol{n} [{refs}]")
    return "interactions: []\nextra:\n" + "".join(f"  {line}\n" for line in lines) + "version: 1\n"


def test_billion_laughs_is_refused() -> None:
    """Refused before expansion (its memory budget: tests/hardening/
    test_hostile_cassettes.py; its time: bench/hostile_cassettes.py)."""
    assert "alias" in _error(_laughs()).problem


def test_recursive_alias_is_refused() -> None:
    assert "recursive alias" in _error("interactions: &a [*a]\nversion: 1\n").problem


def test_a_few_harmless_aliases_still_load_as_data() -> None:
    text = EXPECTED.replace("      metadata: {}", "      metadata: &m {k: v}\n      again: *m")
    assert loads(text).interactions[0].request.json_body["again"] == {"k": "v"}


@pytest.mark.parametrize(
    ("character", "escaped"),
    [("\x80", "\\x80"), ("\x07", "\\x07"), ("\ufffe", "\\uFFFE")],
)
def test_a_character_yaml_refuses_is_named_with_its_line_and_column(
    tmp_path: Path, character: str, escaped: str
) -> None:
    """PyYAML names such a character by its position in the text only: the error names
    the file, line and column, the character, and how YAML would read it."""
    path = tmp_path / "c.yaml"
    path.write_text(f"interactions: []\nversion: 1\nnote: na{character}ve\n", encoding="utf-8")
    with pytest.raises(CassetteFormatError) as failed:
        load(path)
    message = str(failed.value)
    assert message.startswith(f"{path}:3:9: holds U+{ord(character):04X}, a character YAML")
    assert f'double-quoted string ("{escaped}")' in message


def test_a_text_holding_a_lone_surrogate_is_a_format_error_naming_it() -> None:
    """No file holds one (files are read as UTF-8), but a text handed to ``loads`` can:
    the format error names the line and column, not the encoder's position."""
    with pytest.raises(CassetteFormatError) as failed:
        loads("interactions: []\nversion: 1\nnote: a\ud800\n", path="given.yaml")
    assert str(failed.value).startswith("given.yaml:3:8: holds U+D800, a lone surrogate")


@pytest.mark.parametrize("depth", [150, 10_000])
@pytest.mark.parametrize("style", ["flow", "block"])
def test_deep_nesting_is_a_format_error_not_a_recursion_error(depth: int, style: str) -> None:
    nested = "[" * depth + "]" * depth if style == "flow" else "- " * depth + "x"
    text = EXPECTED.replace("      metadata: {}", f"      metadata:\n        {nested}")
    error = _error(text)
    assert "nest" in error.problem


# --- fuzzing -----------------------------------------------------------------------------


def _survives(data: bytes) -> bool:
    """``data`` loads, or is refused with a format error that names the file (never
    another exception). Time is bench/'s concern (bench/hostile_cassettes.py)."""
    try:
        loads(data, path="fuzz.yaml")
    except CassetteFormatError as error:
        return str(error).startswith("fuzz.yaml")
    return True


@given(st.binary(max_size=400))
def test_arbitrary_bytes(data: bytes) -> None:
    assert _survives(data)


_SEEDS = [EXPECTED.encode(), VCR_SMALL.read_bytes()]


@given(
    st.sampled_from(_SEEDS),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_byte_flips(seed: bytes, flips: list[tuple[int, int]]) -> None:
    data = bytearray(seed)
    for where, value in flips:
        data[where % len(data)] = value
    assert _survives(bytes(data))


@given(st.sampled_from(_SEEDS), st.integers(0, 10**6), st.binary(min_size=1, max_size=20))
def test_insertions(seed: bytes, where: int, junk: bytes) -> None:
    at = where % len(seed)
    assert _survives(seed[:at] + junk + seed[at:])


def test_truncation_of_a_vcr_cassette_at_every_offset() -> None:
    data = VCR_SMALL.read_bytes()
    slowest = max(_survives(data[:end]) for end in range(len(data)))
    assert slowest < 2.0


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2025-01-01", "metadata.when holds a date"),
        ("!!binary aGk=", "metadata.when holds a bytes"),
        ("!!set {a: null}", "metadata.when holds a set"),
        ("{1: x}", "metadata.when has a int key"),
    ],
)
def test_json_bodies_hold_only_json(value: str, problem: str) -> None:
    text = EXPECTED.replace("      metadata: {}", f"      metadata:\n        when: {value}")
    error = _error(text)
    assert error.field == "interactions[0].request.json"
    assert problem in error.problem


def test_vcr_parsed_body_with_a_date_points_at_it() -> None:
    text = VCR_SMALL.read_text().replace("max_tokens: 32000", "max_tokens: 2025-01-01")
    error = _error(text)
    assert error.field == "interactions[0].request.parsed_body"
    assert "max_tokens holds a date" in error.problem
    assert error.line == _line_of(text, "parsed_body")


@pytest.mark.parametrize("depth", [120, 900, 5000])
def test_deep_json_in_an_http_snapshot_is_never_a_recursion_error(depth: int) -> None:
    body = "[" * depth + "]" * depth
    text = (
        f'[{{"request": {{"method": "POST", "url": "https://x.invalid/", "body": {body}}},'
        f' "response": {{"status_code": 200, "headers": {{}}, "body": null}}}}]'
    )
    # Either stored as text (too deep to store parsed) or refused; never a RecursionError.
    outcome: str
    try:
        outcome = loads(text).interactions[0].request.body or ""
    except CassetteFormatError as error:
        outcome = error.problem
    assert outcome.startswith("[[[") or "nest" in outcome


# --- a vcrpy request body held as an object (issue 26) -----------------------------------

VCR_OBJECT_BODY = """\
interactions:
- request:
    body:
{body}
    headers:
      content-type:
      - application/json
    method: POST
    uri: https://router.example.test/v1/chat/completions
  response:
    body:
{response}
    headers:
      content-type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
"""

JSON_RESPONSE = "      string: '{\"ok\": true}'"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("      model: m\n      tool_choice: none\n      stream: false", None),
        ("      - 1\n      - two", [1, "two"]),
    ],
    ids=["mapping", "list"],
)
def test_a_vcrpy_request_body_held_as_an_object_is_its_json_body(
    body: str, expected: object
) -> None:
    """vcrpy hands such a body (written by a serializer that parsed the JSON, as some of
    pydantic-ai's files are) over as the object: it was read as no body at all."""
    cassette = loads(VCR_OBJECT_BODY.format(body=body, response=JSON_RESPONSE), path="c.yaml")
    request = cassette.interactions[0].request
    mapping = {"model": "m", "tool_choice": "none", "stream": False}
    assert json.loads(request.content()) == (mapping if expected is None else expected)


def test_a_vcrpy_request_body_in_the_response_s_string_wrapper_is_still_its_text() -> None:
    text = VCR_OBJECT_BODY.format(body="      string: '{\"n\": 1}'", response=JSON_RESPONSE)
    assert json.loads(loads(text).interactions[0].request.content()) == {"n": 1}


def test_a_vcrpy_response_body_mapping_without_string_is_refused_not_emptied() -> None:
    text = VCR_OBJECT_BODY.format(body="      n: 1", response="      ok: true")
    error = _error(text)
    assert error.field == "interactions[0].response.body"
    assert "missing key 'string'" in error.problem


def test_an_empty_vcrpy_response_body_mapping_is_an_empty_body() -> None:
    text = VCR_OBJECT_BODY.format(body="      n: 1", response="      {}")
    assert loads(text).interactions[0].response.content() == b""
