"""Snapshots of run logs, cassettes and agent state, with volatile values masked.

:class:`AgentReplaySnapshotExtension` is a syrupy extension (a
``JSONSnapshotExtension``: one readable ``.json`` file per snapshot, under
``__snapshots__/<test module>/``). It stores :func:`snapshot_view` of what it is
given, so two runs of the same scenario give the same file although their ids
and clocks differ::

    @pytest.fixture
    def snapshot(snapshot):
        return snapshot.use_extension(AgentReplaySnapshotExtension)

    def test_weather_turn(snapshot, scripted_model):
        ...
        assert run_log == snapshot

What is masked: the ids agents and providers generate (step, turn, session,
tool-call and intent ids become ordinals such as ``<step-1>``, provider ids
``<id-1>``, UUIDs ``<uuid-1>`` — numbered by first appearance, so an id that
recurs is still seen to recur), timestamps (``<time>``), durations
(``<duration>``), request ids (``<request-id>``) and the client-environment
headers an SDK sends (``<client>``: user agent, OS, runtime version). The rules
are those of :func:`..runlog.normalize`, plus the cassette
fields listed in :data:`VOLATILE_HEADERS` and the events' arrival times.

syrupy is optional (``pip install pytest-agentreplay-plugin[snapshot]``): this module
imports it only when the extension class is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .syrupy_ext import AgentReplaySnapshotExtension
    from .views import VOLATILE_HEADERS, snapshot_view

__all__ = ["VOLATILE_HEADERS", "AgentReplaySnapshotExtension", "snapshot_view"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".syrupy_ext": ("AgentReplaySnapshotExtension",),
            ".views": ("VOLATILE_HEADERS", "snapshot_view"),
        },
        requires={"syrupy": "pytest-agentreplay-plugin[snapshot]"},
    )
