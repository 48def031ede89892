"""The canonical reader's proof that a file is the writer's text (issue 29).

Loading a file the plugin wrote used to write it again and compare: about as costly
as reading it. Now the reader holds each line to the writer as it reads it, and
:func:`~pytest_agentreplay.cassettes.yaml.layout.lays_out` checks that the model
built from the data writes the same layout; the file is written again only when
either says no. The proof must never be more generous than the comparison it
replaces: whatever it accepts, the writer gives back exactly. These tests hold it to
that on every cassette the writer produces and on hand edits of them (a line moved,
re-indented, re-quoted, doubled), and check that it does accept the files the plugin
writes, so the load no longer writes them again.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes import big_file
from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.big_file import built_event, load_big
from pytest_agentreplay.cassettes.cassette import Cassette, Interaction, cassette_from_data
from pytest_agentreplay.cassettes.errors import CassetteValueError
from pytest_agentreplay.cassettes.io import dumps, loads
from pytest_agentreplay.cassettes.yaml import fast as fast_reader
from pytest_agentreplay.cassettes.yaml.emit import dump_interactions
from pytest_agentreplay.cassettes.yaml.errors import NotCanonicalError, UnstorableError
from pytest_agentreplay.cassettes.yaml.fast import read_written
from pytest_agentreplay.cassettes.yaml.layout import lays_out
from tests import corpus
from tests.cassettes._cassette_strategies import cassettes
from tests.cli._helpers import json_interaction, stream_interaction

REALISTIC = dumps(Cassette(interactions=[stream_interaction(), json_interaction()]))


def _proved(text: str) -> Cassette | None:
    """The cassette in ``text`` if the reader proves it is the writer's text, else None."""
    try:
        data, proven = read_written(text, event=built_event)
        cassette = cassette_from_data(data, json_checked=True)
    except (NotCanonicalError, CassetteValueError, UnstorableError, RecursionError):
        return None
    if proven and lays_out(cassette.interactions, cassette.version, data):
        return cassette
    return None


def _written_back(cassette: Cassette) -> str | None:
    try:
        return dump_interactions(cassette.interactions, cassette.version)
    except UnstorableError:
        return None


# --- sound: what the proof accepts, the writer gives back --------------------------------

_SCALAR = re.compile(r"^( *(?:- )?[^ :'\"][^:]*: )(.+)$")


def _requoted(line: str, style: int) -> str:
    """``line`` with its value written another way YAML reads the same (or not)."""
    match = _SCALAR.match(line)
    if match is None:
        return line + " "
    head, value = match.groups()
    bare = value[1:-1] if value[:1] in "'\"" and value[-1:] == value[:1] else value
    return head + ["'{}'", '"{}"', "{}", "{} ", "{} # note", " {}"][style].format(bare)


_EDITS = (
    "indent",
    "dedent",
    "trailing space",
    "requote",
    "drop",
    "double",
    "swap",
    "blank",
    "flow",
)


def _edited(text: str, edit: str, at: int, style: int) -> str:
    lines = text.split("\n")[:-1]
    at %= len(lines)
    line = lines[at]
    if edit == "indent":
        lines[at] = "  " + line
    elif edit == "dedent":
        lines[at] = line[2:] if line.startswith("  ") else line
    elif edit == "trailing space":
        lines[at] = line + " "
    elif edit == "requote":
        lines[at] = _requoted(line, style)
    elif edit == "drop":
        del lines[at]
    elif edit == "double":
        lines.insert(at, line)
    elif edit == "swap" and at + 1 < len(lines):
        lines[at], lines[at + 1] = lines[at + 1], line
    elif edit == "blank":
        lines.insert(at, "")
    elif edit == "flow" and line.endswith(":"):
        lines[at] = line + " {}"
    return "\n".join(lines) + "\n"


def _holds(text: str) -> None:
    """If the proof accepts ``text``, writing the cassette gives back ``text``, and the
    libyaml loader (a hand-edited file's path) reads the same cassette."""
    proved = _proved(text)
    if proved is None:
        return
    assert _written_back(proved) == text
    assert cassette_io._fast(text) == proved
    assert loads(text) == proved


