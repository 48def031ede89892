"""The rendering primitives every codec shares, as the fake's per-call path uses them:
ids, compact JSON, text cut into deltas, and the Anthropic stream's delta events.

Each was made cheaper for bench/ W5 (a fake call renders thousands of times in a
hypothesis run); these tests pin that they still say exactly what they said before.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay import Reply
from pytest_agentreplay.providers import IdFactory, RenderContext, codec_for
from pytest_agentreplay.providers.base import EAGER_TEXT, digits, iter_text, json_data
from pytest_agentreplay.providers.openai.chat.render import _obfuscation

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _spelled(seed: str, count: int, length: int, alphabet: str) -> str:
    """The id spelling as first written: one base-``len(alphabet)`` digit a step."""
    n = int.from_bytes(hashlib.sha512(f"{seed}:{count}".encode()).digest(), "big")
    chars = []
    for _ in range(length):
        n, r = divmod(n, len(alphabet))
        chars.append(alphabet[r])
    return "".join(chars)


@given(
    seed=st.text(max_size=12),
    calls=st.integers(1, 6),
    length=st.integers(1, 40),
    alphabet=st.sampled_from([B62, "0123456789abcdef", "01", "abc"]),
)
def test_ids_are_spelled_as_they_always_were(
    seed: str, calls: int, length: int, alphabet: str
) -> None:
    """Same seed, same ids: snapshots recorded before stay valid."""
    ids = IdFactory(seed)
    got = [ids.new("p_", length, alphabet) for _ in range(calls)]
    assert got == ["p_" + _spelled(seed, count, length, alphabet) for count in range(1, calls + 1)]


def test_two_factories_of_one_seed_count_on_their_own() -> None:
    """Remembered spellings are shared; the counters are not."""
    first, second = IdFactory("s"), IdFactory("s")
    a = [first.new("msg_", 22) for _ in range(3)]
    assert second.new("msg_", 22) == a[0]  # a fresh factory starts at the first id
    assert first.new("msg_", 22) not in a
    assert IdFactory("other").new("msg_", 22) != a[0]


@given(st.integers(0, 2**600), st.integers(1, 60))
def test_digits_are_the_lowest_digits_least_significant_first(n: int, length: int) -> None:
    expected = []
    m = n
    for _ in range(length):
        m, r = divmod(m, 62)
        expected.append(B62[r])
    assert digits(n, length) == "".join(expected)


def test_the_obfuscation_padding_shrinks_as_the_delta_grows() -> None:
    pads = [_obfuscation("chatcmpl-x:3", chars) for chars in range(14)]
    assert [len(p) for p in pads] == [max(1, 12 - c) for c in range(14)]
    assert all(set(p) <= set(B62) for p in pads)
    assert pads[0].startswith(pads[5])  # the same digits, fewer of them


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_json_data_is_compact_json_as_json_dumps_writes_it(value: Any) -> None:
    assert json_data(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_a_value_json_cannot_hold_fails_as_json_dumps_fails_and_the_next_one_encodes() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_data({"a": [1, {"b": object()}]})
    with pytest.raises(TypeError, match="keys must be"):
        json_data({(1, 2): 3})
    shared = [1]
    assert json_data({"a": shared, "b": shared}) == '{"a":[1],"b":[1]}'  # not a cycle


@given(st.text(), st.integers(1, 20))
def test_text_is_cut_into_pieces_that_join_back(text: str, max_chunk: int) -> None:
    pieces = list(iter_text(text, max_chunk))
    assert "".join(pieces) == text
    assert all(0 < len(p) <= max_chunk for p in pieces)


def test_a_long_word_is_cut_at_the_chunk_size() -> None:
    assert list(iter_text(" abcdefghij kl", 4)) == [" abc", "defg", "hij", " kl"]


def _cut(text: str, max_chunk: int) -> list[str]:
    """The cut as first written: a word at a time, a long word cut at ``max_chunk``."""
    pieces = []
    for word in re.findall(r"\s*\S+|\s+", text):
        pieces += [word[i : i + max_chunk] for i in range(0, len(word), max_chunk)]
    return pieces


_WORDS = st.text(st.sampled_from(" \n\tabé日"), min_size=1, max_size=16)


@given(st.lists(_WORDS, max_size=8), st.integers(1, 20), st.sampled_from([0, -2, -1, 1, 3]))
def test_a_text_is_cut_alike_either_side_of_the_length_cut_at_once(
    words: list[str], max_chunk: int, around: int
) -> None:
    # a short text is cut in one step, a long one a word at a time: the same pieces
    # at the boundary, with words that need cutting further and without
    text = "".join(words)
    padded = "x" * max(0, EAGER_TEXT + around - len(text)) + text
    assert list(iter_text(text, max_chunk)) == _cut(text, max_chunk)
    assert list(iter_text(padded, max_chunk)) == _cut(padded, max_chunk)


def test_a_chunk_size_below_one_fails_as_before_however_long_the_text() -> None:
    for text in ("a b", "a" * (EAGER_TEXT + 1)):
        with pytest.raises(ValueError, match="must not be zero"):
            list(iter_text(text, 0))
    assert list(iter_text("", 0)) == []


@given(st.text(min_size=1, max_size=200), st.integers(0, 3))
def test_anthropic_delta_events_carry_what_their_event_function_writes(
    text: str, blocks: int
) -> None:
    """The stream's ``content_block_delta`` data is written from a head built once per
    block: the same bytes as the whole object encoded at once, in the API's key order."""
    codec = codec_for("anthropic")
    parts: list[Any] = [text] * (blocks + 1)
    reply = Reply(parts=[Reply.text(p).parts[0] for p in parts])
    events = codec.render_events(reply, RenderContext(ids=IdFactory("t")))
    deltas = [e for e in events if e.event == "content_block_delta"]
    assert deltas
    for e in deltas:
        data = json.loads(e.data)
        assert list(data) == ["type", "index", "delta"]
        assert json_data(data) == e.data


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"stream_options": {"include_usage": True}},
        {"stream_options": {"include_usage": True, "include_obfuscation": False}},
    ],
)
@given(text=st.text(max_size=120))
def test_openai_chunks_are_their_whole_object_encoded_at_once(
    options: dict[str, Any], text: str
) -> None:
    """A chunk's constant head is written once per stream; every chunk still reads as
    the object encoded whole, fields in OpenAI's order, padding only when asked."""
    codec = codec_for("openai_chat")
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    request = codec.parse_call("POST", "/v1/chat/completions", {**body, **options})
    ctx = RenderContext(request=request, ids=IdFactory("t"))
    events = codec.render_events(Reply.text(text), ctx)
    assert events[-1].data == "[DONE]"
    usage = options.get("stream_options", {}).get("include_usage") is True
    padded = options.get("stream_options", {}).get("include_obfuscation") is not False
    for e in events[:-1]:
        data = json.loads(e.data)
        assert json_data(data) == e.data
        assert list(data)[:7] == [
            "id",
            "object",
            "created",
            "model",
            "service_tier",
            "system_fingerprint",
            "choices",
        ]
        assert ("usage" in data) is usage
        assert ("obfuscation" in data) is padded


def test_a_cycle_fails_as_json_dumps_fails_it_and_leaves_nothing_behind() -> None:
    """Reply arguments are ``Any``: a cyclic one is accepted by the model and must fail
    rendering with the error ``json.dumps`` gives, after which encoding still works."""
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_data({"a": cycle})
    held = {"x": 1}
    assert json_data([held, held, {"y": held}]) == '[{"x":1},{"x":1},{"y":{"x":1}}]'
