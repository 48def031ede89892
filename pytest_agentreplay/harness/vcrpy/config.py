"""vcrpy's ``VCR()`` keys in ``agentreplay_config`` and the marker: honoured or refused.

After the documented renames a pytest-recording suite's ``vcr_config`` becomes
``agentreplay_config`` with its keys unchanged, and nearly every real one sets
``filter_headers``, ``filter_query_parameters``, ``decode_compressed_response`` or a
``before_record_response`` (issue 20, item 16). Each key vcrpy accepts is either
mapped to what does the same here, or refused with what to do instead — never
ignored: an ignored ``filter_headers`` writes the header the user asked to filter.

:func:`split` takes the vcrpy keys out of a test's merged configuration and checks
them; :class:`VcrOptions` is what they resolve to.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

__all__ = ["FILTER_KEYS", "REFUSED", "VCRPY_KEYS", "VcrOptions", "record_mode_value", "split"]

FILTER_KEYS = frozenset(
    {
        "filter_headers",
        "filter_query_parameters",
        "filter_post_data_parameters",
        "filter_nested_post_data_parameters",
        "before_record_request",
        "before_record",
        "before_record_response",
        "ignore_hosts",
        "ignore_localhost",
    }
)
"""Keys applied by vcrpy's own filters (:mod:`...cassettes.formats.vcrpy.filters`)."""

_BOOLS = frozenset({"decode_compressed_response", "allow_playback_repeats", "record_on_exception"})
_FUNCTIONS = frozenset({"func_path_generator", "path_transformer"})
_OTHERS = _BOOLS | _FUNCTIONS | {"serializer", "cassette_library_dir", "additional_matchers"}
"""Keys mapped onto the session (:class:`VcrOptions`). ``decode_compressed_response``
is ours already (bodies are always stored decoded); pytest-recording always names the
cassette, so vcrpy never calls a ``func_path_generator``. ``additional_matchers`` (a
``use_cassette`` key, which pytest-recording passes on from ``vcr_config`` and the
marker) adds parts to the test's ``match_on``, or to the cassette's default one."""

REFUSED: dict[str, str] = {
    "custom_patches": "httpx and httpx2 are always intercepted, and vcrpy's standard patches "
    "serve requests, urllib3 and aiohttp (ini agentreplay_vcr); other clients are not "
    "patched here",
    "skip_patchers": "set the ini key agentreplay_vcr = never to keep vcrpy out",
    "inject_cassette": "take the vcr or agentreplay fixture as an argument instead",
    "drop_unused_requests": "re-record with --agentreplay-record-mode=rewrite to drop unused "
    "interactions; --agentreplay-strict fails a test that leaves some unplayed",
    "filter_sensitive_data": "add a scrubber in the pytest_agentreplay_configure hook "
    "(settings.scrubbers), or redact_headers / redact_body_keys",
    "before_save_interaction": "add a scrubber in the pytest_agentreplay_configure hook "
    "(settings.scrubbers)",
    "after_load_interaction": "there is no equivalent: edit the cassette, or match with match_on",
}
"""vcrpy keys this plugin cannot honour, and what to do instead."""

_JSON = (
    "cassettes are written as YAML and vcrpy's JSON files are read as they are: drop "
    "serializer, and pass cassette='name.json' to replay a JSON file"
)

VCRPY_KEYS = FILTER_KEYS | _OTHERS | frozenset(REFUSED)
"""Every ``VCR()`` key that is not also one of the marker's own."""

_RECORD_MODE_ALIASES = {"any": "new_episodes"}  # vcrpy's undocumented ANY records as this


@dataclass(frozen=True)
class VcrOptions:
    """What a test's vcrpy keys resolve to: the filters' options (as ``VCR()`` takes
    them) and the hosts ``ignore_hosts`` lets through live."""

    filters: Mapping[str, Any] = field(default_factory=dict)
    allow_hosts: tuple[str, ...] = ()
    repeats: bool = False
    """``allow_playback_repeats``: a request plays its first match, played or not."""
    record_on_exception: bool | None = None
    """``True``: a failing test writes what it recorded; ``False``: never."""
    library_dir: str | None = None
    """``cassette_library_dir``: the folder of the test's default cassette."""
    path_transformer: Callable[[str], Any] | None = None
    """Gives the default cassette's path from ``<folder>/<test name>`` (no suffix)."""
    additional_matchers: tuple[Any, ...] = ()
    """Parts matched besides ``match_on`` (or besides the cassette's default), as
    vcrpy's ``additional_matchers``: part names, custom matcher names or functions."""


def record_mode_value(mode: Any) -> Any:
    """A record mode as a plain string: vcrpy's ``RecordMode.ONCE`` gives ``"once"``."""
    value = getattr(mode, "value", mode)
    return _RECORD_MODE_ALIASES.get(value, value) if isinstance(value, str) else mode


