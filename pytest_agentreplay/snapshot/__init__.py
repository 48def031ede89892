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

from typing import TYPE_CHECKING, Any

from .views import VOLATILE_HEADERS, snapshot_view

if TYPE_CHECKING:
    from .syrupy_ext import AgentReplaySnapshotExtension

__all__ = ["VOLATILE_HEADERS", "AgentReplaySnapshotExtension", "snapshot_view"]


def __getattr__(name: str) -> Any:
    if name != "AgentReplaySnapshotExtension":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from .syrupy_ext import AgentReplaySnapshotExtension  # noqa: PLC0415
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
        if exc.name != "syrupy":
            raise
        raise ImportError(
            "AgentReplaySnapshotExtension needs syrupy: "
            "pip install 'pytest-agentreplay-plugin[snapshot]'"
        ) from exc
    globals()[name] = AgentReplaySnapshotExtension
    return AgentReplaySnapshotExtension
