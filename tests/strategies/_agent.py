"""A small agent loop on the real anthropic SDK, correct and with a seeded retry bug.

The agent streams an answer and retries (up to ``MAX_ATTEMPTS`` calls) when the
call fails in any way a provider fails: an HTTP error it may retry, a dropped
connection, a read timeout, an in-stream error event, or an empty completion.

The seeded bug is one agent runtimes really ship: the buffer of streamed text
lives outside the retry loop, so the text a failed attempt had already shown
is kept, and the retry's answer is appended to it.
"""

from __future__ import annotations

import anthropic
import httpx2

MAX_ATTEMPTS = 4
RETRYABLE_STATUSES = (500, 429, 529, 503)


class GaveUp(Exception):  # noqa: N818 - an outcome, not a failure of the test
    """The agent used all its attempts."""


def _stream(client: anthropic.Anthropic, question: str, into: list[str]) -> None:
    with client.messages.stream(
        model="claude-sonnet-4-6",
        max_tokens=256,
        messages=[{"role": "user", "content": question}],
    ) as stream:
        for text in stream.text_stream:
            into.append(text)


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, anthropic.APIStatusError):
        # 200 is an in-stream error event (overloaded): retry it like a 529.
        return exc.status_code in (200, *RETRYABLE_STATUSES)
    return isinstance(exc, (anthropic.APIConnectionError, httpx2.TransportError))


def answer(client: anthropic.Anthropic, question: str) -> str:
    """The correct agent: a fresh buffer for every attempt."""
    for _ in range(MAX_ATTEMPTS):
        shown: list[str] = []
        try:
            _stream(client, question, shown)
        except Exception as exc:
            if not _retryable(exc):
                raise
            continue
        if shown:  # an empty completion is no answer: ask again
            return "".join(shown)
    raise GaveUp(question)


def buggy_answer(client: anthropic.Anthropic, question: str) -> str:
    """The seeded bug: the buffer survives a failed attempt."""
    shown: list[str] = []
    for _ in range(MAX_ATTEMPTS):
        try:
            _stream(client, question, shown)
        except Exception as exc:
            if not _retryable(exc):
                raise
            continue
        if shown:
            return "".join(shown)
    raise GaveUp(question)
