"""The plugin's two kinds of settings: for the session, and for one test.

:class:`AgentReplaySettings` is the session's: the ``pytest_agentreplay_configure``
hook (:mod:`pytest_agentreplay.hooks`) changes it once, at configure time, to add
scrubbing rules, matchers and defaults. :class:`TestSettings` is what one test
resolves to: the command line over the marker, the marker over the
``agentreplay_config`` fixture, that over the ini file.

Marker arguments (and the fixture's keys, which are the same) are validated when
the test is set up, with a ``UsageError`` that names the test and the bad
keyword, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from .options import RECORD_MODES
from .vcrpy import VCRPY_KEYS, VcrOptions, record_mode_value, split

if TYPE_CHECKING:
    from ..cassettes.cassette import Interaction, RecordedRequest

__all__ = [
    "MARKER_KEYS",
    "AgentReplaySettings",
    "TestSettings",
    "check_session_settings",
    "match_on_for",
    "more_match_on_for",
    "resolve",
]

MARKER_KEYS = frozenset(
    {
        "cassette",
        "record_mode",
        "match_on",
        "allow_hosts",
        "strict",
        "block_loopback",
        "guard_subprocesses",
        "allow_incomplete",
        "pace",
    }
)


@dataclass
class AgentReplaySettings:
    """Session-wide settings the ``pytest_agentreplay_configure`` hook may change.

    ``redact_headers`` / ``redact_query_params`` / ``redact_body_keys`` extend the
    default scrubbing rules; ``scrubbers`` run after them on every interaction
    written; ``matchers`` add named key parts usable in ``match_on``
    (a matcher maps a recorded request to a hashable value); ``match_on`` is the
    default for tests whose marker does not set one; ``pace`` replays streams at
    their recorded timing times ``pace`` (``None``: as fast as read);
    ``chunking`` re-chunks replayed streams; ``max_body_bytes`` caps recording.
    """

    redact_headers: set[str] = field(default_factory=set)
    redact_query_params: set[str] = field(default_factory=set)
    redact_body_keys: set[str] = field(default_factory=set)
    scrubbers: list[Callable[[Interaction], Interaction]] = field(default_factory=list)
    matchers: dict[str, Callable[[RecordedRequest], Any]] = field(default_factory=dict)
    match_on: tuple[str, ...] | None = None
    pace: float | None = None
    chunking: Any = "event"
    max_body_bytes: int = 64 * 1024 * 1024
    save_on_failure: bool = False


@dataclass(frozen=True)
class TestSettings:
    """What the plugin does for one test (see :func:`resolve`)."""

    __test__ = False  # a plain class, not a test class to collect

    record_mode: str = "none"
    cassette: str | None = None
    match_on: tuple[str, ...] | None = None
    allow_hosts: tuple[str, ...] = ()
    strict: bool = False
    block_loopback: bool = False
    guard_subprocesses: bool = True
    allow_incomplete: bool = False
    pace: float | None = None
    vcrpy: VcrOptions | None = None
    """vcrpy's own keys, as a pytest-recording ``vcr_config`` sets them (:mod:`.vcrpy.config`)."""


def _check_keys(keys: Iterable[str], item: pytest.Item, what: str) -> None:
    unknown = ", ".join(sorted(set(keys) - MARKER_KEYS - VCRPY_KEYS))
    if unknown:
        known = ", ".join(sorted(MARKER_KEYS))
        raise pytest.UsageError(
            f"{item.nodeid}: unknown {what} {unknown}; known: {known} (and vcrpy's VCR() "
            f"options, see docs/migrating.md)"
        )


def _marker_kwargs(item: pytest.Item, defaults: dict[str, Any]) -> dict[str, Any]:
    """The ``agentreplay_config`` fixture's keys, overridden by the markers' keywords."""
    _check_keys(defaults, item, "agentreplay_config key(s)")
    merged: dict[str, Any] = dict(defaults)
    # Closest marker wins: iter_markers yields the function's first, then class, module.
    for marker in reversed(list(item.iter_markers("agentreplay"))):
        if marker.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.agentreplay takes keyword arguments only "
                f"({', '.join(sorted(MARKER_KEYS))}), got positional {marker.args!r}"
            )
        _check_keys(marker.kwargs, item, "@pytest.mark.agentreplay argument(s)")
        # ``record_mode=None`` (the documented default) means "not set here": it must not
        # hide the value of a class or module marker or of agentreplay_config.
        merged.update((k, v) for k, v in marker.kwargs.items() if v is not None)
    return merged


