"""What a fake model says when a test used it wrongly: the request it got, a call
held and never released, an interrupt no stream used.

Kept apart from :class:`~..fakes.FakeModel` so the fake reads as serving, and the
wording of its failures can be read (and tested) in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..neutral import Reply, Request
from ..transport.clients import client_library
from ..transport.router import HTTPRequest

__all__ = ["held_problem", "injected_problem", "interrupt_problem", "show"]


def show(request: HTTPRequest) -> str:
    """``METHOD URL``, the client library that sent it (in a suite of several clients:
    which one), and the body (cut at 600 characters), for a failure message."""
    body = request.content.decode("utf-8", "replace")
    if len(body) > 600:
        body = body[:600] + f"... ({len(request.content)} bytes)"
    client = client_library(request.headers)
    sender = f" (sent by {client})" if client else ""
    return f"{request.method} {request.url}{sender}\n    {body}"


def held_problem(name: str, index: int, reply: Reply) -> str:
    """Call ``index`` was held by ``block()`` and never released (issue 20: this was
    reported as "1 scripted reply never requested" although the call came)."""
    return (
        f"{name}: call #{index} was held by block() and never released, so "
        f"its reply was never sent:\n  - {reply!r}\n  Call {name}.release() "
        f"once the test has checked the held state (cancelling the caller does "
        f"not release it), or set check_unused = False if the reply is spare."
    )


def interrupt_problem(name: str, pending: int, requests: Sequence[Request]) -> str:
    """``pending`` interrupts never cut a stream (issue 20: ``interrupting_model``
    ignored a non-streaming call, so the ``stream=False`` side of a parametrized test
    passed without any cut)."""
    plain = [str(i) for i, r in enumerate(requests) if not r.stream]
    came = f"call #{', #'.join(plain)} did not stream" if plain else "no call came"
    return (
        f"{name}: {pending} interrupt{'' if pending == 1 else 's'} queued by "
        f"interrupt() never cut a stream ({came}; an interrupt cuts streamed "
        f"responses only). Stream the call, or leave interrupting_model / "
        f"interrupt() out of a non-streaming test."
    )


def injected_problem(name: str, pending: int) -> str:
    """``pending`` faults queued by ``inject()`` struck no call (none came for them)."""
    return (
        f"{name}: {pending} fault{'' if pending == 1 else 's'} queued by inject() "
        f"struck no call (each strikes the next call that comes). Make the call, or "
        f"inject fewer faults."
    )
