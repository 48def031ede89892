"""Issue 29: the backstop finds each shape's fixed starts in a few grouped passes and
matches a shape's pattern only where one of its starts is (:mod:`.redact.prefilter`).
That must change nothing it finds. Checked three ways:

- soundness: every string a shape's pattern matches starts with one of the starts the
  prefilter looks for (hypothesis writes the strings from the patterns themselves);
- the same findings as the backstop before issue 29 (the frozen copy the bench measures
  against, ``bench/secret_scan_baseline.py``) on the key-type corpus, placed where
  providers put free text, and on every real recording;
- a key of each type, anywhere in random text (at its very start and end, next to other
  starts, escaped as JSON, inside a compressed body), is still found.
"""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import re
import string
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.cassette import Cassette, RecordedEvent, RecordedResponse
from pytest_agentreplay.redact import Scrubber, shapes
from pytest_agentreplay.redact.prefilter import Prefilter, Trigger
from pytest_agentreplay.redact.scan import EnvNeedles, find
from tests.hardening.test_key_shapes import KEYS
from tests.redact._helpers import dump, interaction, response
from tests.redact.test_backstop import SHAPES

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("tests/corpus", "cassettes", "examples")


def _baseline() -> ModuleType:
    path = ROOT / "bench" / "secret_scan_baseline.py"
    spec = importlib.util.spec_from_file_location("secret_scan_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("secret_scan_baseline", module)
    spec.loader.exec_module(module)
    return module


BASELINE = _baseline()
NO_ENV = EnvNeedles({}, ())
ALNUM = string.ascii_letters + string.digits

# The key types of the backstop's own tests, and those only the pattern table names.
SAMPLES: dict[str, str] = {
    **SHAPES,
    **KEYS,
    "openai-key-marker": "Zx81" + "a" * 20 + "T3BlbkFJ" + "b7" * 12,
    "github-fine-grained": "github_pat_11ABCDEFG0" + "x1" * 20,
    "aws-temporary-key-id": "ASIA" + "Q7" * 8,
    "private-key": "-----BEGIN RSA PRIVATE KEY-----",
    "bearer-token": "Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "bearer-upper": "BEARER 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "basic-auth": "Basic " + base64.b64encode(b"admin:s3cr3t-pass").decode(),
    "aws-secret-camel": "secretAccessKey: " + "Ab1/" * 10,
    "aws-secret-upper": "AWS_SECRET_ACCESS_KEY=" + "Zq9+" * 10,
    "azure-sas": "SharedAccessKey=" + "k9/+" * 11 + "=",
    "stripe-restricted": "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "telegram-in-url": "bot1234567890:AA" + "h" * 32 + "7",
}


def _files() -> list[Path]:
    return sorted(
        path
        for folder in SOURCES
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and path.suffix in (".yaml", ".yml", ".json", ".txt")
    )


def _same(text: str) -> None:
    assert shapes.shape_hits(text) == BASELINE.shape_hits(text)
    assert find(text, NO_ENV, frozenset()) == BASELINE.find(text, NO_ENV, frozenset())


# -- soundness: the prefilter looks wherever a pattern can match ----------------------------


@pytest.mark.parametrize("shape", shapes.KEY_SHAPES, ids=lambda s: s.kind)
@given(data=st.data())
def test_every_match_of_a_shape_starts_with_one_of_its_starts(
    shape: shapes._Shape, data: st.DataObject
) -> None:
    matched = data.draw(st.from_regex(shape.pattern, fullmatch=True))
    assert matched.startswith(shape.starts), (shape.kind, matched)


@given(data=st.data())
def test_every_discord_match_is_found_by_its_guarded_dot(data: st.DataObject) -> None:
    matched = data.draw(st.from_regex(shapes._DISCORD, fullmatch=True))
    assert re.match(r"\." + shapes._DISCORD_AFTER_DOT, matched)


def test_a_pattern_with_no_fixed_start_must_name_its_starts() -> None:
    for regex in (r"(?:AKIA|ASIA)[A-Z0-9]{16}", r"gh[pousr]_x|github_pat_y", r"[Bb]earer"):
        with pytest.raises(ValueError, match="fixed starts"):
            shapes._shape("k", regex)


@given(
    starts=st.lists(st.text("abAB_-.:", min_size=1, max_size=6), min_size=1, max_size=8),
    text=st.text("abAB_-.: x", max_size=60),
)
def test_the_prefilter_finds_every_occurrence_of_every_start(starts: list[str], text: str) -> None:
    """Whatever characters the passes are keyed on, overlapping or adjacent starts and
    starts at the text's edges included."""
    found = Prefilter(Trigger(s, f"owner{n}") for n, s in enumerate(starts)).find(text)
    for n, start in enumerate(starts):
        where = [i for i in range(len(text)) if text.startswith(start, i)]
        assert found.get(f"owner{n}", []) == where


def test_a_trigger_offset_moves_the_place_and_a_guard_narrows_it() -> None:
    prefilter = Prefilter(
        [Trigger("Bearer", "b", offset=1), Trigger(".", "d", guard=r"[a-z]{3}\.")]
    )
    assert prefilter.find("x Bearer a.bcd.e .xy.") == {"b": [3], "d": [10]}


# -- the same findings as before issue 29 ---------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_the_key_type_corpus_is_found_as_before(kind: str) -> None:
    value = SAMPLES[kind]
    message = {"role": "assistant", "content": f"Use {value} for that."}
    delta = json.dumps({"type": "content_block_delta", "delta": {"text": f"set {value}\n"}})
    texts = [
        dump(interaction(resp=response(json_body=message))),
        dump(interaction(resp=response(status=401, body=f"bad key: {value}"))),
        dump(interaction(resp=response(events=[delta]))),
        value,
        json.dumps(value)[1:-1].replace("-", "\\u002d"),
    ]
    for text in texts:
        _same(text)
    assert shapes.shape_hits(value), f"{kind} is found at all"


def test_the_key_type_corpus_covers_every_shape() -> None:
    found = {h.kind for value in SAMPLES.values() for h in shapes.shape_hits(value)}
    assert {shape.kind for shape in shapes.KEY_SHAPES} <= found
    assert {"openai-key-marker", "telegram-bot-token", "mailchimp-key"} <= found
    assert "discord-bot-token" in found


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_real_recording_is_found_as_before_and_clean(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    _same(text)
    if "corpus" in path.parts or path.suffix in (".yaml", ".yml"):
        assert Scrubber(env={}).scan(text) == BASELINE.BaselineScrubber(env={}).scan(text)
    if path.is_relative_to(ROOT / "tests" / "corpus" / "real"):
        assert Scrubber(env={}).scan(text) == []  # no false positive


# -- a key anywhere is still found ----------------------------------------------------------

_FILLER = st.text(
    st.sampled_from([*ALNUM, " ", "\n", '"', ":", ",", "{", "}", "-", "_", ".", "/", "="]),
    max_size=80,
)
_SEPARATOR = st.sampled_from([" ", "\n", '"', "'", ",", "(", "\\n"])
_FRAGMENTS = st.sampled_from(
    ["sk-", "sk-ant-", "gl", "pat-", "glpat-", "SK", "SG.", "_", "-", ".", "AKIA", "eyJ",
     "Bearer ", "basic ", "://", "u:p@", "AccountKey=", "ya29.", "gh", "p_", "-us", ":AA",
     "T3BlbkFJ", "dapi", "xoxb-", "secret_access_key=", "hooks.slack.com/services/"]
)  # fmt: skip


@given(
    kind=st.sampled_from(sorted(SAMPLES)),
    before=_FILLER,
    after=_FILLER,
    left=_SEPARATOR,
    right=_SEPARATOR,
    at_start=st.booleans(),
)
def test_a_key_anywhere_in_text_is_found(
    kind: str, before: str, after: str, left: str, right: str, at_start: bool
) -> None:
    value = SAMPLES[kind]
    head = "" if at_start else before + left
    text = head + value + right + after
    hits = shapes.shape_hits(text)
    kinds_alone = {h.kind for h in shapes.shape_hits(value)}
    assert kinds_alone & {h.kind for h in hits if h.start >= len(head)}
    _same(text)


@pytest.mark.parametrize(
    "text",
    [
        "AccountKey=" + "a1" * 20 + "AccountKey=" + "b2" * 20,
        "SharedAccessKey=" + "Ab/+" * 10 + "SharedAccessKey=" + "Cd/+" * 10 + "==",
        "https://u:p://v:" + "w" * 12 + "@host",
        "hooks.slack.com/services/" + "T0/B0/" * 4 + "hooks.slack.com/services/" + "x" * 24,
    ],
)
def test_a_match_hides_the_starts_inside_it_as_before(text: str) -> None:
    """A shape's pattern is tried only at its starts, yet, as a regex scan does, not at
    those inside a match of its own: the second ``AccountKey=`` here is part of the
    first key, not a key of its own."""
    _same(text)


@given(st.lists(st.one_of(_FRAGMENTS, st.text(ALNUM, min_size=1, max_size=40)), max_size=12))
def test_text_made_of_starts_and_key_characters_is_found_as_before(pieces: list[str]) -> None:
    """Starts next to and inside each other, half keys, keys cut short: whatever the
    old scanner makes of them, the new one makes the same."""
    _same("".join(pieces))


@given(kind=st.sampled_from(sorted(SAMPLES)), pad=st.integers(0, 3))
def test_a_key_in_a_json_escaped_string_is_found_as_before(kind: str, pad: int) -> None:
    value = SAMPLES[kind]
    escaped = "".join(f"\\u{ord(c):04x}" if c in "-_." else c for c in value)
    _same('{"text": "' + " " * pad + escaped + '"}')


@given(kind=st.sampled_from(sorted(SAMPLES)), before=_FILLER, after=_FILLER)
def test_a_key_in_a_compressed_body_is_found(kind: str, before: str, after: str) -> None:
    value = SAMPLES[kind]
    raw = gzip.compress(f"{before} {value} {after}".encode())
    resp = RecordedResponse(
        status=200,
        headers={"content-type": "text/plain", "content-encoding": "gzip"},
        body_b64=base64.b64encode(raw).decode(),
    )
    cassette = Cassette(interactions=[interaction(resp=resp)])
    scrubber = Scrubber(env={})
    found = scrubber.scan_cassette(cassette)
    assert found == BASELINE.BaselineScrubber(env={}).scan_cassette(cassette)
    assert any("decoded bytes" in f.kind for f in found)


# -- the URL password, found by its "@" -------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "https://u:p://v:" + "w" * 12 + "@host",  # a "://" inside the userinfo
        "a@b https://admin:Hu7" + "k" * 10 + "@db",  # an "@" before the URL
        "https://admin:Hu7" + "k" * 10 + "@db@x",  # two "@" after it
        "x://a:b@c://d:Ef9" + "g" * 10 + "@h",  # two URLs, each ended by its "@"
        "ftp://a/b:Zz9" + "q" * 10 + "@c",  # a "/" after "://": no userinfo
        "@@://:@://u:Pq8" + "r" * 10 + "@",
    ],
)
def test_a_url_password_is_found_by_its_at_as_before(text: str) -> None:
    _same(text)