@given(
    cassettes,
    st.lists(
        st.tuples(st.sampled_from(_EDITS), st.integers(0, 10**6), st.integers(0, 5)),
        min_size=1,
        max_size=3,
    ),
)
def test_an_edited_cassette_is_proven_only_when_the_writer_gives_it_back(
    cassette: Cassette, edits: list[tuple[str, int, int]]
) -> None:
    text = dumps(cassette)
    for edit, at, style in edits:
        text = _edited(text, edit, at, style)
    _holds(text)


@given(
    st.sampled_from(_EDITS),
    st.integers(0, 10**6),
    st.integers(0, 5),
)
def test_an_edited_recording_is_proven_only_when_the_writer_gives_it_back(
    edit: str, at: int, style: int
) -> None:
    _holds(_edited(REALISTIC, edit, at, style))


@pytest.mark.parametrize(
    ("case", "old", "new"),
    [
        ("a plain text quoted", "      model: gpt-test\n", "      model: 'gpt-test'\n"),
        (
            "an event's data double-quoted",
            """data: '{"type": "ping"}'""",
            r'data: "{\"type\": \"ping\"}"',
        ),
        ("a key quoted", "      model: gpt-test\n", "      'model': gpt-test\n"),
        (
            "a nested mapping 4 deeper",
            "    headers:\n      content-type",
            "    headers:\n        content-type",
        ),
        ("a space after a head", "    headers:\n", "    headers: \n"),
        (
            "headers out of order",
            "content-type: application/json\n",
            "content-type: application/json\n      a-first: x\n",
        ),
        (
            "a header name in capitals",
            "content-type: application/json\n",
            "Content-Type: application/json\n",
        ),
        (
            "no headers written as {}",
            "  response:\n    status: 200\n",
            "  response:\n    status: 200\n    headers: {}\n",
        ),
        (
            "a flow mapping",
            "    headers:\n      content-type: application/json\n",
            "    headers: {content-type: application/json}\n",
        ),
        (
            "an end the writer leaves out",
            "    status: 200\n    headers:\n      content-type: application/json\n    json:",
            "    status: 200\n    headers:\n      content-type: application/json\n"
            "    end: complete\n    json:",
        ),
        ("an event line spaced", "    - {t: 0.2, ", "    - { t: 0.2, "),
        ("a number written with a plus", "    status: 200\n", "    status: +200\n"),
    ],
)
def test_text_the_writer_would_not_write_is_not_proven(case: str, old: str, new: str) -> None:
    """Each of these reads as YAML (most of them to the same cassette), but the writer
    would not write it: the proof says no, and the load compares the writer's text
    (or reads the file the slow way) as before."""
    assert old in REALISTIC, case
    edited = REALISTIC.replace(old, new, 1)
    assert _proved(edited) is None, case
    _holds(edited)
    fast = cassette_io._fast(edited)
    assert fast is None or _written_back(fast) == edited


# --- complete: the files the plugin writes are proven --------------------------------


def _one_line_fields(cassette: Cassette) -> bool:
    """Whether the method, URL and ``truncated`` of each interaction are one line: the
    writer writes them on one line where the block layout would write a literal block,
    so a line break there is left to the comparison (no real request has one)."""
    return not any(
        "\n" in interaction.request.method + interaction.request.url
        or "\n" in (interaction.response.truncated or "")
        for interaction in cassette.interactions
    )


@given(cassettes.filter(_one_line_fields))
def test_every_cassette_the_writer_produces_is_proven(cassette: Cassette) -> None:
    """Not a vacuous proof: the writer's own text passes it, so loading does not write
    the file again. Left to the comparison: an imported interaction's ``origin`` (the
    strategy makes none) and a line break in a field written on one line."""
    text = dumps(cassette)
    proved = _proved(text)
    assert proved is not None
    assert proved == loads(text)


def test_the_real_recordings_are_proven() -> None:
    texts = [REALISTIC] + [dumps(loads(p.read_bytes(), path=str(p))) for p in corpus.files()]
    for text in texts:
        assert _proved(text) is not None, text[:200]


