"""Content codings undone by the plugin itself: gzip, deflate, br and zstd, and chains.

A compressed body cannot be scrubbed or scanned, so the recorder, the scrubber, the
backstop and replay decode every body before they look at it (issue 18: a zstd
response holding a key was stored as opaque ``body_b64``, and ``lint`` called the
file clean). The client libraries' own decoders are no help: httpx returns bytes,
httpx2 iterators, and either lacks ``br`` / ``zstd`` unless an optional package is
installed. Here one :class:`BodyDecoder` takes a body chunk by chunk, whatever client
received it, and bounds what it expands to (a gzip bomb is refused).

``br`` needs ``brotli`` (or ``brotlicffi``); ``zstd`` needs ``compression.zstd``
(Python 3.14), ``backports.zstd`` or ``zstandard``. Without them — or for a coding
nobody knows, or a corrupt body — :class:`ContentDecodingError` says which coding,
why, and what to install; callers refuse to store such a body rather than store it
unread.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from typing import Any, Protocol

from .errors import ContentDecodingError

__all__ = ["MAX_DECODED", "BodyDecoder", "codings", "decode"]

MAX_DECODED = 64 * 1024 * 1024
"""Largest body a compressed body may expand to (a gzip bomb is refused)."""

KNOWN = ("gzip", "deflate", "br", "zstd")


def codings(header: str) -> list[str]:
    """The codings of a ``content-encoding`` header in the order they were applied,
    lower-cased, ``identity`` left out (``"gzip, br"`` gives ``["gzip", "br"]``)."""
    found = (part.strip().lower() for part in header.split(","))
    return [c for c in found if c and c != "identity"]


class _Stage(Protocol):
    def feed(self, data: bytes, room: int) -> bytes:
        """What ``data`` decodes to; raises :class:`_TooLargeError` past ``room`` bytes."""
        ...

    def flush(self) -> bytes:
        """What is left once the body has ended."""
        ...

    def ended(self) -> bool:
        """Whether the data fed so far is a whole encoded body (or nothing)."""
        ...


class _TooLargeError(Exception):
    pass


def _zlib_wrapped(head: bytes) -> bool:
    """Whether a deflate body starts with a zlib header (RFC 1950) rather than raw
    deflate data, which some servers send under the same name."""
    return (head[0] & 0x0F) == 8 and ((head[0] << 8) | head[1]) % 31 == 0


class _Inflate:
    """gzip (members one after another, as ``cat a.gz b.gz`` makes) or deflate."""

    def __init__(self, gzip: bool) -> None:
        self.gzip = gzip
        self._head = b""
        self._fed = False
        self._inflater: Any = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None

    def feed(self, data: bytes, room: int) -> bytes:
        self._fed = self._fed or bool(data)
        if self._inflater is None:  # deflate: the first two bytes tell zlib from raw
            data, self._head = self._head + data, b""
            if len(data) < 2:
                self._head = data
                return b""
            wbits = zlib.MAX_WBITS if _zlib_wrapped(data) else -zlib.MAX_WBITS
            self._inflater = zlib.decompressobj(wbits)
        out = bytearray()
        while data:
            out += self._inflater.decompress(data, room - len(out) + 1)
            if len(out) > room:
                raise _TooLargeError
            data = self._inflater.unconsumed_tail
            if not data and self._inflater.eof and self.gzip and self._inflater.unused_data:
                data = self._inflater.unused_data  # the next gzip member
                self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return bytes(out)

    def flush(self) -> bytes:
        return bytes(self._inflater.flush()) if self._inflater is not None else b""

    def ended(self) -> bool:
        return not self._fed or (self._inflater is not None and self._inflater.eof)


def _module(*names: str) -> Any:
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


class _Brotli:
    """``br``, with ``brotli`` (C) or ``brotlicffi``."""

    def __init__(self) -> None:
        module = _module("brotli", "brotlicffi")
        if module is None:
            raise ContentDecodingError(
                "br", "decoding it needs the 'brotli' (or 'brotlicffi') package: install it"
            )
        self.error = module.error
        self._decompressor = module.Decompressor()
        process = getattr(self._decompressor, "process", None)  # brotli; brotlicffi:
        self._process: Callable[..., bytes] = process or self._decompressor.decompress

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            out = bytearray(self._bounded(data, room + 1))
            more = getattr(self._decompressor, "can_accept_more_data", None)
            while more is not None and len(out) <= room and not more():
                out += self._bounded(b"", room + 1 - len(out))
        except self.error as exc:
            raise ContentDecodingError("br", f"the body is not valid brotli data ({exc})") from None
        if len(out) > room:
            raise _TooLargeError
        return bytes(out)

    def _bounded(self, data: bytes, limit: int) -> bytes:
        try:
            return self._process(data, output_buffer_limit=limit)
        except TypeError:  # brotlicffi, older brotli: no output limit
            return self._process(data)

    def flush(self) -> bytes:
        return b""

    def ended(self) -> bool:
        finished = getattr(self._decompressor, "is_finished", None)
        return finished is None or bool(finished())


class _ZstandardAdapter:
    """``zstandard``'s decompressor with the standard library's interface."""

    def __init__(self, module: Any) -> None:
        self._inner = module.ZstdDecompressor().decompressobj()

    @property
    def eof(self) -> bool:
        return bool(self._inner.eof)

    @property
    def unused_data(self) -> bytes:
        return bytes(self._inner.unused_data)

    needs_input = True

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        return bytes(self._inner.decompress(data)) if data else b""


def _zstd_factory() -> tuple[Callable[[], Any], tuple[type[BaseException], ...]]:
    """How to make a zstd decompressor, and the errors it raises."""
    module = _module("compression.zstd", "backports.zstd")
    if module is not None:
        return module.ZstdDecompressor, (module.ZstdError, EOFError)
    legacy = _module("zstandard")
    if legacy is None:
        raise ContentDecodingError(
            "zstd",
            "decoding it needs the 'zstandard' package (or 'backports.zstd', or "
            "Python 3.14): install it",
        )
    return (lambda: _ZstandardAdapter(legacy)), (legacy.ZstdError,)


class _Zstd:
    """``zstd``, frame after frame."""

    def __init__(self) -> None:
        self._new, self._errors = _zstd_factory()
        self._decompressor = self._new()
        self._fed = False

    def feed(self, data: bytes, room: int) -> bytes:
        self._fed = self._fed or bool(data)
        try:
            return self._frames(data, room)
        except self._errors as exc:
            raise ContentDecodingError("zstd", f"the body is not valid zstd data ({exc})") from None

    def _frames(self, data: bytes, room: int) -> bytes:
        out = bytearray()
        while True:
            if self._decompressor.eof:
                if not data:
                    return bytes(out)
                self._decompressor = self._new()  # the next frame
            out += self._decompressor.decompress(data, room - len(out) + 1)
            if len(out) > room:
                raise _TooLargeError
            data = self._decompressor.unused_data if self._decompressor.eof else b""
            if not data and self._decompressor.needs_input:
                return bytes(out)

    def flush(self) -> bytes:
        return b""

    def ended(self) -> bool:
        return not self._fed or bool(self._decompressor.eof)


def _stage(coding: str) -> _Stage:
    if coding in ("gzip", "x-gzip"):
        return _Inflate(gzip=True)
    if coding == "deflate":
        return _Inflate(gzip=False)
    if coding == "br":
        return _Brotli()
    if coding == "zstd":
        return _Zstd()
    raise ContentDecodingError(
        coding, f"not a content coding the plugin can decode ({', '.join(KNOWN)})"
    )


class BodyDecoder:
    """Undoes a ``content-encoding`` header's codings, chunk by chunk as a body arrives.

    Raises :class:`ContentDecodingError` when built for a coding it cannot undo, and
    from :meth:`feed` for corrupt data or a body expanding beyond ``limit`` bytes. A
    body that stops early (a cut stream) is not an error: what arrived is decoded.
    """

    def __init__(self, header: str, *, limit: int = MAX_DECODED) -> None:
        self.header = header
        self.limit = limit
        # Applied in header order, so undone in reverse.
        self._stages = [(_stage(coding), coding) for coding in reversed(codings(header))]
        self._sizes = [0] * len(self._stages)

    def feed(self, data: bytes) -> bytes:
        """What ``data``, the next chunk of the encoded body, decodes to."""
        for n, (stage, coding) in enumerate(self._stages):
            data = self._through(n, coding, stage, data)
        return data

    def finish(self, *, complete: bool = True) -> bytes:
        """What is left once the body has ended. A ``complete`` body (it was not cut)
        must end where its encoded data ends: one that stops short is corrupt."""
        data = b""
        for n, (stage, coding) in enumerate(self._stages):
            data = self._through(n, coding, stage, data) + stage.flush()
            if complete and not stage.ended():
                raise ContentDecodingError(coding, f"the {coding} data stops short (truncated)")
        return data

    def _through(self, n: int, coding: str, stage: _Stage, data: bytes) -> bytes:
        """``data`` through stage ``n``, bounded by what that stage may still expand to."""
        try:
            out = stage.feed(data, self.limit - self._sizes[n])
        except _TooLargeError:
            raise ContentDecodingError(
                coding, f"the body expands beyond {self.limit:,} bytes", too_large=True
            ) from None
        except zlib.error as exc:
            raise ContentDecodingError(
                coding, f"the body is not valid {coding} data ({exc})"
            ) from None
        self._sizes[n] += len(out)
        return out


def decode(raw: bytes, header: str, *, limit: int = MAX_DECODED) -> bytes:
    """A whole body decoded (see :class:`BodyDecoder`)."""
    decoder = BodyDecoder(header, limit=limit)
    return decoder.feed(raw) + decoder.finish()
