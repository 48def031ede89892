"""Item 19: the loader fuzzed — arbitrary bytes, byte flips and insertions into real
cassettes (ours and a vcrpy one from the corpus), truncation at every offset. Each
input loads or raises :class:`CassetteFormatError`; nothing else escapes (no
``RecursionError``, ``UnicodeDecodeError``, ``yaml.YAMLError``, pydantic error), and
each load is bounded in time.

The number of examples comes from the suite's hypothesis profile (bounded and
derandomized in CI).
"""

from __future__ import annotations

import contextlib
import gc
import time

from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, loads
from pytest_agentreplay.cassettes.model import Cassette
from tests import corpus
from tests.cli._helpers import json_interaction, stream_interaction

SECONDS = 1.0
OURS = dumps(Cassette(interactions=[stream_interaction(), json_interaction()])).encode()
VCR = (
    corpus.CORPUS / "openai_chat" / "pydantic-ai__test_model_name_suggestion[openai-chat].yaml"
).read_bytes()
SMALL = dumps(Cassette(interactions=[json_interaction()])).encode()


def _warm_up() -> None:
    """Take every loader path once before anything is timed. The bound is for parsing
    hostile input, not for imports: the loader imports libyaml, its error locator and
    the model on first use (lazily, so that replay needs none of them), and on a cold,
    busy CI machine those imports alone can outlast the bound."""
    for data in (OURS, VCR, b"\xff", b"a: [\n", b"- 1\n", b"interactions: 3\nversion: 1\n"):
        with contextlib.suppress(CassetteFormatError):
            loads(data, path="warm-up.yaml")


_warm_up()


def _load_or_format_error(data: bytes) -> None:
    """Load ``data``: a cassette or the format error, within the time bound.

    The bound is for the loader's own work, so it is CPU time (not time the process
    waited for a core) with the garbage collector paused (a full collection in a worker
    of the whole suite walks everything the other tests left in memory: it once took
    over a second here)."""
    gc.disable()
    started = time.process_time()
    try:
        try:
            loads(data, path="fuzz.yaml")
        except CassetteFormatError as error:
            message = str(error)
        else:
            message = "fuzz.yaml: loaded"
        spent = time.process_time() - started
    finally:
        gc.enable()
    assert message.startswith("fuzz.yaml")
    assert spent < SECONDS


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