def test_an_imported_interaction_is_compared_with_the_writers_text() -> None:
    """``origin`` is laid out by the writer as it is held; the proof leaves it to the
    comparison, which accepts the file as before."""
    imported = Interaction(
        request=json_interaction().request,
        response=json_interaction().response,
        origin={"source": "trace", "span": "abc"},
    )
    text = dumps(Cassette(interactions=[imported]))
    assert _proved(text) is None
    loaded = cassette_io._fast(text)
    assert loaded is not None and loaded.interactions[0].origin == imported.origin


# --- the load of a big file trusts the proof -------------------------------------------


def _big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file read the big file's way (a block of lines at a time, no whole text)."""
    path = tmp_path / "big.yaml"
    path.write_text(dumps(Cassette(interactions=[json_interaction()] * 3)))
    monkeypatch.setattr(big_file, "STREAMED_FROM", path.stat().st_size // 2)
    return path


def test_a_big_proven_file_is_not_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big(tmp_path, monkeypatch)

    def written_again(*args: Any) -> bool:
        raise AssertionError("a proven file was written again to compare")

    monkeypatch.setattr(big_file, "_writes_back", written_again)
    loaded = load_big(str(path))
    assert loaded is not None
    assert loaded == cassette_io._libyaml_loads(path.read_bytes(), str(path))


def test_a_big_file_the_proof_refuses_is_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quoted value the writer leaves plain: not proven, so the comparison runs, finds
    the difference, and the whole-text reader takes over (reading the same value)."""
    path = _big(tmp_path, monkeypatch)
    text = path.read_text()
    path.write_text(text.replace("      model: gpt-test\n", "      model: 'gpt-test'\n", 1))
    compared: list[bool] = []
    writes_back = big_file._writes_back

    def spy(*args: Any) -> bool:
        compared.append(same := writes_back(*args))
        return same

    monkeypatch.setattr(big_file, "_writes_back", spy)
    assert load_big(str(path)) is None
    assert compared == [False]
    assert cassette_io.load(path).interactions[0].request.json_body["model"] == "gpt-test"


# --- the forms each check is there for ----------------------------------------------


def _with_body(body: Any) -> str:
    request = json_interaction().request.replace(json_body=body)
    return dumps(Cassette(interactions=[json_interaction().replace(request=request)]))


def test_a_list_item_quoted_otherwise_is_not_proven() -> None:
    text = _with_body({"stop": ["a b", "yes"]})
    assert "      - a b\n      - 'yes'\n" in text
    assert _proved(text) is not None
    for old, new in (("- a b\n", "- 'a b'\n"), ("- 'yes'\n", '- "yes"\n')):
        edited = text.replace(old, new, 1)
        assert _proved(edited) is None, new
        assert loads(edited) == loads(text)  # the same values, read the slow way


def test_a_literal_block_with_a_blank_line_of_spaces_is_not_proven() -> None:
    """YAML reads a line of spaces inside a literal block as an empty line; the writer
    writes an empty line, so the file is not the writer's."""
    text = _with_body({"system": "first\n\nthird"})
    assert "      system: |-\n        first\n\n        third\n" in text
    assert _proved(text) is not None
    edited = text.replace("first\n\n", "first\n        \n", 1)
    assert _proved(edited) is None
    assert loads(edited) == loads(text)


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("method", "    method: POST\n"),
        ("url", "    url: https://api.openai.com/v1/chat/completions\n"),
    ],
)
def test_a_one_line_field_written_as_a_literal_block_is_not_proven(field: str, line: str) -> None:
    """The writer writes a method or URL on one line (quoted, a line break escaped); a
    literal block holding the same text is the block layout of it, but not the
    writer's text."""
    text = _with_body({"model": "gpt-test"})
    assert line in text
    value = line.split(": ", 1)[1].rstrip("\n")
    edited = text.replace(line, f"    {field}: |-\n      {value}\n      more\n", 1)
    assert _proved(edited) is None
    assert _written_back(loads(edited)) != edited
    assert getattr(loads(edited).interactions[0].request, field) == f"{value}\nmore"