@given(
    st.lists(
        st.sampled_from(["://", "@", ":", "/", "u", "Pw9", "x" * 9, " ", '"', "\\n"]),
        max_size=16,
    )
)
def test_text_made_of_url_parts_is_found_as_before(pieces: list[str]) -> None:
    """The URL password's starts come from the ``@`` after them: wherever the ``://``,
    ``:``, ``/`` and ``@`` fall, what is found is what the scan from ``://`` found."""
    _same("".join(pieces))


# -- the environment, read once per check ------------------------------------------------------


class _CountingEnv(dict[str, str]):
    """An environment that counts how often it is read (a read walks its names)."""

    reads = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.reads += 1
        return super().__iter__()

    def items(self):  # type: ignore[no-untyped-def, override]
        self.reads += 1
        return super().items()


def _delta(text: str) -> RecordedEvent:
    delta = {"type": "text_delta", "text": text}
    data = {"type": "content_block_delta", "index": 0, "delta": delta}
    return RecordedEvent(event="content_block_delta", data=json.dumps(data))


def test_a_check_reads_the_environment_once_however_many_texts_it_scans() -> None:
    """The assembled stream is scanned window by window: every window searches the
    values the environment held when the check began, which is read once."""
    key = "Zx81" + "q7" * 12
    texts = [f"tok{n} " for n in range(20_000)]

    def stream(texts: list[str]) -> Cassette:
        events = [_delta(text) for text in texts]
        headers = {"content-type": "text/event-stream"}
        resp = RecordedResponse(status=200, headers=headers, events=events)
        return Cassette(interactions=[interaction(resp=resp)])

    env = _CountingEnv(MY_API_KEY=key)
    assert Scrubber(env=env).scan_cassette(stream(texts)) == []
    assert env.reads == 1  # not once per window of the assembled stream
    texts[10_000:10_002] = [key[:10], key[10:]]  # the key split across two events
    found = Scrubber(env=env).scan_cassette(stream(texts))
    assert [f.kind.split(" ")[0] for f in found] == ["env:MY_API_KEY"]


