"""vcrpy's recording filters, applied to this plugin's interactions with vcrpy's semantics.

A pytest-recording suite's ``vcr_config`` (renamed ``agentreplay_config``) almost
always sets ``filter_headers``, ``filter_query_parameters``,
``filter_post_data_parameters``, ``before_record_request`` or
``before_record_response`` (issue 20, item 16). Ignoring one would write what the
user asked to filter — a secret on disk — so each is honoured here, by vcrpy's own
filter functions on vcrpy's own objects, so that a ``before_record_*`` callable sees
what it saw under vcrpy (a ``vcr.request.Request``; a response dict ``{"status":
{"code", "message"}, "headers": {name: [values]}, "body": {"string": bytes}}``).

As in vcrpy, the request filters run on every live request before it is matched
and on every interaction before it is stored; a request they turn into ``None``
(``ignore_hosts``, ``ignore_localhost``, a ``before_record_request`` returning
``None``) is neither matched nor recorded. ``before_record_response`` runs on what
is stored only; ``None`` skips the interaction. The plugin's own scrubbing runs on
the result, so a filter can add nothing secret to a cassette.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...cassette import Interaction, RecordedRequest, RecordedResponse
from ...fields import join_headers
from ...from_wire import response_from_wire
from .errors import VcrFilterError
from .objects import response_parts, vcr_request, vcr_request_object, vcr_response

__all__ = ["LOOPBACK_NAMES", "VcrFilters"]

LOOPBACK_NAMES = ("localhost", "0.0.0.0", "127.0.0.1", "::1")  # vcrpy's list
"""The hosts vcrpy's ``ignore_localhost`` ignores."""

Filter = Callable[[Any], Any]


class VcrFilters:
    """The request and response filters of one test's vcrpy options.

    ``options`` holds vcrpy's keys as ``VCR()`` takes them (checked by the caller):
    ``filter_headers``, ``filter_query_parameters``, ``filter_post_data_parameters``,
    ``filter_nested_post_data_parameters``, ``ignore_hosts``, ``ignore_localhost``,
    ``before_record_request``, ``before_record_response``.
    """

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._request_chain = _request_chain(options)
        self._response_chain = list(_callables(options.get("before_record_response")))

    def __bool__(self) -> bool:
        return bool(self._request_chain or self._response_chain)

    def request(self, recorded: RecordedRequest) -> RecordedRequest | None:
        """``recorded`` as vcrpy's request filters leave it; ``None``: not matched nor
        recorded. The same object when they changed nothing."""
        if not self._request_chain:
            return recorded
        original = vcr_request_object(recorded)
        filtered = _run(self._request_chain, copy.deepcopy(original))
        if filtered is None:
            return None
        if _request_state(filtered) == _request_state(original):
            return recorded
        return vcr_request(filtered)

    def interaction(self, interaction: Interaction) -> Interaction | None:
        """``interaction`` as vcrpy would have stored it; ``None``: not stored."""
        request = self.request(interaction.request)
        if request is None:
            return None
        response: RecordedResponse | None = interaction.response
        if self._response_chain:
            response = _filter_response(self._response_chain, interaction)
        if response is None:
            return None
        if request is interaction.request and response is interaction.response:
            return interaction
        return interaction.replace(request=request, response=response)


def _request_chain(options: Mapping[str, Any]) -> list[Filter]:
    """vcrpy's ``VCR._build_before_record_request``, in the same order."""
    from vcr import filters  # noqa: PLC0415 - vcrpy is optional

    chain: list[Filter] = []
    if options.get("filter_headers"):
        pairs = _replacements(options["filter_headers"])
        chain.append(functools.partial(filters.replace_headers, replacements=pairs))
    if options.get("filter_query_parameters"):
        pairs = _replacements(options["filter_query_parameters"])
        chain.append(functools.partial(filters.replace_query_parameters, replacements=pairs))
    if options.get("filter_post_data_parameters"):
        chain.append(_body_filter(options))
    hosts = set(options.get("ignore_hosts") or ())
    if options.get("ignore_localhost"):
        hosts.update(LOOPBACK_NAMES)
    if hosts:
        chain.append(functools.partial(_unless_ignored, hosts=frozenset(hosts)))
    before = options.get("before_record_request", options.get("before_record"))
    chain.extend(_callables(before))
    return chain


def _body_filter(options: Mapping[str, Any]) -> Filter:
    from vcr import filters  # noqa: PLC0415 - vcrpy is optional

    pairs = _replacements(options["filter_post_data_parameters"])
    nested = bool(options.get("filter_nested_post_data_parameters"))
    # ``recursive`` (and multipart bodies) since vcrpy 9.4.2, the floor the options check
    return functools.partial(filters.replace_body_parameters, replacements=pairs, recursive=nested)


def _replacements(given: Iterable[Any]) -> list[tuple[str, Any]]:
    """vcrpy's rule: a name alone means ``(name, None)``, removed."""
    return [item if isinstance(item, tuple) else (item, None) for item in given]


def _callables(given: Any) -> Iterable[Filter]:
    if given is None:
        return ()
    return tuple(given) if isinstance(given, Iterable) else (given,)


def _unless_ignored(request: Any, hosts: frozenset[str | re.Pattern[str]]) -> Any:
    """vcrpy's rule: host names compared exactly, compiled patterns matching the whole."""
    host = request.host
    ignored = any(h == host if isinstance(h, str) else h.fullmatch(host) for h in hosts)
    return None if ignored else request


def _run(chain: list[Filter], value: Any) -> Any:
    for function in chain:
        if value is None:
            break
        value = function(value)
    return value


def _request_state(request: Any) -> tuple[Any, ...]:
    return (request.method, request.uri, request.body, sorted(dict(request.headers).items()))


def _filter_response(chain: list[Filter], interaction: Interaction) -> RecordedResponse | None:
    """The response after ``before_record_response``: ours unchanged where it left the
    dict unchanged, so a stream keeps its events and their timing unless the body
    was edited."""
    from vcr.util import CaseInsensitiveDict  # noqa: PLC0415 - vcrpy is optional

    original = vcr_response(interaction.response)
    given = copy.deepcopy(original)
    # Header names keep the server's case under vcrpy (requests, urllib3): a filter doing
    # ``del response["headers"]["Set-Cookie"]`` must work on our lower-cased names too.
    given["headers"] = CaseInsensitiveDict(given["headers"])
    result = _run(chain, given)
    if result is None:
        return None
    status, headers, body = _response_parts(result)
    response = interaction.response
    if body != original["body"]["string"]:
        return response_from_wire(status, headers, body)
    if status == response.status and join_headers(headers) == response.headers:
        return response
    return response.replace(status=status, headers=join_headers(headers))


def _response_parts(result: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    try:
        return response_parts(result)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise VcrFilterError(
            "before_record_response must return vcrpy's response dict ({'status': {'code': "
            "...}, 'headers': {...}, 'body': {'string': ...}}) or None to skip the "
            f"interaction; got {type(result).__name__} ({exc!r})"
        ) from None