def test_a_body_nested_deeper_than_the_writer_writes_is_not_proven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file nested deeper than the writer writes (a few levels beyond, which the
    reader still reads) is not proven: it goes the slow way, which reads it."""
    from pytest_agentreplay.cassettes.yaml import emit, scalars

    deep: Any = "bottom"
    for _ in range(scalars.MAX_DEPTH + 1):
        deep = {"k": deep}
    with monkeypatch.context() as patched:
        patched.setattr(emit, "MAX_DEPTH", scalars.MAX_DEPTH + 10)
        text = dumps(Cassette(interactions=[json_interaction()])).replace(
            "      model: gpt-test\n",
            "\n".join(emit.dump_json(deep, indent=6)).replace("json:", "model:", 1) + "\n",
            1,
        )
    assert _proved(text) is None
    assert cassette_io._fast(text) is None
    assert loads(text).interactions[0].request.json_body["model"] == deep


def _laid_out(at: int, read: dict[str, Any] | None = None, **model: Any) -> bool:
    """:func:`lays_out` of the realistic file's data, its interaction ``at``'s response
    data given ``read`` (a key given ``None`` is dropped), against a model whose
    response there is a stand-in given ``model`` (the model's constructor would refuse
    most of these values)."""
    data, proven = read_written(REALISTIC, event=built_event)
    cassette = cassette_from_data(data, json_checked=True)
    assert proven and lays_out(cassette.interactions, cassette.version, data)
    row = data["interactions"][at]["response"]
    for key, value in (read or {}).items():
        if value is None:
            del row[key]
        else:
            row[key] = value
    interactions: list[Any] = list(cassette.interactions)
    kept = interactions[at].response
    fields = {name: getattr(kept, name) for name in kept._FIELDS}
    response = SimpleNamespace(**{**fields, **model})
    interactions[at] = SimpleNamespace(
        request=interactions[at].request, response=response, origin=None
    )
    return lays_out(interactions, cassette.version, data)


def test_a_model_that_does_not_hold_what_was_read_is_not_laid_out() -> None:
    """Each value the writer writes from the model must be the one read: a status of
    another type, a JSON body that is another object (even an equal one), another text
    body, other events, an ending the writer writes unquoted where the block layout
    quotes it."""
    stream, plain = 0, 1
    body = json_interaction().response.json_body
    assert _laid_out(stream) and _laid_out(plain)  # the stand-in itself changes nothing
    assert not _laid_out(plain, status=200.0)
    assert not _laid_out(plain, json_body=dict(body))
    as_text = {"json": None, "body": "text"}
    assert _laid_out(plain, as_text, json_body=None, body="text")
    assert not _laid_out(plain, as_text, json_body=None, body="other")
    assert not _laid_out(stream, events=[])
    assert not _laid_out(stream, {"end": "yes"}, end="yes")
    assert _laid_out(stream, {"end": "cut"}, end="cut")


@pytest.fixture
def fresh_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """No line remembered from the files other tests read."""
    monkeypatch.setattr(fast_reader, "_PROVEN_LINES", {})


@pytest.mark.usefixtures("fresh_memory")
def test_a_line_the_writer_would_not_write_is_not_remembered_for_the_next_file() -> None:
    """The lines a proving reader proved are kept for the next files (a suite's
    cassettes share their header lines); a line that failed is not, so the next file
    holding it is not proven either, however many times it is read."""
    edited = REALISTIC.replace("      model: gpt-test\n", "      model: 'gpt-test'\n", 1)
    assert edited != REALISTIC
    for _ in range(3):
        assert _proved(edited) is None
        assert _proved(REALISTIC) is not None
    # A file whose only difference from a proven one is that line is refused too.
    other = _with_body({"model": "gpt-test", "n": 2})
    assert _proved(other) is not None
    assert _proved(other.replace("      model: gpt-test\n", "      model: 'gpt-test'\n")) is None


@pytest.mark.usefixtures("fresh_memory")
def test_the_lines_after_one_that_failed_are_not_remembered_unchecked() -> None:
    """Once a line fails, the reader stops holding lines to the writer (the file is
    compared with the writer's text instead), so it keeps none of the lines after it:
    unchecked, they could be lines the writer would not write."""
    late = ("      service_tier: default\n", "      service_tier: 'default'\n")
    assert REALISTIC.index("      model: gpt-test\n") < REALISTIC.index(late[0])
    both = REALISTIC.replace("      model: gpt-test\n", "      model: 'gpt-test'\n", 1)
    assert _proved(both.replace(*late)) is None  # fails at the model, reads on unchecked
    assert _proved(REALISTIC.replace(*late)) is None
