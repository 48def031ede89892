"""Item 19: the loader fuzzed — arbitrary bytes, byte flips and insertions into real
cassettes (ours and a vcrpy one from the corpus), truncation at every offset. Each
input loads or raises :class:`CassetteFormatError`; nothing else escapes (no
``RecursionError``, ``UnicodeDecodeError``, ``yaml.YAMLError``, pydantic error), and
each load is bounded in time.

The number of examples comes from the suite's hypothesis profile (bounded and
derandomized in CI).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, loads
from tests import corpus
from tests.cli._helpers import json_interaction, stream_interaction

OURS = dumps(Cassette(interactions=[stream_interaction(), json_interaction()])).encode()
VCR = (
    corpus.CORPUS / "openai_chat" / "pydantic-ai__test_model_name_suggestion[openai-chat].yaml"
).read_bytes()
SMALL = dumps(Cassette(interactions=[json_interaction()])).encode()


def _load_or_format_error(data: bytes) -> None:
    """Load ``data``: a cassette, or the format error naming the file."""
    try:
        loads(data, path="fuzz.yaml")
    except CassetteFormatError as error:
        message = str(error)
    else:
        message = "fuzz.yaml: loaded"
    assert message.startswith("fuzz.yaml")


@given(st.binary(max_size=2000))
def test_arbitrary_bytes_load_or_raise_the_format_error(data: bytes) -> None:
    _load_or_format_error(data)


@given(
    st.sampled_from([OURS, VCR]),
    st.lists(st.tuples(st.integers(0, 10**6), st.binary(min_size=1, max_size=3)), max_size=6),
)
def test_byte_flips_and_insertions_load_or_raise_the_format_error(
    seed: bytes, edits: list[tuple[int, bytes]]
) -> None:
    data = bytearray(seed)
    for i, (where, junk) in enumerate(edits):
        at = where % len(data)
        if i % 2:
            data[at : at + 1] = junk[:1]  # a flip
        else:
            data[at:at] = junk  # an insertion
    _load_or_format_error(bytes(data))


@given(st.sampled_from([OURS, VCR]), st.integers(0, 10**6))
def test_truncations_of_large_cassettes_load_or_raise_the_format_error(
    seed: bytes, where: int
) -> None:
    _load_or_format_error(seed[: where % len(seed)])


def test_truncation_at_every_offset_is_refused() -> None:
    """A cut cassette never loads as a shorter one: every proper prefix is refused
    except those that only drop trailing whitespace."""
    whole = loads(SMALL, path="fuzz.yaml")
    for offset in range(len(SMALL)):
        try:
            cut = loads(SMALL[:offset], path="fuzz.yaml")
        except CassetteFormatError:
            continue
        assert not SMALL[offset:].strip(), f"a cut at {offset} loaded"
        assert cut == whole
