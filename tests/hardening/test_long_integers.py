"""Issue 18, item 16: a cassette holding an integer of more digits than Python reads
(4,301: ``sys.get_int_max_str_digits()`` is 4,300) is a :class:`CassetteFormatError`
naming the file and line, in every format that can hold one. Every ``agentreplay``
command says so on one line with exit code 2 instead of "internal error", and
``lint`` of a folder reports the file and goes on with the others. The writer refuses
such an integer the same way, naming its field, instead of a bare ``ValueError``.

Before the fix PyYAML's ``int()`` (and ``json.loads`` for the anthropic SDK's
snapshot files) let a bare ``ValueError`` out of the reader.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import Cassette, Interaction, RecordedRequest
from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, load, save
from tests.cli._helpers import cli, good, json_interaction

DIGITS = sys.get_int_max_str_digits() + 1
BIG = "7" * DIGITS


def _ours() -> str:
    text = dumps(Cassette(interactions=[json_interaction()]))
    return text.replace("    json:\n      id: ", f"    json:\n      n: {BIG}\n      id: ", 1)


def _vcrpy() -> str:
    return (
        "interactions:\n- request:\n    body: null\n    headers: {}\n    method: GET\n"
        "    uri: https://api.openai.com/v1/models\n  response:\n    body:\n      string: ''\n"
        f"    headers: {{}}\n    status:\n      code: {BIG}\n      message: OK\nversion: 1\n"
    )


def _snapshot() -> str:
    return (
        '[{"request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages",\n'
        f'  "headers": {{}}, "body": {{"max_tokens": {BIG}}}}},\n'
        ' "response": {"status_code": 200, "headers": {}, "body": "ok"}}]\n'
    )


# name: (file name, text, the 1-based line of the integer)
FILES = {
    "agentreplay": ("ours.yaml", _ours(), _ours().split(BIG)[0].count("\n") + 1),
    "vcrpy": ("vcr.yaml", _vcrpy(), 12),
    "http-snapshot": ("snapshot.json", _snapshot(), 2),
}


@pytest.mark.parametrize("kind", sorted(FILES))
def test_a_long_integer_is_a_format_error_with_file_and_line(tmp_path: Path, kind: str) -> None:
    name, text, line = FILES[kind]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert (str(info.value.path), info.value.line) == (str(path), line)
    assert f"an integer of {DIGITS:,} digits" in str(info.value)


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize(
    "command", ["inspect", "lint", "fold", "redact", "convert --to vcrpy", "diff"]
)
def test_every_command_says_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, command: str
) -> None:
    name, text, line = FILES[kind]
    path = tmp_path / name
    path.write_text(text)
    extra = [str(path)] if command == "diff" else []
    result = cli(capsys, *command.split(), path, *extra)
    shown = result.out + result.err
    assert "internal error" not in shown
    assert "Traceback" not in shown
    if command == "redact" and kind != "agentreplay":
        assert "redact rewrites agentreplay cassettes only" in shown  # checked before reading
    else:
        assert f"{path}:{line}:" in shown
        assert f"an integer of {DIGITS:,} digits" in shown
    assert result.code == (1 if command == "lint" else 2)
    assert path.read_text() == text, "the file was changed"


def test_lint_of_a_folder_reports_it_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good(tmp_path / "a")
    for name, text, _ in FILES.values():
        (tmp_path / "b" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "b" / name).write_text(text)
    good(tmp_path / "c")
    result = cli(capsys, "lint", tmp_path)
    assert result.code == 1
    for name, _, line in FILES.values():
        assert f"{tmp_path / 'b' / name}:{line}:" in result.out
    assert result.out.endswith(f"{2 + len(FILES)} files checked: 3 problems in 3 files.\n")


def test_the_writer_refuses_one_naming_its_field(tmp_path: Path) -> None:
    path = tmp_path / "out.yaml"
    path.write_text("kept\n")
    request = RecordedRequest(method="POST", url="https://x.test/v1", json_body={"n": 10**DIGITS})
    interaction = Interaction(request=request, response=json_interaction().response)
    with pytest.raises(CassetteFormatError) as info:
        save(path, Cassette(interactions=[interaction]))
    assert info.value.field == "interactions[0].request.json.n"
    assert "integer of about" in str(info.value)
    assert path.read_text() == "kept\n"
