"""What one model call gets: a :class:`Reply`, or a :class:`Fault`.

A :class:`Reply` is what the model answers (parts, usage, stop reason) and may
carry the :class:`Fault` that strikes its call. They live together because a reply
carries a fault; the plans made of both are in :mod:`.fault_plan`, and
:mod:`.source` writes either back as the Python that builds it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, NonNegativeInt, model_validator

from .parts import Citation, Frozen, Part, ServerToolCall, StopReason, Text, ToolCall, Usage

__all__ = ["Fault", "FaultKind", "Reply"]

FaultKind = Literal["http", "cut", "error_event", "stall", "timeout", "empty", "truncate"]
"""How a call fails (see the constructors of :class:`Fault`)."""


class Fault(Frozen):
    """A way a provider call fails. Build one with the class methods, not directly.

    ``after_events`` counts SSE events delivered before the fault strikes (for
    streams); non-streaming calls fail before the body for every kind except
    ``empty`` and ``truncate``.

    Every fault that sends a response may also give its headers, as providers do
    when they are overloaded: ``retry_after`` (seconds, the ``retry-after``
    header), ``request_id`` (the provider's request-id header, and the
    ``request_id`` of the error body or event where the provider puts one there)
    and any other ``headers``. On a stream they arrive with the 200, before the
    body fails.
    """

    kind: FaultKind
    status: int | None = None
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = None
    after_events: NonNegativeInt | None = None
    request_id: str | None = None
    headers: dict[str, str] | None = None

    @model_validator(mode="after")
    def _headers_need_a_response(self) -> Fault:
        has_headers = self.retry_after is not None or self.request_id or self.headers
        if self.kind == "timeout" and self.after_events is None and has_headers:
            raise ValueError(
                "a timeout before the response sends no headers; give after_events "
                "(a timeout mid-stream) or drop retry_after / request_id / headers"
            )
        if self.retry_after is not None and self.retry_after < 0:
            raise ValueError(f"retry_after must be >= 0 seconds, got {self.retry_after}")
        for name, value in (self.headers or {}).items():
            _check_header(name, value)
        if self.request_id is not None:
            _check_header("request-id", self.request_id)
        return self

    @classmethod
    def http(
        cls,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """An HTTP error response in the provider's own error format.

        ``error_type`` defaults to the provider's type for ``status``
        (for 429: ``rate_limit_error`` on Anthropic, ``requests`` with code
        ``rate_limit_exceeded`` on OpenAI). ``message`` defaults to the
        provider's usual message for that status.
        """
        if not 400 <= status <= 599:
            raise ValueError(f"Fault.http status must be 400-599, got {status}")
        return cls(
            kind="http",
            status=status,
            message=message,
            error_type=error_type,
            **_answer(retry_after, request_id, headers),
        )

    @classmethod
    def cut(
        cls,
        after_events: int = 0,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The connection drops after ``after_events`` events (``RemoteProtocolError``)."""
        return cls(
            kind="cut", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def error_event(
        cls,
        error_type: str | None = None,
        message: str | None = None,
        *,
        after_events: int = 0,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The provider's in-stream error event, sent with HTTP 200 after ``after_events``.

        ``error_type`` and ``message`` default to the provider's own words for an
        overloaded / failing server (``overloaded_error`` for Anthropic,
        ``server_error`` for OpenAI).
        """
        return cls(
            kind="error_event",
            error_type=error_type,
            message=message,
            after_events=after_events,
            **_answer(retry_after, request_id, headers),
        )

    @classmethod
    def stall(
        cls,
        after_events: int = 0,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The stream stops sending after ``after_events`` events and holds until
        the fake is released or the client hangs up."""
        return cls(
            kind="stall", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def timeout(
        cls,
        after_events: int | None = None,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """A read timeout: before the response (``None``) or after ``after_events``
        (only then are there headers to give)."""
        return cls(
            kind="timeout", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def truncate(
        cls,
        after_events: int = 0,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The stream ends cleanly after ``after_events`` events, without the
        provider's closing events (no stop reason, no ``[DONE]``): what a proxy or
        gateway that closes a stream early delivers. No error is raised; an agent
        must notice that the answer never finished. A non-streaming call gets its
        whole JSON body (a truncated JSON body would be a different failure)."""
        return cls(
            kind="truncate", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def empty(
        cls,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """A 200 response with no content: no text, no tool calls."""
        return cls(kind="empty", **_answer(retry_after, request_id, headers))

    def describe(self) -> str:
        """A short human description, used in logs and failure messages."""
        where = "" if self.after_events is None else f" after {self.after_events} events"
        if self.kind == "http":
            what = f"HTTP {self.status}" + (f" ({self.message})" if self.message else "")
        elif self.kind == "error_event":
            what = f"in-stream {self.error_type or 'error'}{where}"
        else:
            what = f"{self.kind}{where}"
        return what + self._described_headers()

    def _described_headers(self) -> str:
        bits = [] if self.retry_after is None else [f"retry-after {_seconds(self.retry_after)}"]
        if self.request_id:
            bits.append(f"request id {self.request_id}")
        bits.extend(f"{name}: {value}" for name, value in (self.headers or {}).items())
        return f" [{', '.join(bits)}]" if bits else ""


def _answer(
    retry_after: float | None, request_id: str | None, headers: Mapping[str, str] | None
) -> dict[str, Any]:
    """The header fields of a fault, as its constructors take them."""
    return {
        "retry_after": retry_after,
        "request_id": request_id,
        "headers": None if headers is None else dict(headers),
    }


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


def _check_header(name: str, value: str) -> None:
    """A header the fake can send as given: a token name, a value on one line."""
    if not _TOKEN.match(name):
        raise ValueError(f"header name {name!r} is not a valid HTTP header name")
    if "\r" in value or "\n" in value or "\0" in value:
        raise ValueError(f"header {name!r}: a value cannot hold CR, LF or NUL: {value!r}")


def _seconds(seconds: float) -> str:
    """``30`` for whole seconds, ``1.5`` otherwise: how a ``retry-after`` value is written."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(seconds)


class Reply(Frozen):
    """What the model answers to one call: parts, usage, stop reason, optional fault.

    ``usage`` and ``stop`` are derived when omitted (usage is estimated from the
    request and reply sizes; stop is ``tool_use`` when the reply has a tool call).
    ``event_fields`` are added to the JSON data of every streamed event (fields
    an event already has are kept), as some gateways add ``"error": null`` or
    ``"error": ""`` to every event; a JSON body is sent as the provider would.
    """

    parts: list[Part] = Field(default_factory=list)
    usage: Usage | None = None
    stop: StopReason | None = None
    model: str | None = None
    fault: Fault | None = None
    event_fields: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _valid(self) -> Reply:
        ServerToolCall.check_ids(self.parts)
        if self.event_fields is None:  # the usual reply: no encoder made (bench/ W5)
            return self
        try:
            json.dumps(self.event_fields, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"event_fields must be JSON data: {exc}") from None
        return self

    @classmethod
    def text(
        cls,
        text: str,
        *,
        citations: Sequence[Citation] = (),
        usage: Usage | None = None,
        stop: StopReason | None = None,
        model: str | None = None,
        fault: Fault | None = None,
        event_fields: dict[str, Any] | None = None,
    ) -> Reply:
        """A plain text answer (citing ``citations``, if given)."""
        return cls(
            parts=[Text(text=text, citations=list(citations))],
            usage=usage,
            stop=stop,
            model=model,
            fault=fault,
            event_fields=event_fields,
        )

    @classmethod
    def tool_call(
        cls,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        id: str | None = None,
        text: str | None = None,
        usage: Usage | None = None,
        model: str | None = None,
        fault: Fault | None = None,
        event_fields: dict[str, Any] | None = None,
    ) -> Reply:
        """A single tool call, optionally preceded by ``text``."""
        parts: list[Part] = [] if text is None else [Text(text=text)]
        parts.append(ToolCall(name=name, args=args or {}, id=id))
        return cls(parts=parts, usage=usage, model=model, fault=fault, event_fields=event_fields)

    @classmethod
    def failure(cls, fault: Fault) -> Reply:
        """A reply that is only a fault (what a bare :class:`Fault` in a script means)."""
        return cls(fault=fault)

    @property
    def text_content(self) -> str:
        """All text parts joined, as an agent would display them."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls of the reply (the agent's to run), in order."""
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def server_tool_calls(self) -> list[ServerToolCall]:
        """The provider-side tool calls of the reply (the provider ran them), in order."""
        return [p for p in self.parts if isinstance(p, ServerToolCall)]

    @property
    def stop_reason(self) -> StopReason:
        """``stop`` if given, else ``tool_use`` when there is a tool call, else ``end_turn``."""
        if self.stop is not None:
            return self.stop
        for part in self.parts:  # the first tool call decides (no list of them built)
            if isinstance(part, ToolCall):
                return "tool_use"
        return "end_turn"
