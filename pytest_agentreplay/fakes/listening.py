"""A fake model on a real port: for child processes and agents in any language.

:meth:`FakeModel.listen() <..fakes.FakeModel.listen>` (and the ``model_server``
fixture) serve a fake through a :class:`~..transport.server.ModelServer`: the same
script, faults, holds and call log as in-process, over a loopback HTTP/1.1
socket whose URL goes into a child's ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``
(:attr:`~..transport.server.ModelServer.env`).
"""

from __future__ import annotations

from types import TracebackType
from typing import Generic, Protocol, TypeVar

from ..transport.router import Handler
from ..transport.server import ModelServer

__all__ = ["FakeServer", "Served"]


class Served(Handler, Protocol):
    """What a :class:`FakeServer` needs of the fake it serves: to answer requests, and
    to be checked when the server closes. Named here rather than importing
    :class:`~.fake_model.FakeModel`, which returns a server from ``listen()``: the two
    modules would import each other."""

    def verify(self) -> None:
        """Fail the test for what went wrong (a call past the script, replies unused)."""


FakeT = TypeVar("FakeT", bound=Served)


class FakeServer(ModelServer, Generic[FakeT]):
    """A :class:`~..fakes.FakeModel` served on a loopback port.

    ``url`` and ``env`` point a child at it; ``model`` is the fake (its ``log``,
    ``calls``, ``release()``...). As a context manager it closes the server at the
    end of the block and then checks the fake as ``with fake:`` does (a call after
    the script ran out, replies never requested); a call still held when it closes
    is hung up on and logged ``cancelled``.
    """

    def __init__(self, model: FakeT, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(model, host=host, port=port)
        self.model: FakeT = model

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        self.close()
        if exc_type is None:
            self.model.verify()
