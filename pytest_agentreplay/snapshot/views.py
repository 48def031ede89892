"""What a snapshot stores: :func:`snapshot_view` turns run logs, fakes, cassette
handles, cassettes and any agent state into JSON with the volatile values masked.

The rules are those of :func:`pytest_agentreplay.runlog.masking`, plus the
cassette fields in :data:`VOLATILE_HEADERS` and the events' arrival times. Pure:
syrupy is not imported here (see :mod:`.syrupy_ext`).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from .. import jsonparse
from ..runlog.masking import CallsView, IdMask, normalize
from ..runlog.run_log import RunLog

__all__ = ["VOLATILE_HEADERS", "snapshot_view"]

VOLATILE_HEADERS: dict[str, str] = {
    "date": "<time>",
    "request-id": "<request-id>",
    "x-request-id": "<request-id>",
    "cf-ray": "<request-id>",
    "openai-processing-ms": "<duration>",
    "x-envoy-upstream-service-time": "<duration>",
    "user-agent": "<client>",
    "x-stainless-os": "<client>",
    "x-stainless-arch": "<client>",
    "x-stainless-runtime": "<client>",
    "x-stainless-runtime-version": "<client>",
    "x-stainless-package-version": "<client>",
    "x-stainless-lang": "<client>",
    "x-stainless-read-timeout": "<client>",
    "x-stainless-timeout": "<client>",
}
"""Header values that change from run to run or machine to machine, and their mask.
``x-stainless-retry-count`` is kept: it says which attempt a request was."""


def snapshot_view(
    data: Any, *, calls: CallsView = "brief", transport: bool = True, ids: IdMask | None = None
) -> Any:
    """What a snapshot of ``data`` stores: JSON with the volatile values masked.

    * a :class:`~..runlog.RunLog` → its
      :meth:`~..runlog.RunLog.normalized` view with ``calls``
      (default ``"brief"``: each model call as how it ended, its conversation one
      line a message, and its reply) and ``transport``;
    * a :class:`~..fakes.FakeModel` or the ``agentreplay``
      handle → the run log of the calls it served;
    * a :class:`~..cassettes.cassette.Cassette`, an interaction, a
      list of interactions, or the :class:`~pathlib.Path` of a cassette file →
      its interactions, with volatile headers masked, arrival times masked and
      each event's JSON ``data`` shown parsed;
    * anything else (persisted rows, pydantic models, dataclasses, dicts) →
      :func:`..runlog.normalize`.

    ``ids`` (an :class:`~..runlog.IdMask`) masks the application's own ids too.
    """
    log = _as_run_log(data)
    if log is not None:
        return log.normalized(calls=calls, transport=transport, ids=ids)
    interactions = _as_interactions(data)
    if interactions is not None:
        return normalize([_interaction_view(i) for i in interactions], ids=ids)
    return normalize(data, ids=ids)


def _as_run_log(data: Any) -> RunLog | None:
    if isinstance(data, RunLog):
        return data
    fakes = sys.modules.get("pytest_agentreplay.fakes.fake_model")
    handle = sys.modules.get("pytest_agentreplay.cassettes.handle")
    if fakes is not None and isinstance(data, fakes.FakeModel):
        return RunLog.from_fake(data)
    if handle is not None and isinstance(data, handle.AgentReplay):
        return RunLog.from_cassette(data)
    return None


def _as_interactions(data: Any) -> list[dict[str, Any]] | None:
    if isinstance(data, Path):
        from ..cassettes.io import load  # noqa: PLC0415 - YAML is loaded only when asked for

        return _dump_all(load(data).interactions)
    model = sys.modules.get("pytest_agentreplay.cassettes.cassette")
    if model is None:
        return None
    if isinstance(data, model.Cassette):
        return _dump_all(data.interactions)
    if isinstance(data, model.Interaction):
        return _dump_all([data])
    if (
        isinstance(data, (list, tuple))
        and data
        and all(isinstance(i, model.Interaction) for i in data)
    ):
        return _dump_all(data)
    return None


def _dump_all(interactions: Any) -> list[dict[str, Any]]:
    return [i.to_data() for i in interactions]


def _interaction_view(interaction: dict[str, Any]) -> dict[str, Any]:
    view = dict(interaction)
    for side in ("request", "response"):
        part = dict(view.get(side, {}))
        if "headers" in part:
            part["headers"] = _headers_view(part["headers"])
        if part.get("events"):
            part["events"] = [_event_view(e) for e in part["events"]]
        view[side] = part
    return view


def _headers_view(headers: dict[str, str]) -> dict[str, str]:
    return {name: VOLATILE_HEADERS.get(name.lower(), value) for name, value in headers.items()}


def _event_view(event: dict[str, Any]) -> dict[str, Any]:
    view = dict(event)
    if "t" in view:
        view["t"] = "<duration>"
    data = view.get("data")
    if isinstance(data, str) and data[:1] in ("{", "["):
        with contextlib.suppress(ValueError):
            view["data"] = jsonparse.loads(data)
    return view
