"""A fake model on a real port: for child processes and agents in any language.

:meth:`FakeModel.listen() <..fakes.FakeModel.listen>` (and the ``model_server``
fixture) serve a fake through a :class:`~..transport.server.ModelServer`: the same
script, faults, holds and call log as in-process, over a loopback HTTP/1.1
socket whose URL goes into a child's ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``
(:attr:`~..transport.server.ModelServer.env`).

The server speaks the fake's scripting vocabulary itself (``script``, ``fail_with``,
``interrupt``, ``inject``, ``reset``, ``block``, ``release``, ``wait_blocked``) and
shows what it saw (``log``, ``calls``, ``requests``, ``last_request``): issue 30 found
``model_server.script(...)`` was the first thing people typed, and an
``AttributeError``. Any other attribute of the fake is named in the error, as
``.model.NAME``.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..neutral import Fault, ModelCall, Request
from ..transport.router import Handler
from ..transport.server import ModelServer
from .script import HTTPCall, ScriptItem

__all__ = ["Checked", "CheckedServer", "FakeServer", "Served"]


class Checked(Handler, Protocol):
    """A fake that answers requests and checks itself at the end (``with fake:``)."""

    def verify(self) -> None:
        """Fail the test for what went wrong (a call past the script, replies unused)."""


C = TypeVar("C", bound=Checked)


class CheckedServer(ModelServer, Generic[C]):
    """A fake served on a loopback port, checked as ``with fake:`` checks it when a
    ``with`` block that raised nothing closes the server: the model fake's
    :class:`FakeServer` and the tool fake's listener (:mod:`..mcp.fake.listening`)."""

    handler: C

    def __init__(self, fake: C, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(fake, host=host, port=port)

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        self.close()
        if exc_type is None:
            self.handler.verify()


class Served(Checked, Protocol):
    """What a :class:`FakeServer` needs of the fake it serves: to answer requests, to
    be checked when the server closes, and the scripting vocabulary the server passes
    on. Named here rather than importing :class:`~.fake_model.FakeModel`, which
    returns a server from ``listen()``: the two modules would import each other."""

    calls: list[HTTPCall]

    @property
    def requests(self) -> list[Request]: ...

    def script(self, *items: ScriptItem) -> object: ...
    def fail_with(self, fault: Fault) -> object: ...
    def interrupt(self, *, after_events: int | None = None, times: int = 1) -> object: ...
    def inject(self, fault: Fault) -> object: ...
    def reset(self) -> object: ...
    def block(self, *, after_events: int | None = None) -> object: ...
    def release(self) -> None: ...
    def wait_blocked(self, timeout: float | None = 5.0) -> bool: ...
    async def wait_blocked_async(self, timeout: float | None = 5.0) -> bool: ...

    @property
    def log(self) -> list[ModelCall]: ...

    @property
    def last_request(self) -> Request: ...


FakeT = TypeVar("FakeT", bound=Served)
_F = TypeVar("_F", bound="FakeServer[Any]")


class FakeServer(CheckedServer[FakeT]):
    """A :class:`~..fakes.FakeModel` served on a loopback port.

    ``url`` and ``env`` point a child at it; ``model`` is the fake, and the server
    passes the scripting calls on to it (``server.script(Reply.text("Hi"))`` is
    ``server.model.script(...)``; each returns the server, so calls chain). As a
    context manager it closes the server at the end of the block and then checks the
    fake as ``with fake:`` does (a call after the script ran out, replies never
    requested); a call still held when it closes is hung up on and logged
    ``cancelled``.
    """

    def __init__(self, model: FakeT, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(model, host=host, port=port)
        self.model: FakeT = model

    # --- the fake's scripting vocabulary, on the server ----------------------------

    def script(self: _F, *items: ScriptItem) -> _F:
        """Append replies to the fake's script (:meth:`FakeModel.script`)."""
        self.model.script(*items)
        return self

    def fail_with(self: _F, fault: Fault) -> _F:
        """Fail every call with ``fault`` (:meth:`FakeModel.fail_with`)."""
        self.model.fail_with(fault)
        return self

    def interrupt(self: _F, *, after_events: int | None = None, times: int = 1) -> _F:
        """Cut the next ``times`` streams (:meth:`FakeModel.interrupt`)."""
        self.model.interrupt(after_events=after_events, times=times)
        return self

    def inject(self: _F, fault: Fault) -> _F:
        """Fail the next call with ``fault`` (:meth:`FakeModel.inject`)."""
        self.model.inject(fault)
        return self

    def reset(self: _F) -> _F:
        """Start the fake over (:meth:`FakeModel.reset`)."""
        self.model.reset()
        return self

    def block(self: _F, *, after_events: int | None = None) -> _F:
        """Hold the next call until :meth:`release` (:meth:`FakeModel.block`)."""
        self.model.block(after_events=after_events)
        return self

    def release(self) -> None:
        """Let every held call continue (:meth:`FakeModel.release`)."""
        self.model.release()

    def wait_blocked(self, timeout: float | None = 5.0) -> bool:
        """Wait until a call is being held (:meth:`FakeModel.wait_blocked`)."""
        return self.model.wait_blocked(timeout)

    async def wait_blocked_async(self, timeout: float | None = 5.0) -> bool:
        """:meth:`wait_blocked` without blocking the event loop."""
        return await self.model.wait_blocked_async(timeout)

    @property
    def log(self) -> list[ModelCall]:
        """Every finished call, with its outcome (:attr:`FakeModel.log`)."""
        return self.model.log

    @property
    def calls(self) -> list[HTTPCall]:
        """Every request as it reached the fake (:attr:`FakeModel.calls`)."""
        return self.model.calls

    @property
    def requests(self) -> list[Request]:
        """Every request, parsed (:attr:`FakeModel.requests`)."""
        return self.model.requests

    @property
    def last_request(self) -> Request:
        """The most recent request (:attr:`FakeModel.last_request`)."""
        return self.model.last_request

    if not TYPE_CHECKING:  # for mypy an unknown name stays an error, not Any

        def __getattr__(self, name: str) -> Any:
            """Only for names the server lacks: one of the fake's is named as such."""
            model = self.__dict__.get("model")
            if model is not None and not name.startswith("__") and hasattr(model, name):
                raise AttributeError(
                    f"'FakeServer' object has no attribute {name!r}: it is the fake "
                    f"model's, use .model.{name} (the server passes on script, fail_with, "
                    "interrupt, inject, reset, block, release, wait_blocked, log, calls, "
                    "requests and last_request)",
                    name=name,
                    obj=self,
                )
            raise AttributeError(
                f"'FakeServer' object has no attribute {name!r}", name=name, obj=self
            )
