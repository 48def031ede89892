"""The call log of ``agentreplay serve`` as JSON, with no secret in it.

``GET /_agentreplay/log`` shows a client in another language what the fake was asked
and how each call ended. A request's headers and body may carry the client's key
(``authorization``, ``x-api-key``, ``?key=``, an ``api_key`` in the body): they go
through the scrubber a cassette goes through (:class:`~..redact.scrubber.Scrubber`,
keeping the harmless volatile headers such as ``user-agent``), and every string left
is masked by the backstop's patterns, so the log never echoes a secret.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..cassettes.record import recorded_request
from ..redact.scrubber import Scrubber
from ..transport.router import HTTPRequest

if TYPE_CHECKING:
    from ..neutral import ModelCall
    from .fake_model import FakeModel
    from .script import HTTPCall

__all__ = ["LogScrubber", "fake_log", "masked"]


def masked(value: Any, mask: Callable[[str], str]) -> Any:
    """``value`` (JSON data) with every string (and key) passed through ``mask``."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list):
        return [masked(v, mask) for v in value]
    if isinstance(value, dict):
        return {mask(str(k)): masked(v, mask) for k, v in value.items()}
    return value


class LogScrubber:
    """A request's URL, headers and body as the log may show them."""

    def __init__(self, scrubber: Scrubber | None = None) -> None:
        self.scrubber = scrubber or Scrubber(keep_volatile=True)

    def mask(self, text: str) -> str:
        """``text`` with what looks secret replaced."""
        return self.scrubber.mask(text)

    def request(
        self, method: str, url: str, headers: dict[str, str], content: bytes
    ) -> dict[str, Any]:
        """``url``, ``headers`` and ``body`` of a request, scrubbed then masked."""
        http = HTTPRequest(method, url, tuple(headers.items()), content, "server")
        scrubbed = self.scrubber.scrub_request(recorded_request(http))
        body: Any = scrubbed.json_body if scrubbed.json_body is not None else scrubbed.body
        shown: dict[str, Any] = masked(
            {"url": scrubbed.url, "headers": dict(scrubbed.headers), "body": body}, self.mask
        )
        return shown


def fake_log(fake: FakeModel, scrub: LogScrubber) -> dict[str, Any]:
    """What a fake saw, as the control API's ``log`` answers it."""
    finished = {entry.index: entry for entry in fake.log}
    calls = [_call(n, call, finished.get(n), scrub) for n, call in enumerate(list(fake.calls))]
    return {
        "calls": calls,
        "remaining": len(fake.remaining),
        "held": fake.wait_blocked(0),
        "problems": [scrub.mask(p) for p in fake.surprises],
    }


def _call(
    index: int, call: HTTPCall, entry: ModelCall | None, scrub: LogScrubber
) -> dict[str, Any]:
    seen = scrub.request(call.method, call.url, call.headers, call.content)
    out: dict[str, Any] = {
        "index": index,
        "method": call.method,
        "url": seen["url"],
        "client": scrub.mask(call.client) if call.client else None,
        "provider": None,
        "model": None,
        "streaming": None,
        "status": None,
        "outcome": "open",  # no ending yet: held, or still being sent
        "events_sent": 0,
        "reply_text": None,
        "fault": None,
        "headers": seen["headers"],
        "body": seen["body"],
    }
    if entry is not None:
        reply = entry.reply
        out.update(
            provider=entry.provider,
            model=entry.request.model,
            streaming=entry.streaming,
            status=entry.status,
            outcome=entry.outcome,
            events_sent=entry.events_sent,
            reply_text=scrub.mask(reply.text_content) if reply is not None else None,
            fault=reply.fault.describe() if reply is not None and reply.fault else None,
        )
    return out
