"""Bodies the scrubber and the backstop must open before they can read them.

Issue 18 found secrets reaching disk inside bodies stored as opaque ``body_b64``:

- a compressed body (a zstd response, a gzip-compressed JSON request) kept as its
  encoded bytes by an older version or another tool. :func:`decoded` stores it
  decoded (JSON parsed, a stream split into events), so the rules scrub it;
- a binary ``multipart/form-data`` upload (a file and a few text fields).
  :func:`scrub_multipart` scrubs its text parts by name, as form fields are;
- whatever stays opaque. :func:`opaque_text` gives the backstop the bytes as text
  (decoded from base64, and from their ``content-encoding``), so a key in a text part
  or anywhere else in the bytes is found; a body it cannot decode cannot be scanned,
  and the write is refused (:class:`~.errors.UnreadableBodyError`).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ..cassettes.cassette import RecordedRequest, RecordedResponse
from ..cassettes.encodings import codings, decode
from ..cassettes.errors import ContentDecodingError
from ..cassettes.from_wire import body_fields, response_fields
from ..cassettes.multipart import multipart_boundary
from .errors import UnreadableBodyError
from .rules import Rules, normalize_key

__all__ = ["decoded", "opaque_text", "scrub_multipart"]

_PART_NAME = re.compile(rb'\bname\s*=\s*(?:"([^"]*)"|([^;\s]+))', re.IGNORECASE)
_HEAD_END = re.compile(rb"\r?\n\r?\n")


def _encoding(side: RecordedRequest | RecordedResponse) -> str:
    return side.headers.get("content-encoding", "")


def decoded(side: Any) -> Any:
    """``side`` (a request or a response) with a compressed ``body_b64`` stored decoded
    and its ``content-encoding`` dropped; ``side`` itself when there is nothing to do
    or the body cannot be decoded (then the backstop refuses it)."""
    header = _encoding(side)
    if side.body_b64 is None or not header:
        return side
    try:
        raw = decode(base64.b64decode(side.body_b64), header)
    except (ContentDecodingError, binascii.Error):
        return side
    headers = {k: v for k, v in side.headers.items() if k != "content-encoding"}
    if isinstance(side, RecordedResponse):
        fields = response_fields(headers, raw)
        return RecordedResponse(status=side.status, end=side.end, **fields)
    fields = body_fields(raw, headers.get("content-type", "").lower())
    return RecordedRequest(method=side.method, url=side.url, headers=headers, **fields)


def opaque_text(side: RecordedRequest | RecordedResponse) -> str | None:
    """The bytes of a ``body_b64``, or of a body still under a ``content-encoding``, as
    text for the backstop (``None``: the text scan reads the body as it is).

    Raises :class:`~.errors.UnreadableBodyError` for bytes it cannot decode from their
    content-encoding. Invalid UTF-8 becomes U+FFFD, which no key contains, so the keys
    in the text parts of a binary upload are found as they are."""
    header = _encoding(side) if codings(_encoding(side)) else ""
    if side.body_b64 is None and not (header and side.body):
        return None
    raw = side.content()
    if header:
        try:
            raw = decode(raw, header)
        except ContentDecodingError as exc:
            raise UnreadableBodyError(
                f"a body encoded as {header!r} that the plugin cannot decode "
                f"({exc.reason}), so it cannot be scanned"
            ) from None
    return raw.decode("utf-8", "replace")


# -- multipart/form-data -----------------------------------------------------------------


def scrub_multipart(raw: bytes, content_type: str, rules: Rules) -> bytes:
    """A multipart body with the value of every text part named like a secret (a form
    field ``api_key``, ``client_secret``, ``password``...) redacted, and JSON parts
    scrubbed by key; every other byte kept. ``raw`` itself when nothing changed."""
    boundary = multipart_boundary(content_type)
    if boundary is None:
        return raw
    delimiter = b"--" + boundary
    pieces = raw.split(delimiter)
    out = [pieces[0], *(_part(piece, rules) for piece in pieces[1:])]
    if all(a is b for a, b in zip(out, pieces, strict=True)):
        return raw
    return delimiter.join(out)


def _part(piece: bytes, rules: Rules) -> bytes:
    """One part between two delimiters: its headers, a blank line, its content and the
    line end that belongs to the next delimiter."""
    head_end = _HEAD_END.search(piece)
    if piece.startswith(b"--") or head_end is None:
        return piece  # the closing delimiter's ``--``, or no headers: not a part
    head, content = piece[: head_end.end()], piece[head_end.end() :]
    body = content.rstrip(b"\r\n")
    ending = content[len(body) :]
    scrubbed = _part_content(head, body, rules)
    return piece if scrubbed is body else head + scrubbed + ending


def _part_content(head: bytes, body: bytes, rules: Rules) -> bytes:
    lowered = head.lower()
    name = _PART_NAME.search(head)
    if name is not None and b"filename" not in lowered and body:
        field = (name.group(1) or name.group(2) or b"").decode("utf-8", "replace")
        secret_names = rules.query_params | rules.body_keys
        if field.lower() in secret_names or normalize_key(field) in rules.body_keys:
            return rules.placeholder.encode("utf-8")
    if b"json" in lowered:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        scrubbed = rules.json_text(text)
        return body if scrubbed is text else scrubbed.encode("utf-8")
    return body
