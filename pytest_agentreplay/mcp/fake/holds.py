"""Where a fake tool server's calls wait: until ``release()``, or until the call ends.

A call held by ``block()`` waits before any byte of its response; a
``ToolFault.stall()`` waits after the response began. Each held call has a gate of
its own, so that a ``notifications/cancelled`` for one call lets that call go
(answered with nothing, as a server that stopped the work) while the others stay
held; ``release()`` lets them all go. ``holding`` is set as soon as a call waits,
which is what ``wait_blocked()`` waits for.
"""

from __future__ import annotations

import threading

from ...transport.gate import Gate, wait_event_async

__all__ = ["ToolHolds"]


class ToolHolds:
    """The holds of one fake tool server; see the module docs."""

    def __init__(self) -> None:
        self.holding = threading.Event()
        self._lock = threading.Lock()
        self._blocks: list[str | None] = []
        self._gates: dict[int, Gate] = {}

    def block(self, tool: str | None) -> None:
        """Hold the next call (of ``tool``, when named) before any byte."""
        with self._lock:
            self._blocks.append(tool)

    def take_block(self, tool: str) -> bool:
        """Whether a call of ``tool``, arriving now, is to be held (once per block())."""
        with self._lock:
            for position, wanted in enumerate(self._blocks):
                if wanted in (None, tool):
                    del self._blocks[position]
                    return True
        return False

    def gate(self, index: int) -> Gate:
        """The gate call ``index`` waits at."""
        with self._lock:
            gate = self._gates.get(index)
            if gate is None:
                gate = self._gates[index] = Gate(on_reach=self.holding.set)
        return gate

    def let_go(self, index: int) -> None:
        """Let call ``index`` go (it was cancelled); the others stay held."""
        with self._lock:
            gate = self._gates.pop(index, None)
            if not any(g.reached for g in self._gates.values()):
                self.holding.clear()
        if gate is not None:
            gate.open()

    def release(self) -> None:
        """Let every held call go, and forget blocks no call took."""
        with self._lock:
            gates, self._gates = list(self._gates.values()), {}
            self._blocks.clear()
            self.holding.clear()
        for gate in gates:
            gate.open()

    def held(self) -> list[int]:
        """The calls waiting now."""
        with self._lock:
            return sorted(i for i, g in self._gates.items() if g.reached)

    def wait(self, timeout: float | None) -> bool:
        """Wait until a call is held; ``False`` on timeout."""
        return self.holding.wait(timeout)

    async def wait_async(self, timeout: float | None) -> bool:
        """:meth:`wait` without blocking the event loop."""
        return await wait_event_async(self.holding, timeout)
