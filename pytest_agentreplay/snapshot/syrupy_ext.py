"""The syrupy extension itself; imported by the snapshot package only when it is used."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, ClassVar

from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

from ..runlog.masking import CallsView, IdMask
from .views import snapshot_view

__all__ = ["AgentReplaySnapshotExtension"]


def _ordered(value: Any) -> Any:
    """Dicts as ``OrderedDict``: syrupy's JSON extension sorts plain dicts' keys,
    but a run-log entry reads best in its own order (event first, time last)."""
    if isinstance(value, dict):
        return OrderedDict((k, _ordered(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


class AgentReplaySnapshotExtension(JSONSnapshotExtension):
    """A syrupy extension for run logs, cassettes and agent state: one JSON file per
    snapshot, holding :func:`~.snapshot_view` of the
    data (ids, timestamps, durations and request ids masked).

    Use it with ``snapshot.use_extension(AgentReplaySnapshotExtension)``. syrupy's
    own ``exclude=``, ``include=`` and ``matcher=`` apply to the masked view.
    Subclass it to change how run logs are shown: ``calls`` (``"brief"``,
    ``"full"`` or ``"none"``) and ``transport`` (``False`` drops what depends on
    streaming or not) are passed to
    :meth:`~..runlog.RunLog.normalized`; ``ids`` (an :class:`~..runlog.IdMask`)
    masks the application's own ids.
    """

    calls: ClassVar[CallsView] = "brief"
    transport: ClassVar[bool] = True
    ids: ClassVar[IdMask | None] = None

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        view = _ordered(
            snapshot_view(data, calls=self.calls, transport=self.transport, ids=self.ids)
        )
        return super().serialize(view, exclude=exclude, include=include, matcher=matcher)
