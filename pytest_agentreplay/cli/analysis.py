"""Reading cassettes for the ``agentreplay`` command, and what one interaction says.

:func:`read_source` loads a file in any supported format and keeps its text (for
the secret scan and for locating findings); :func:`view` works out what an
interaction is — which provider, which model was asked what, how its stream
folds, how it ended — once, for ``inspect``, ``lint``, ``fold`` and ``diff``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import jsonparse
from ..cassettes.cassette import Cassette, Interaction, RecordedEvent, RecordedResponse
from ..cassettes.errors import UnreadableFileError
from ..cassettes.formats.detect import Format
from ..cassettes.io import CassetteFormatError, detect_format, loads
from ..cassettes.reading import read_file
from ..errors import AgentReplayError
from ..neutral import Provider, Reply, Request
from ..providers import codec_for, detect, target
from ..providers.base import Codec, Folded
from .errors import CLIError

__all__ = [
    "Source",
    "View",
    "decode_source",
    "error_summary",
    "event_label",
    "read_source",
    "selected",
    "type_counts",
    "view",
    "views",
]


@dataclass
class Source:
    """A cassette file: its path, text, format and the cassette it loads as."""

    path: Path
    text: str
    format: Format
    cassette: Cassette


def decode_source(raw: bytes) -> str:
    """The file's text as far as it decodes (bad bytes become U+FFFD), BOM dropped."""
    text = raw.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes; anything but a regular file of bounded size (missing,
    unreadable, a FIFO, a device, too big) is a :class:`CLIError` saying so."""
    try:
        return read_file(path)
    except UnreadableFileError as exc:
        raise CLIError(path, exc.problem) from None


def read_source(path: str | os.PathLike[str]) -> Source:
    """Load ``path`` (any supported format); a file that does not load is a
    :class:`CLIError` whose reason is the loader's (file, line, column, field, hint)."""
    raw = read_bytes(path)
    try:
        cassette = loads(raw, path=os.fspath(path))
    except CassetteFormatError as exc:
        raise CLIError(None, str(exc)) from None
    return Source(Path(path), decode_source(raw), detect_format(raw), cassette)


# --- events ----------------------------------------------------------------------------


def event_label(event: RecordedEvent) -> str:
    """What kind of event this is: its ``event:`` name, else its data's ``type`` (or
    ``object``), ``[DONE]`` for the OpenAI sentinel, ``message`` when nothing says."""
    if event.event:
        return event.event
    data = event.data.strip()
    if data == "[DONE]":
        return "[DONE]"
    if not data.startswith("{"):
        return "message"
    try:
        payload = jsonparse.loads(data)
    except ValueError:
        return "message"
    for key in ("type", "object"):
        value = payload.get(key) if isinstance(payload, dict) else None
        if isinstance(value, str) and value:
            return value
    return "error" if isinstance(payload, dict) and "error" in payload else "message"


def type_counts(events: Sequence[RecordedEvent]) -> dict[str, int]:
    """Events per label, in the order each label first appears."""
    return dict(Counter(event_label(e) for e in events))


def timings(events: Sequence[RecordedEvent]) -> tuple[float, float] | None:
    """Seconds from the request to the first and to the last event, when recorded."""
    times = [e.t for e in events if e.t is not None]
    return (times[0], times[-1]) if times else None


# --- error bodies ----------------------------------------------------------------------


