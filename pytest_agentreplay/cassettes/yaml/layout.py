"""Whether the writer lays a cassette out as the data it was read from.

:func:`~.fast.read_written` proves a file is the *block layout* of the data it read:
every line is the writer's line for that key and value, in the order read. The file
is then trusted without writing it again if the model built from that data writes
the same block layout, which holds when the model kept every value as read and the
writer's own layout of a cassette (:func:`~.emit.iter_interactions`) is the block
layout of those values: its fixed key order, no empty headers block, lower-case
header names in order, a stream's ``end``. :func:`lays_out` checks exactly that, a
few comparisons an interaction, where writing the file again cost about as much as
reading it (issue 29). Whatever it is not sure of (an imported interaction's
``origin``, a value the model changed, a text with a line break where the writer
writes one line) it answers ``False``, and the caller writes the file again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..fields import StoredBody, StoredInteraction, StoredRequest, StoredResponse
from .scalars import yaml_string

__all__ = ["lays_out"]

_TOP = ("interactions", "version")
_INTERACTION = ("request", "response")


def lays_out(interactions: Sequence[StoredInteraction], version: int, data: Any) -> bool:
    """Whether the writer's text of ``interactions`` and ``version`` is the block
    layout of ``data``, the file's data they were built from."""
    if type(data) is not dict or tuple(data) != _TOP:
        return False
    rows, number = data["interactions"], data["version"]
    if type(number) is not int or number != version or type(rows) is not list:
        return False
    if len(rows) != len(interactions):
        return False
    for row, interaction in zip(rows, interactions, strict=True):
        if type(row) is not dict or tuple(row) != _INTERACTION or interaction.origin is not None:
            return False
        if not _request(interaction.request, row["request"]):
            return False
        if not _response(interaction.response, row["response"]):
            return False
    return True


def _request(request: StoredRequest, row: Any) -> bool:
    """``method``, ``url``, ``headers`` when there are any, then the body."""
    if type(row) is not dict:
        return False
    keys = ("method", "url", *_headers_key(request.headers), *_body_key(request))
    return (
        tuple(row) == keys
        and _one_line(row["method"], request.method)
        and _one_line(row["url"], request.url)
        and _same_headers(request.headers, row)
        and _same_body(request, row)
    )


def _response(response: StoredResponse, row: Any) -> bool:
    """``status``, ``headers``, the body or ``events``, ``end`` for a stream (or an end
    that is not ``complete``), ``truncated``, ``tail``."""
    if type(row) is not dict:
        return False
    events, end = response.events, response.end
    ends = events is not None or end != "complete"
    keys = (
        "status",
        *_headers_key(response.headers),
        *_body_key(response),
        *(("events",) if events is not None else ()),
        *(("end",) if ends else ()),
        *(("truncated",) if response.truncated is not None else ()),
        *(("tail",) if response.tail is not None else ()),
    )
    if tuple(row) != keys:
        return False
    status = row["status"]
    if type(status) is not int or type(response.status) is not int or status != response.status:
        return False
    if not (_same_headers(response.headers, row) and _same_body(response, row)):
        return False
    if events is not None and not (type(events) is list and row["events"] == events):
        return False
    # The writer writes ``end`` and ``truncated`` as they are, on one line.
    if ends and not (_one_line(row["end"], end) and yaml_string(end, False) == end):
        return False
    if response.truncated is not None and not _one_line(row["truncated"], response.truncated):
        return False
    return response.tail is None or _same_text(row["tail"], response.tail)


def _headers_key(headers: Mapping[str, str]) -> tuple[str, ...]:
    return ("headers",) if headers else ()


def _body_key(side: StoredBody) -> tuple[str, ...]:
    if side.json_body is not None:
        return ("json",)
    if side.body is not None:
        return ("body",)
    return ("body_b64",) if side.body_b64 is not None else ()


def _same_headers(headers: Mapping[str, str], row: dict[str, Any]) -> bool:
    """The writer writes a headers block with its names lower-cased and in order: the
    model's names are lower-cased, so the file's, being the same, must be in order."""
    if not headers:
        return True
    read = row["headers"]
    return type(read) is dict and read == headers and _in_order(tuple(read))


@lru_cache(maxsize=256)
def _in_order(names: tuple[str, ...]) -> bool:
    """Whether ``names`` are sorted (a cassette's requests share a few sets of names)."""
    return list(names) == sorted(names)


def _same_body(side: StoredBody, row: dict[str, Any]) -> bool:
    """The JSON body is the very object read (the model does not copy it); a text body
    is written as any text; base64 text on one line."""
    if side.json_body is not None:
        return row["json"] is side.json_body
    if side.body is not None:
        return _same_text(row["body"], side.body)
    return side.body_b64 is None or _one_line(row["body_b64"], side.body_b64)


def _same_text(read: Any, kept: str) -> bool:
    return type(read) is str and read == kept


def _one_line(read: Any, kept: str) -> bool:
    """The same text, which the writer writes on one line where the block layout
    could write a line break as a literal block."""
    return _same_text(read, kept) and "\n" not in kept