def test_a_key_set_in_the_environment_after_a_check_is_found_by_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "Zx81" + "q7" * 12
    text = f"data: {key}\n"
    scrubber = Scrubber()  # reads os.environ
    monkeypatch.delenv("MY_TEST_API_KEY", raising=False)
    assert not any(f.kind.startswith("env:") for f in scrubber.scan(text))
    monkeypatch.setenv("MY_TEST_API_KEY", key)
    assert [f.kind for f in scrubber.scan(text)] == ["env:MY_TEST_API_KEY"]
    scrubber.remember_environment()
    monkeypatch.delenv("MY_TEST_API_KEY")
    assert [f.kind for f in scrubber.scan(text)] == ["env:MY_TEST_API_KEY"]  # remembered


def test_the_environment_is_read_afresh_by_each_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only API-key-named variables' values are read, and a name's verdict is remembered:
    a value changed, a variable renamed, added or removed between checks is seen by the
    next one."""
    key, other = "Zx81" + "q7" * 12, "Yw55" + "r4" * 12
    env: dict[str, str] = {"HOME": key, "MY_API_KEY": key}
    scrubber = Scrubber(env=env)
    assert scrubber.mask(f"a {key} b") == "a REDACTED b"
    env["MY_API_KEY"] = other  # the same name, another value
    assert scrubber.mask(f"a {other} b") == "a REDACTED b"
    del env["MY_API_KEY"]
    env["ANOTHER_TOKEN"] = "Vv12" + "s3" * 12
    assert scrubber.mask("x Vv12" + "s3" * 12 + " y") == "x REDACTED y"
    del env["ANOTHER_TOKEN"]
    assert scrubber.mask("x Vv12" + "s3" * 12 + " y") == "x Vv12" + "s3" * 12 + " y"
    assert scrubber.mask(f"a {key} b") == f"a {key} b"  # HOME names no key


def test_a_shape_is_compiled_only_where_the_prefilter_finds_its_start() -> None:
    """Compiling every shape was 3 ms of each run that loads the scrubber (issue 29): a
    shape is compiled when one of its starts is first found, and then finds its key."""
    import subprocess
    import sys

    code = (
        "from pytest_agentreplay.redact.shapes import KEY_SHAPES, shape_hits\n"
        "compiled = lambda: sorted(s.kind for s in KEY_SHAPES if 'pattern' in vars(s))\n"
        "assert shape_hits('a text with no key in it: ok, sure, yes') == set(), 'hit'\n"
        "print(compiled())\n"
        "hits = shape_hits('key=sk-ant-api03-' + 'Ab1' * 12)\n"
        "print(sorted(h.kind for h in hits), compiled())\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = run.stdout.splitlines()
    assert before == "[]"
    assert after.startswith("['anthropic-key'] [") and "'anthropic-key'" in after.split("] ", 1)[1]