def error_summary(body: Any) -> str | None:
    """``type: message`` of a provider error body (Anthropic, OpenAI, Google shapes)."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, list) and error:
        error = error[0]
    if isinstance(error, str):
        return error
    if not isinstance(error, dict):
        return None
    kind = error.get("type") or error.get("code") or error.get("status")
    message = error.get("message")
    parts = [str(p) for p in (kind, message) if p not in (None, "")]
    return ": ".join(parts) or None


# --- one interaction -------------------------------------------------------------------


@dataclass
class View:
    """What one interaction is, worked out once.

    ``provider`` is set for model calls (a provider endpoint); ``request`` is the
    request in neutral form when its body parses; ``folded`` is the folded stream
    (``None`` for a non-stream, or when folding failed: ``fold_problem`` says why).
    """

    index: int
    interaction: Interaction
    provider: Provider | None = None
    request: Request | None = None
    request_problem: str | None = None
    folded: Folded | None = None
    fold_problem: str | None = None
    _reply: Reply | None = field(default=None, repr=False)
    _reply_done: bool = field(default=False, repr=False)

    @property
    def response(self) -> RecordedResponse:
        return self.interaction.response

    @property
    def streaming(self) -> bool:
        return self.response.events is not None

    @property
    def codec(self) -> Codec | None:
        return codec_for(self.provider) if self.provider else None

    @property
    def content_type(self) -> str:
        return self.response.headers.get("content-type", "")

    @property
    def final_body(self) -> Any:
        """The final JSON the provider returned (folded for a stream), ``None`` if none."""
        if self.folded is not None:
            return self.folded.body
        if self.provider and not self.streaming and self.response.status < 400:
            return self.response.json_body
        return None

    @property
    def reply(self) -> Reply | None:
        """The final message in neutral form (``None`` when there is none or it does
        not read as one)."""
        if not self._reply_done:
            self._reply_done = True
            body, codec = self.final_body, self.codec
            if isinstance(body, dict) and codec is not None:
                try:
                    self._reply = codec.to_reply(body)
                except (AgentReplayError, ValueError, TypeError, KeyError):
                    self._reply = None
        return self._reply

    @property
    def unfinished(self) -> str | None:
        """Why a stream has no stop reason (it was cut, or never reached its terminal
        event), in a few words; ``None`` for a stream that reached its terminal event
        and for a body that was not streamed (or did not fold). Issue 30: ``inspect``
        showed ``stop end_turn`` for a cut stream (the neutral reply's default) while
        ``fold`` showed ``null``."""
        folded = self.folded
        if not self.streaming or folded is None or folded.complete:
            return None
        end = self.response.end
        return "no terminal event" if end == "complete" else f"{end}, no terminal event"

    def ending(self) -> str:
        """How the response ended, in a few words."""
        response = self.response
        if not self.streaming:
            return "complete"
        count = len(response.events or ())
        if response.end != "complete":
            return f"{response.end} after {count} events (as recorded)"
        if response.tail is not None or response.truncated:
            return "truncated: the last event has no closing blank line (clients drop it)"
        folded = self.folded
        if folded is not None and folded.error is not None:
            return f"error event: {error_summary({'error': folded.error}) or 'error'}"
        if folded is not None and not folded.complete:
            return "no terminal event"
        last = event_label(response.events[-1]) if response.events else "no events"
        return f"complete ({last})"


def _request(view: View) -> None:
    body = view.interaction.request.json_body
    codec = view.codec
    if codec is None or not isinstance(body, dict):
        return
    request = view.interaction.request
    try:
        view.request = codec.parse_call(request.method, target(request.url), body)
    except (AgentReplayError, ValueError, TypeError) as exc:
        view.request_problem = str(exc)


def _fold(view: View, strict: bool) -> None:
    codec = view.codec
    if codec is None or not view.streaming:
        return
    try:
        view.folded = codec.fold_detailed(view.response.sse_events(), strict=strict)
    except (AgentReplayError, ValueError, TypeError, KeyError) as exc:
        view.fold_problem = str(exc)


def view(interaction: Interaction, index: int, *, strict: bool = False) -> View:
    """The :class:`View` of one interaction; ``strict`` folds with unknown event types
    counted as errors."""
    request = interaction.request
    provider = detect(request.method, urlsplit(request.url).path)
    result = View(index=index, interaction=interaction, provider=provider)
    _request(result)
    _fold(result, strict)
    return result


def views(cassette: Cassette, *, strict: bool = False) -> list[View]:
    """The views of every interaction of ``cassette``."""
    return [view(item, i, strict=strict) for i, item in enumerate(cassette.interactions)]


def selected(source: Source, index: int | None) -> list[View]:
    """The views of ``source``'s interactions, or of interaction ``index`` alone (a
    :class:`CLIError` naming the range when there is no such interaction)."""
    items = views(source.cassette)
    if index is None:
        return items
    if not 0 <= index < len(items):
        raise CLIError(source.path, _range_problem(index, len(items)))
    return [items[index]]


def _range_problem(index: int, count: int) -> str:
    if count == 0:
        return f"has no interactions (asked for #{index})"
    return f"has no interaction #{index} (it holds #0 to #{count - 1})"