def split(merged: Mapping[str, Any], where: str) -> tuple[dict[str, Any], VcrOptions | None]:
    """``merged`` without its vcrpy keys, and what those resolve to (``None``: none set)."""
    ours = {k: v for k, v in merged.items() if k not in VCRPY_KEYS}
    given = {k: v for k, v in merged.items() if k in VCRPY_KEYS}
    if not given:
        return ours, None
    for key in sorted(given.keys() & REFUSED.keys()):
        raise pytest.UsageError(
            f"{where}: the vcrpy option {key} is not supported by "
            f"pytest-agentreplay: {REFUSED[key]} (see docs/migrating.md, Option mapping)."
        )
    for key in sorted(_OTHERS & given.keys()):
        _check_other(key, given[key], where)
    filters = {k: v for k, v in given.items() if k in FILTER_KEYS and v}
    _check_filters(filters, where)
    library = given.get("cassette_library_dir")
    return ours, VcrOptions(
        filters=filters,
        allow_hosts=tuple(h for h in filters.get("ignore_hosts", ()) if isinstance(h, str)),
        repeats=bool(given.get("allow_playback_repeats")),
        record_on_exception=given.get("record_on_exception"),
        library_dir=None if library is None else str(library),
        path_transformer=given.get("path_transformer"),
        additional_matchers=tuple(
            "uri" if m == "url" else m for m in given.get("additional_matchers") or ()
        ),
    )


def _check_other(key: str, value: Any, where: str) -> None:
    if value is None:
        return
    if key == "serializer":
        if value != "yaml":
            raise pytest.UsageError(f"{where}: serializer={value!r} is not supported: {_JSON}.")
        return
    if key == "additional_matchers":
        _check_matchers(value, where)
        return
    if key in _BOOLS:
        ok, what = isinstance(value, bool), "True or False"
    elif key in _FUNCTIONS:
        ok, what = callable(value), "a function"
    else:
        ok, what = isinstance(value, str) or hasattr(value, "__fspath__"), "a folder path"
    if not ok:
        raise pytest.UsageError(f"{where}: {key} must be {what}, got {value!r}")


def _check_matchers(value: Any, where: str) -> None:
    """vcrpy's shape: a list of matcher names (built-in or registered), here also
    functions of the request, as in ``match_on``."""
    items = _listed("additional_matchers", value, where, "of matcher names")
    for item in items:
        if not (isinstance(item, str) and item) and not callable(item):
            raise pytest.UsageError(
                f"{where}: additional_matchers takes match_on part names (method, scheme, "
                f"host, port, path, query, uri, headers, body, raw_body...), names from "
                f"settings.matchers, or functions of the request; got {item!r} in {value!r}"
            )


def _check_filters(filters: Mapping[str, Any], where: str) -> None:
    if not filters:
        return
    from ...cassettes.formats import vcrpy  # noqa: PLC0415 - only once a filter key is set

    if not vcrpy.available():
        raise pytest.UsageError(
            f"{where}: {', '.join(sorted(filters))} run(s) vcrpy's own filters, and vcrpy is "
            f"not installed: pip install 'pytest-agentreplay-plugin[vcr]' (the default "
            f"scrubbing needs nothing: add names with redact_headers / redact_query_params / "
            f"redact_body_keys in the pytest_agentreplay_configure hook)."
        )
    problem = vcrpy.too_old()
    if problem is not None:
        raise pytest.UsageError(f"{where}: {', '.join(sorted(filters))}: {problem}")
    for key in ("filter_headers", "filter_query_parameters", "filter_post_data_parameters"):
        if key in filters:
            _check_replacements(key, filters[key], where)
    for key in ("before_record_request", "before_record", "before_record_response"):
        if key in filters:
            _check_callables(key, filters[key], where)
    if "ignore_hosts" in filters:
        _check_hosts(filters["ignore_hosts"], where)


def _check_replacements(key: str, value: Any, where: str) -> None:
    """vcrpy's shape: names, or ``(name, replacement)`` tuples whose replacement is a
    string, ``None`` (removed) or a function ``(key, value, request) -> str | None``."""
    items = _listed(key, value, where)
    for item in items:
        name, replacement = item if isinstance(item, tuple) and len(item) == 2 else (item, None)
        ok_name = isinstance(name, str) and name
        ok_replacement = replacement is None or isinstance(replacement, str)
        ok_replacement = ok_replacement or callable(replacement)
        if not (ok_name and ok_replacement) or isinstance(item, list):
            raise pytest.UsageError(
                f"{where}: {key} takes names or (name, replacement) tuples (replacement: a "
                f"string, None to remove, or a function of key, value and request); got "
                f"{item!r} in {value!r}"
            )


def _listed(
    key: str, value: Any, where: str, of: str = "of names or (name, replacement) tuples"
) -> list[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise pytest.UsageError(
            f"{where}: {key} must be a list ({of}), got {value!r}; a single string would "
            f"be read as one name per character by vcrpy"
        )
    return list(value)


def _check_callables(key: str, value: Any, where: str) -> None:
    functions: Iterable[Any] = value if isinstance(value, Iterable) else (value,)
    for function in functions:
        if not callable(function):
            raise pytest.UsageError(
                f"{where}: {key} must be a function (or a list of functions) returning the "
                f"{'response' if 'response' in key else 'request'} to record, or None to "
                f"skip it; got {function!r}"
            )


def _check_hosts(value: Any, where: str) -> None:
    for host in _listed("ignore_hosts", value, where):
        if not isinstance(host, (str, re.Pattern)):
            raise pytest.UsageError(
                f"{where}: ignore_hosts takes host names (or compiled patterns), got {host!r}"
            )
