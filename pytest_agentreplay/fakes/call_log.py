"""What a fake was asked and how each call went: :class:`CallLog`.

A fake logs every call as it arrives (the request as sent, :class:`~.script.HTTPCall`)
and as it ends (its outcome). The neutral :class:`~..neutral.Request` a call was parsed
into is used while the call is answered; once the call ended, the log keeps it only if
something outside the fake was handed it (``respond=``, or a read of ``requests`` or
``log``). Otherwise it is read again from the call's body when asked for: the parse is
pure, so the request read again equals the one the call was answered from, and from
then on the log keeps that one (``requests[i]`` is the same object at every read, and
the one ``log[i].request`` holds). Keeping every call's parsed request (a dozen objects:
the message lists, the models and their field sets, a copy of the body) for a test that
reads none of them was about a tenth of a fake's call (bench/ W5, issue 29).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import cast

from ..neutral import ModelCall, Reply, Request
from ..providers.base import RequestFacts
from ..transport.router import HTTPRequest
from .script import HTTPCall

__all__ = ["CallLog", "ReadAgain"]

ReadAgain = Callable[[HTTPCall], Request]
"""How a logged call's request is parsed again from its body (the codec and the path it
was parsed with the first time)."""

_Ended = tuple[int, "int | None", str, int, "Reply | None", str, HTTPCall]
"""A finished call's log entry until it is read: (number, status, outcome, events sent,
reply, URL, call)."""


class CallLog:
    """What a fake was asked (:attr:`calls`, :attr:`requests`) and how each call ended
    (:attr:`entries`: one :class:`~..neutral.ModelCall` per finished call)."""

    def __init__(self) -> None:
        self.calls: list[HTTPCall] = []
        self._lock = threading.Lock()
        # how each call's request is read again (parallel to ``calls``); None: kept
        self._read_again: list[ReadAgain | None] = []
        # parsed requests kept, by call number: handed out, read, or never to be read again
        self._kept: dict[int, Request] = {}
        # A finished call's entry is built when the log is read (most tests never read
        # it; bench/ W5: the entry was a tenth of a fake call): its fields until then.
        self._entries: dict[int, ModelCall | _Ended] = {}
        self._open: dict[int, tuple[RequestFacts, str, HTTPCall]] = {}
        self._statuses: dict[int, int | None] = {}
        # Call numbers never repeat, so that a call still open at a reset() cannot end
        # a later one; the log numbers calls from the last reset (``_base``).
        self._next = 0
        self._base = 0

    def open(
        self, request: HTTPRequest, parsed: RequestFacts, read_again: ReadAgain | None = None
    ) -> int:
        """Log a call that arrived, parsed as ``parsed``; returns its number (for
        :meth:`ended`). ``read_again`` parses the call's request again once it ended
        (without one, ``parsed``, then a :class:`~..neutral.Request`, is kept)."""
        call = HTTPCall.of(request)
        with self._lock:
            index = self._next
            self._next += 1
            self.calls.append(call)
            self._read_again.append(read_again)
            if read_again is None:
                self._kept[index] = cast("Request", parsed)
            self._open[index] = (parsed, request.url, call)
        return index

    def request(self, index: int) -> Request | None:
        """Call ``index``'s parsed request, kept from now on: what is handed to code
        outside the fake (``respond=``) and what :attr:`requests` shows for the call;
        ``None`` for a call :meth:`reset` forgot."""
        with self._lock:
            return None if index < self._base else self._request(index)

    def reset(self) -> None:
        """Forget every call (in place: ``calls`` stays the same list). A call still
        open is forgotten too: its ending is no longer logged."""
        with self._lock:
            self.calls.clear()
            self._read_again.clear()
            self._kept.clear()
            self._entries.clear()
            self._open.clear()
            self._statuses.clear()
            self._base = self._next

    def forgotten(self, index: int) -> bool:
        """Whether call ``index`` arrived before the last :meth:`reset`."""
        return index < self._base  # one read of a number :meth:`reset` replaces

    def answered(self, index: int, status: int | None) -> None:
        """The status call ``index`` is answered with (``None``: no response at all)."""
        with self._lock:
            self._statuses[index] = status

    def ended(self, index: int, outcome: str, events_sent: int, reply: Reply | None) -> None:
        """Call ``index`` ended (only its first ending counts); an error response read
        to its end is an ``http_error``."""
        with self._lock:
            opened = self._open.pop(index, None)
            if opened is None:
                return
            request, url, call = opened
            status = self._statuses.pop(index, None)
            if outcome == "completed" and status is not None and status >= 400:
                outcome = "http_error"
            # An error body is not an event stream: nothing of the reply was delivered.
            delivered = events_sent if request.stream and (status or 0) < 400 else 0
            # its client library is read from the call's headers when the entry is built
            self._entries[index] = (
                index - self._base,
                status,
                outcome,
                delivered,
                reply,
                url,
                call,
            )

    def close_open(self) -> None:
        """Log calls whose response the client never closed as ``cancelled``."""
        with self._lock:
            open_calls = list(self._open)
        for index in open_calls:
            self.ended(index, "cancelled", 0, None)

    @property
    def requests(self) -> list[Request]:
        """Every call's request parsed, in arrival order (a new list; the same
        :class:`~..neutral.Request` objects at every read)."""
        with self._lock:
            return [self._request(self._base + i) for i in range(len(self.calls))]

    def last_request(self) -> Request:
        """The last call's parsed request (only it is read); ``IndexError`` if none came."""
        with self._lock:
            if not self.calls:
                raise IndexError("no request has arrived")
            return self._request(self._base + len(self.calls) - 1)

    def _request(self, index: int) -> Request:
        """Call ``index``'s parsed request, kept from now on (the caller holds the lock)."""
        kept = self._kept.get(index)
        if kept is None:
            opened = self._open.get(index)
            if opened is not None and isinstance(opened[0], Request):
                kept = opened[0]
            else:
                position = index - self._base
                read_again = self._read_again[position]
                assert read_again is not None  # without one, the request was kept
                kept = read_again(self.calls[position])
            self._kept[index] = kept
        return kept

    @property
    def entries(self) -> list[ModelCall]:
        """Every finished call, in arrival order."""
        with self._lock:
            built = []
            for i in sorted(self._entries):
                entry = self._entries[i]
                if isinstance(entry, tuple):
                    number, status, outcome, sent, reply, url, call = entry
                    request = self._request(i)
                    entry = self._entries[i] = ModelCall(
                        index=number,
                        provider=request.provider,
                        url=url,
                        streaming=request.stream,
                        request=request,
                        status=status,
                        outcome=outcome,
                        events_sent=sent,
                        reply=reply,
                        client=call.client,
                    )
                built.append(entry)
            return built
