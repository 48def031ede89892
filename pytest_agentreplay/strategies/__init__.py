"""Hypothesis strategies for agent tests: replies, faults, fault plans, chunkings, SSE.

Each strategy is a lowercase function returning a ``SearchStrategy``, documented
by what it generates and how it shrinks, so a failing property is reported with
the smallest case that still fails:

* :func:`replies` — model replies (text, tool calls with JSON arguments — or,
  with ``tools=``, calls of your tools with arguments valid under their JSON
  schemas — thinking, usage, stop reasons); shrinks toward a short plain-text reply.
* :func:`faults` — one :class:`~..neutral.Fault` of the kinds
  asked for; shrinks toward the first kind, the first status, event 0.
* :func:`fault_plans` — which calls of a run fail and how
  (:class:`~..neutral.FaultPlan`); shrinks to the fewest
  calls, the earliest cut, the simplest fault and the simplest reply; a list of
  replies pins the conversation shape while the faults vary. Apply a
  plan in one line: ``plan.apply(fake_model)`` or ``plan.apply(agentreplay)``.
* :func:`chunkings` — ways to cut a byte stream into network chunks, inside
  CRLF and inside multi-byte UTF-8 (:class:`Chunking`, a chunker the fakes and
  cassettes accept); shrinks toward the whole body in one chunk.
* :func:`sse_streams` — SSE bodies with the events a spec-exact decoder
  dispatches from them (:class:`SSEStream`).

Importing hypothesis registers the ``agentreplay-ci`` and ``agentreplay-dev``
profiles (see :func:`register_profiles`). The names load on first use: the
hypothesis entry point reaches :mod:`.profile` without importing any strategy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..neutral import FaultPlan
    from ..transport.chunking import Chunking
    from .chunking import chunkings
    from .plans import DEFAULT_FAULT_KINDS, DEFAULT_STATUSES, fault_plans, faults
    from .profile import CI_PROFILE, DEV_PROFILE, register_profiles
    from .reply import json_objects, replies
    from .sse import SSEStream, sse_streams

__all__ = [
    "CI_PROFILE",
    "DEFAULT_FAULT_KINDS",
    "DEFAULT_STATUSES",
    "DEV_PROFILE",
    "Chunking",
    "FaultPlan",
    "SSEStream",
    "chunkings",
    "fault_plans",
    "faults",
    "json_objects",
    "register_profiles",
    "replies",
    "sse_streams",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".profile": ("CI_PROFILE", "DEV_PROFILE", "register_profiles"),
            ".plans": ("DEFAULT_FAULT_KINDS", "DEFAULT_STATUSES", "fault_plans", "faults"),
            ".reply": ("json_objects", "replies"),
            ".chunking": ("chunkings",),
            ".sse": ("SSEStream", "sse_streams"),
            "..transport.chunking": ("Chunking",),
            "..neutral": ("FaultPlan",),
        },
    )
