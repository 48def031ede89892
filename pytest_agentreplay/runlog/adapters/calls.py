"""The model side of a run log: model calls and the egress ledger, read from what the log
watches (a fake model, the ``agentreplay`` cassette handle, a list of calls).

A fake model keeps :class:`~pytest_agentreplay.neutral.ModelCall` objects already; a
cassette handle keeps recorded interactions, which are parsed here with the provider
codec into the same form, so the invariants read both alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from ... import jsonparse
from ...cassettes.cassette import Interaction
from ...cassettes.replay import recorded_reply
from ...errors import CodecError
from ...neutral import ModelCall, Outcome
from ...providers import codec_for, detect, target
from ..entries import Egress

__all__ = [
    "collect",
    "egress_of",
    "handle_calls",
    "handle_egress",
    "is_handle",
    "requests_seen",
]

_OUTCOMES: dict[str, Outcome] = {
    "completed": "completed",
    "complete": "completed",
    "cut": "cut",
    "incomplete": "cut",
    "error_event": "error_event",
    "http_error": "http_error",
    "timeout": "timeout",
    "cancelled": "cancelled",
}


def is_handle(source: Any) -> bool:
    """Whether ``source`` is (shaped like) the ``agentreplay`` cassette handle."""
    return all(hasattr(source, name) for name in ("interactions", "calls", "live_calls"))


def collect(sources: Iterable[Any]) -> tuple[list[ModelCall], Egress | None]:
    """The model calls of ``sources`` in order (re-indexed so indexes are unique in the
    log) and their merged egress ledger (``None`` when no source keeps one)."""
    calls: list[ModelCall] = []
    egress: Egress | None = None
    for source in sources:
        calls.extend(_calls_of(source))
        if hasattr(source, "live_calls"):
            ledger = handle_egress(source) if is_handle(source) else _ledger(source)
            egress = _merge(egress, ledger)
    renumbered = [
        c if c.index == i else c.model_copy(update={"index": i}) for i, c in enumerate(calls)
    ]
    return renumbered, egress


def requests_seen(sources: Iterable[Any]) -> int:
    """How many model calls ``sources`` have received so far: a fake's requests as they
    arrived (a call still held counts), a handle's or a list's calls. Compared later with
    the calls :func:`collect` returns, it tells which came after."""
    seen = 0
    for source in sources:
        requests = getattr(source, "requests", None)
        if not is_handle(source) and hasattr(source, "log") and isinstance(requests, list):
            seen += len(requests)
        else:
            seen += len(_calls_of(source))
    return seen


def _calls_of(source: Any) -> list[ModelCall]:
    if is_handle(source):
        return handle_calls(source)
    if hasattr(source, "log"):
        return list(source.log)
    if isinstance(source, (list, tuple)):
        return [c for c in source if isinstance(c, ModelCall)]
    return []


def egress_of(source: Any) -> Egress:
    """The egress ledger of ``source``: an :class:`~..entries.Egress` itself, the
    ``agentreplay`` handle's (see :func:`handle_egress`), or the ``live_calls`` and
    ``blocked`` requests of anything that keeps them (an interception router)."""
    if isinstance(source, Egress):
        return source
    if is_handle(source):
        return handle_egress(source)
    return _ledger(source)


def _ledger(source: Any) -> Egress:
    return Egress(live_calls=list(source.live_calls), blocked=list(source.blocked))


def _merge(a: Egress | None, b: Egress) -> Egress:
    if a is None:
        return b
    unplayed = (
        None
        if a.unplayed is None and b.unplayed is None
        else ([*(a.unplayed or []), *(b.unplayed or [])])
    )
    return a.model_copy(
        update={
            "live_calls": [*a.live_calls, *b.live_calls],
            "blocked": [*a.blocked, *b.blocked],
            "unplayed": unplayed,
        }
    )


def handle_egress(handle: Any) -> Egress:
    """The egress ledger of an ``agentreplay`` handle: live and blocked requests,
    calls answered live, recorded interactions left unplayed."""
    live = list(handle.live_calls)
    for call in handle.calls:
        described = f"{call.method} {call.url}"
        if call.source != "cassette" and described not in live:
            live.append(described)
    return Egress(live_calls=live, blocked=list(handle.blocked), unplayed=list(handle.unplayed))


def handle_calls(handle: Any) -> list[ModelCall]:
    """The model calls of an ``agentreplay`` handle as :class:`ModelCall` objects:
    request and reply parsed from the recorded interaction with the provider codec."""
    recorded = list(handle.recorded)
    interactions = handle.interactions
    calls: list[ModelCall] = []
    live = 0
    for call in handle.calls:
        if call.source == "cassette" and call.interaction is not None:
            interaction: Interaction | None = interactions[call.interaction]
        else:
            interaction = recorded[live] if live < len(recorded) else None
            live += 1
        converted = _model_call(call, interaction, len(calls)) if interaction else None
        if converted is not None:
            calls.append(converted)
    return calls


def _model_call(call: Any, interaction: Interaction, index: int) -> ModelCall | None:
    request = getattr(call, "request", None) or interaction.request  # what was sent
    provider = detect(request.method, urlsplit(request.url).path)
    if provider is None:
        return None  # not a model call (a token count, a model list...)
    codec = codec_for(provider)
    try:
        body = jsonparse.loads(request.content() or b"{}")
        parsed = codec.parse_call(
            request.method, target(request.url), body if isinstance(body, dict) else {}
        )
    except (ValueError, CodecError):
        return None
    return ModelCall(
        index=index,
        provider=provider,
        method=call.method,
        url=call.url,
        streaming=parsed.stream,
        request=parsed,
        status=call.status,
        outcome=_outcome(call.outcome, call.status),
        events_sent=call.events_sent if interaction.response.is_stream else 0,
        reply=recorded_reply(codec, interaction.response),
    )


def _outcome(ended: str, status: int | None) -> Outcome:
    """How a served call ended, in :class:`ModelCall` terms: an HTTP error status is an
    ``http_error`` whatever the handle says, and only an error status is one."""
    outcome = _OUTCOMES.get(ended, "cut")
    if outcome == "completed" and status is not None and status >= 400:
        return "http_error"
    if outcome == "http_error" and (status or 0) < 400:
        return "completed"
    return outcome