def _hosts(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise pytest.UsageError(
        f"{where}: allow_hosts must be a host or a list of hosts, got {value!r}"
    )


def resolve(item: pytest.Item, defaults: dict[str, Any] | None = None) -> TestSettings:
    """The settings of ``item``: CLI > marker > ``defaults`` (the ``agentreplay_config``
    fixture) > ini > built-in defaults."""
    config = item.config
    marker, vcrpy = split(_marker_kwargs(item, defaults or {}), item.nodeid)
    mode = record_mode_value(
        config.getoption("agentreplay_record_mode")
        or marker.get("record_mode")
        or config.getini("agentreplay_record_mode")
        or "none"
    )
    if mode not in RECORD_MODES:
        raise pytest.UsageError(
            f"{item.nodeid}: record_mode {mode!r} is not one of {', '.join(RECORD_MODES)}"
        )
    hosts = (
        *config.getini("agentreplay_allow_hosts"),
        *_hosts(marker.get("allow_hosts", ()), item.nodeid),
        *(vcrpy.allow_hosts if vcrpy is not None else ()),  # vcrpy lets ignored hosts go live
    )
    strict = config.getoption("agentreplay_strict") or bool(marker.get("strict", False))
    block_loopback = bool(marker.get("block_loopback", config.getini("agentreplay_block_loopback")))
    guard = marker.get("guard_subprocesses", config.getini("agentreplay_guard_subprocesses"))
    return TestSettings(
        record_mode=mode,
        cassette=_optional_str(marker.get("cassette"), "cassette", item.nodeid),
        match_on=_match_on(marker.get("match_on"), item.nodeid),
        allow_hosts=hosts,
        strict=strict,
        block_loopback=block_loopback,
        guard_subprocesses=bool(guard),
        allow_incomplete=bool(marker.get("allow_incomplete", False)),
        pace=_pace(marker.get("pace"), item.nodeid),
        vcrpy=vcrpy,
    )


def _optional_str(value: Any, name: str, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "__fspath__"):
        return str(value)
    raise pytest.UsageError(f"{where}: {name} must be a path string, got {value!r}")


def _match_on(value: Any, where: str) -> tuple[Any, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise pytest.UsageError(
            f"{where}: match_on must be a list of matcher names or callables, got {value!r}"
        )
    # vcrpy's "url" is its old name for "uri".
    return tuple("uri" if v == "url" else v for v in value)


def _pace(value: Any, where: str) -> float | None:
    """A finite number >= 0 (issue 27: ``nan`` and ``inf`` passed, and ``inf`` ended in
    an ``OverflowError`` deep in a replayed stream)."""
    if value is None:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value < 0:
        raise pytest.UsageError(
            f"{where}: pace must be a finite number >= 0 (1.0 replays at the recorded "
            f"speed), got {value!r}"
        )
    return float(value)


_HOOK = "pytest_agentreplay_configure"


def check_session_settings(settings: AgentReplaySettings) -> None:
    """What the configure hook left, checked at once, as marker arguments are: a
    ``UsageError`` naming the setting, never an INTERNALERROR later in a test (issue 27:
    ``settings.redact_headers.add(None)`` was one)."""
    for name in ("redact_headers", "redact_query_params", "redact_body_keys"):
        _names(getattr(settings, name), f"settings.{name}")
    _callables(settings.scrubbers, "settings.scrubbers", "a scrubber (interaction -> interaction)")
    matchers = settings.matchers
    if not isinstance(matchers, dict) or not all(isinstance(k, str) for k in matchers):
        raise pytest.UsageError(f"{_HOOK}: settings.matchers must map names (str) to matchers")
    _callables(matchers.values(), "settings.matchers", "a matcher (request -> value)")
    if settings.match_on is not None:
        settings.match_on = _match_on(settings.match_on, f"{_HOOK}: settings.match_on")
    settings.pace = _pace(settings.pace, f"{_HOOK}: settings")
    size = settings.max_body_bytes
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise pytest.UsageError(
            f"{_HOOK}: settings.max_body_bytes must be a number of bytes > 0, got {size!r}"
        )
    if not isinstance(settings.save_on_failure, bool):
        raise pytest.UsageError(f"{_HOOK}: settings.save_on_failure must be True or False")
    if settings.chunking != "event":  # the default needs no check, nor the transport
        from ..transport.chunking import resolve_chunking  # noqa: PLC0415 - see above

        try:
            resolve_chunking(settings.chunking)
        except ValueError as exc:
            raise pytest.UsageError(f"{_HOOK}: settings.chunking: {exc}") from None


def _names(value: Any, what: str) -> None:
    items = [value] if isinstance(value, (str, bytes)) else value
    try:
        bad = [item for item in items if not isinstance(item, str) or not item.strip()]
    except TypeError:
        raise pytest.UsageError(f"{_HOOK}: {what} must be a set of names, got {value!r}") from None
    if isinstance(value, (str, bytes)) or bad:
        shown = repr(value) if isinstance(value, (str, bytes)) else repr(bad[0])
        raise pytest.UsageError(
            f"{_HOOK}: {what} must hold names (non-empty str), got {shown}; e.g. "
            f"{what}.add('x-internal-token')"
        )


def _callables(values: Any, what: str, kind: str) -> None:
    try:
        bad = [value for value in values if not callable(value)]
    except TypeError:
        raise pytest.UsageError(f"{_HOOK}: {what} must be a list of callables") from None
    if bad:
        raise pytest.UsageError(f"{_HOOK}: {what} holds {bad[0]!r}, not {kind}")


def match_on_for(settings: TestSettings, session: AgentReplaySettings) -> tuple[Any, ...] | None:
    """The test's ``match_on`` with names of custom matchers (from the configure hook)
    replaced by the matchers themselves."""
    names = settings.match_on or session.match_on
    if names is None:
        return None
    return _matchers(names, session)


def more_match_on_for(settings: TestSettings, session: AgentReplaySettings) -> tuple[Any, ...]:
    """vcrpy's ``additional_matchers``: parts matched besides the test's ``match_on``
    (or the cassette's default), custom matcher names replaced by the matchers."""
    names = () if settings.vcrpy is None else settings.vcrpy.additional_matchers
    return _matchers(names, session)


def _matchers(names: Iterable[Any], session: AgentReplaySettings) -> tuple[Any, ...]:
    return tuple(session.matchers.get(n, n) if isinstance(n, str) else n for n in names)
