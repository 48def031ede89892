"""The plugin's own content decoding (issue 18, item 1): every coding a client can
negotiate, whole or chunk by chunk, chains, bombs, corrupt and truncated bodies, and a
missing package — each refused with a message that says what to do."""

from __future__ import annotations

import builtins
import gzip
import random
import sys
import zlib
from typing import Any

import brotli
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.encodings import BodyDecoder, codings, decode
from pytest_agentreplay.cassettes.errors import ContentDecodingError

PLAIN = bytes(random.Random(18).randrange(256) for _ in range(3000)) + b"hello " * 5000


def _raw_deflate(data: bytes) -> bytes:
    deflater = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return deflater.compress(data) + deflater.flush()


ENCODED = {
    "gzip": gzip.compress(PLAIN),
    "x-gzip": gzip.compress(PLAIN),
    "deflate": zlib.compress(PLAIN),
    "br": brotli.compress(PLAIN),
    "zstd": zstandard.ZstdCompressor().compress(PLAIN),
}


@pytest.mark.parametrize("coding", sorted(ENCODED))
def test_each_coding_decodes_whole(coding: str) -> None:
    assert decode(ENCODED[coding], coding) == PLAIN


@given(cuts=st.lists(st.integers(min_value=1, max_value=200), max_size=40))
def test_each_coding_decodes_the_same_in_any_chunking(cuts: list[int]) -> None:
    for coding, raw in ENCODED.items():
        decoder, out, at = BodyDecoder(coding), bytearray(), 0
        for size in cuts:
            out += decoder.feed(raw[at : at + size])
            at += size
        out += decoder.feed(raw[at:]) + decoder.finish()
        assert bytes(out) == PLAIN, coding


def test_raw_deflate_several_gzip_members_and_zstd_frames() -> None:
    assert decode(_raw_deflate(PLAIN), "deflate") == PLAIN
    assert decode(gzip.compress(b"a") + gzip.compress(b"b"), "gzip") == b"ab"
    frames = zstandard.ZstdCompressor().compress(b"a") + zstandard.ZstdCompressor().compress(b"b")
    assert decode(frames, "zstd") == b"ab"


def test_a_chain_is_undone_in_reverse_and_identity_is_nothing() -> None:
    assert codings(" GZIP , identity,br ") == ["gzip", "br"]
    assert decode(brotli.compress(gzip.compress(PLAIN)), "gzip, br") == PLAIN
    assert decode(b"as is", "identity") == b"as is"


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_a_bomb_is_refused_at_the_limit(coding: str) -> None:
    bomb = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
        "br": brotli.compress,
        "zstd": zstandard.ZstdCompressor().compress,
    }[coding](b"\0" * (8 * 1024 * 1024))
    with pytest.raises(ContentDecodingError, match="expands beyond 1,048,576 bytes") as info:
        decode(bomb, coding, limit=1024 * 1024)
    assert info.value.too_large


@pytest.mark.parametrize(
    ("coding", "raw", "problem"),
    [
        ("zstd", b"\x28\xb5\x2f\xfd garbage", "not valid zstd data"),
        ("gzip", b"\x1f\x8b garbage", "not valid gzip data"),
        ("br", b"garbage!!", "not valid brotli data"),
        ("compress", b"x", "not a content coding the plugin can decode"),
        ("gzip", gzip.compress(PLAIN)[:-9], "stops short"),
        ("br", brotli.compress(PLAIN)[:-5], "stops short"),
        ("zstd", ENCODED["zstd"][:-5], "stops short"),
    ],
    ids=["zstd", "gzip", "br", "unknown", "gzip-cut", "br-cut", "zstd-cut"],
)
def test_what_cannot_be_decoded_says_which_coding_and_why(
    coding: str, raw: bytes, problem: str
) -> None:
    with pytest.raises(ContentDecodingError, match=problem) as info:
        decode(raw, coding)
    assert str(info.value).startswith(f"content-encoding {coding!r}: ")
    assert not info.value.too_large


def test_a_body_cut_short_decodes_as_far_as_it_came() -> None:
    decoder = BodyDecoder("gzip")
    cut = decoder.feed(gzip.compress(PLAIN)[:2000]) + decoder.finish(complete=False)
    assert cut and PLAIN.startswith(cut)


def _without(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Imports of ``names`` fail, as on a machine without those packages."""
    real = builtins.__import__

    def fake(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in names:
            raise ImportError(name)
        return real(name, *args, **kwargs)

    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(builtins, "__import__", fake)
    monkeypatch.setattr("importlib.import_module", fake)


def test_without_brotli_or_zstd_the_message_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, "brotli", "brotlicffi", "compression.zstd", "backports.zstd", "zstandard")
    with pytest.raises(ContentDecodingError, match="needs the 'brotli' .* install it"):
        BodyDecoder("br")
    with pytest.raises(ContentDecodingError, match="needs the 'zstandard' package .* install it"):
        BodyDecoder("zstd")


def test_zstandard_alone_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "compression.zstd", "backports.zstd")
    assert decode(ENCODED["zstd"], "zstd") == PLAIN
    frames = zstandard.ZstdCompressor().compress(b"a") + zstandard.ZstdCompressor().compress(b"b")
    assert decode(frames, "zstd") == b"ab"
