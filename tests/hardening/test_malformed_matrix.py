"""Item 18: every malformed cassette is one error type, :class:`CassetteFormatError`,
whose message reads ``path:line:column: field: problem. hint`` — each part also an
attribute — and whose line and column point at the defect (computed here from where
the defect was put, not copied from the code's output).

A BOM and CRLF line ends are legal; a defect in a file that has them is still
located on the right line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, load
from tests.cli._helpers import json_interaction, stream_interaction

GOOD = dumps(Cassette(interactions=[stream_interaction(), json_interaction()]))


@dataclass(frozen=True)
class Case:
    """A defect: how to make the bytes, the text that marks where it is, the field."""

    make: Callable[[str], bytes]
    at: str | None  # the defect starts on the first line holding this text
    field: str | None = None


def _swap(old: str, new: str, count: int = 1) -> Callable[[str], bytes]:
    def make(text: str) -> bytes:
        assert old in text
        return text.replace(old, new, count).encode()

    return make


def _cut_after(needle: str, extra: int) -> Callable[[str], bytes]:
    return lambda text: text[: text.index(needle) + extra].encode()


def _crlf_bom(inner: Callable[[str], bytes]) -> Callable[[str], bytes]:
    return lambda text: b"\xef\xbb\xbf" + inner(text).replace(b"\n", b"\r\n")


def _conflict(text: str) -> bytes:
    """Both sides of a re-recording kept by a merge, as git writes them."""
    ours = "  response:\n    status: 200\n"
    theirs = ours.replace("200", "201")
    return text.replace(ours, f"<<<<<<< HEAD\n{ours}=======\n{theirs}>>>>>>> theirs\n", 1).encode()


def _bad_utf8(text: str) -> bytes:
    return text.encode().replace(b"Leeds", b"Le\xffeds", 1)


WRONG_TYPE = _swap("    status: 200", "    status: two hundred")
CASES = {
    "empty": Case(lambda _: b"", None),
    "truncated-mid-scalar": Case(_cut_after('"type":"message_start"', 8), "event: message_start"),
    "truncated-mid-sse": Case(_cut_after("content_block_delta", 30), "content_block_delta"),
    "invalid-utf8": Case(_bad_utf8, "Le\ufffdeds"),
    "wrong-version": Case(_swap("version: 1", "version: 7"), "version: 7", "version"),
    "missing-key": Case(
        _swap("    method: POST\n", ""), "- request:", "interactions[0].request.method"
    ),
    "wrong-type": Case(WRONG_TYPE, "status: two hundred", "interactions[0].response.status"),
    "duplicate-key": Case(
        _swap("    method: POST\n", "    method: POST\n    method: GET\n"), "method: GET"
    ),
    "bom-crlf-wrong-type": Case(
        _crlf_bom(WRONG_TYPE), "status: two hundred", "interactions[0].response.status"
    ),
    "merge-conflict": Case(_conflict, "<<<<<<<"),
}


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_cassette_is_one_error_with_path_line_column_field_and_hint(
    tmp_path: Path, name: str
) -> None:
    case = CASES[name]
    data = case.make(GOOD)
    path = tmp_path / "c.yaml"
    path.write_bytes(data)
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    error = info.value
    assert type(error) is CassetteFormatError
    assert error.path == path
    assert error.hint, "no hint"
    message = str(error)
    assert message.startswith(str(path))
    assert message.endswith(error.hint)
    if case.at is None:
        assert error.line is None
        return
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    assert error.line is not None
    assert error.column is not None
    assert error.line in (_line(text, case.at), _line(text, case.at) + 1)
    assert message.startswith(f"{path}:{error.line}:{error.column}: ")
    if case.field is not None:
        assert error.field == case.field
        assert f": {case.field}: " in message
