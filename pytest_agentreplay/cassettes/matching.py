"""Request matching: which recorded interaction answers a live request.

A request's **key** is the tuple of the parts named in ``match_on`` (default
:data:`MATCH_ON_DEFAULT`: method, host, path and the normalized body). An
:class:`Index` maps each key to the recorded interactions that have it, in
recorded order, so :meth:`Index.take` costs the same whatever the cassette's
size, and identical requests are served in the order they were recorded.

Built-in parts (:data:`MATCHERS`):

``method``
    upper-cased.
``scheme``, ``host``, ``port``
    the host is lower-cased and has no port: a local test server on a fresh
    port each run still matches; ``port`` fills in the scheme's default, so
    ``:443`` equals no port.
``path``
    as sent. A trailing slash is significant: the providers route
    ``/v1/messages/`` elsewhere.
``query``
    parameters, in any order. Live requests are scrubbed exactly as
    recordings were before they are matched, so a scrubbed ``key=REDACTED``
    compares equal by plain equality.
``uri``
    scheme, host, port, path and query together (vcrpy's name).
``headers``
    opt-in; names in any case, without volatile headers
    (``x-stainless-*``, ``user-agent``, ``idempotency-key``, dates, ids).
``body``
    JSON parsed, key order and whitespace ignored, ``1.0`` equal to ``1``, an
    empty body equal to none, and per provider (see
    :func:`~..providers.detect`) noise dropped:
    ``stream_options`` (OpenAI), ``metadata.user_id`` (Anthropic), and
    ``"stream": false`` equals no ``stream``. ``stream: true`` stays in the key:
    a streamed request is not answered with a recorded JSON body (the wire
    formats differ); relax it with ``body_without("stream")``. Non-JSON
    bodies compare as exact bytes. A JSON-RPC 2.0 message (MCP, on any path) is
    matched by its method and params: its ``id``, ``params._meta`` and
    ``params.clientInfo`` are dropped, and ``initialize`` keeps only its protocol
    version (:func:`~..mcp.jsonrpc.match_view`). ``body_with("id")`` (or any of
    those paths, or a provider's noise) keeps what the default drops.
``raw_body``
    the body bytes exactly.

A custom part is any function of the :class:`~.cassette.RecordedRequest`
returning a hashable value (see :data:`Matcher`, :func:`header`,
:func:`body_without`, :func:`body_with`). ``match_on=("method", "path")`` is positional replay:
requests are answered in recorded order whatever their bodies.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AgentReplayError
from ..jsondiff import Mask, json_diff, render, similarity, string_pair
from .errors import MatchOnError
from .formats import vcrpy
from .match_parts import (
    BUILTIN_PARTS,
    BodyMatcher,
    Matcher,
    Part,
    body_with,
    body_without,
    header,
    normalize_body,
)
from .modes import RECORD_MODES

if TYPE_CHECKING:
    from .cassette import RecordedRequest

__all__ = [
    "IMPORTED_MATCH_ON",
    "MATCHERS",
    "MATCH_ON_DEFAULT",
    "VCRPY_MATCH_ON",
    "Index",
    "MatchOnError",
    "Matcher",
    "body_with",
    "body_without",
    "closest",
    "explain_miss",
    "header",
    "json_diff",
    "normalize_body",
    "resolve_match_on",
]

MATCH_ON_DEFAULT: tuple[str, ...] = ("method", "host", "path", "body")
VCRPY_MATCH_ON = vcrpy.MATCH_ON
"""The default for a vcrpy / pytest-recording cassette (vcrpy's home keeps it:
:data:`~.formats.vcrpy.format.MATCH_ON`)."""
IMPORTED_MATCH_ON: tuple[str, ...] = ("method", "host", "conversation")
"""The default for a cassette imported from a trace: what the trace knows of each request
(model, system, messages, streaming; see :mod:`.conversation`), not the exact body."""
MATCHERS: dict[str, Matcher] = {name: part.key for name, part in BUILTIN_PARTS.items()}
"""The built-in key parts by name (see the module docs)."""

RANKED = 50
"""A miss report compares the bodies of at most this many candidates (bounded work)."""

Key = tuple[Hashable, ...]

_HEADERLESS = frozenset({"method", "scheme", "host", "port", "path", "query", "uri", "raw_body"})
"""Built-in parts that read a request's method, URL and body, never its headers."""


def _identity(text: str) -> str:
    return text


def _part(item: str | Matcher) -> Part:
    if isinstance(item, str):
        part = BUILTIN_PARTS.get(item)
        if part is None:
            raise MatchOnError(
                f"unknown match_on part {item!r}; known: {', '.join(BUILTIN_PARTS)} "
                "(or pass a function of the request, or name one in the "
                "pytest_agentreplay_configure hook: settings.matchers[name] = function)"
            )
        return part
    if not callable(item):
        raise MatchOnError(f"match_on items are names or functions, got {item!r}")
    show = item.normalize if isinstance(item, BodyMatcher) else None
    return Part(getattr(item, "__name__", repr(item)), item, show)


def resolve_match_on(match_on: Sequence[str | Matcher]) -> tuple[Part, ...]:
    """The parts ``match_on`` names; :class:`MatchOnError` lists the known names
    (callers validating settings early use this)."""
    if isinstance(match_on, (str, bytes)):
        raise MatchOnError(
            f"match_on must be a sequence of part names, got the string {match_on!r}; "
            f"did you mean ({match_on!r},)?"
        )
    return tuple(_part(item) for item in match_on)


def _key(parts: tuple[Part, ...], request: RecordedRequest, where: str) -> Key:
    """The key of ``request``; a custom part's failure names the part and request."""
    values = []
    for part in parts:
        try:
            value = part.key(request)
            hash(value)
        except AgentReplayError:
            raise
        except Exception as exc:
            raise MatchOnError(
                f"match_on part {part.name!r} failed on {where}: {type(exc).__name__}: {exc} "
                "(a matcher must return a hashable value: a str, number or tuple)"
            ) from exc
        values.append(value)
    return tuple(values)


def _ours(part: Part) -> bool:
    """Whether ``part`` is the plugin's own: a built-in part or a :class:`BodyMatcher`
    (:func:`body_with`, :func:`body_without`), written to take any request the reader
    gives (no user function that may fail on a recorded one)."""
    return type(part.key) is BodyMatcher or part is BUILTIN_PARTS.get(part.name)


def _headerless(part: Part) -> bool:
    """Whether ``part`` reads no header of a request with a JSON body or none: a
    built-in URL or method part, or the body (:func:`normalize_body` reads the
    content type only for a body stored as text or bytes)."""
    if type(part.key) is BodyMatcher:
        return True
    return part.name in _HEADERLESS and part is BUILTIN_PARTS.get(part.name)


_QUEUED, _PLAYED, _OUT = 0, 1, 2
"""What :class:`Index` knows of a recorded interaction: servable, played, or taken out
of matching without being played (:meth:`Index.withdraw`)."""


class Index:
    """The recorded requests of a cassette by key, and which of them were played.

    ``parts`` are the resolved ``match_on`` parts; ``requests[i]`` and ``keys[i]`` the
    recorded request ``i`` and its key. Thread-safe: concurrent requests
    (``asyncio.gather``, thread pools) each take a different interaction.

    A key maps to its one recorded index, or to the list of them in recorded order when
    several requests share it; one byte per interaction says whether it was played.
    Most keys are held by one request: a container per key (a queue of unplayed
    indexes, a list of played ones) was two objects per interaction for the cyclic
    garbage collector to walk, made when the cassette loads and as it plays
    (issue 29).

    When every part is the plugin's own (:data:`BUILTIN_PARTS`, a :class:`BodyMatcher`),
    the recorded keys are computed when a take first needs them, not when the index is
    built: a replay in recorded order takes each interaction by position
    (:meth:`take_next`) and never needs them, and keying every recorded body was a
    tenth of loading a long cassette (issue 29). A custom part's keys are computed at
    once, so that one failing on a recorded request fails where the cassette is
    entered, naming the interaction, rather than inside a client's call.
    """

    def __init__(
        self,
        requests: Sequence[RecordedRequest],
        *,
        match_on: Sequence[str | Matcher] = MATCH_ON_DEFAULT,
    ) -> None:
        self.parts = resolve_match_on(match_on)
        self.headerless = all(_headerless(part) for part in self.parts)
        """Whether the key reads a request's method, URL and (JSON or no) body only, so
        that two requests differing in their headers alone have the same key."""
        self._deferred = all(_ours(part) for part in self.parts)
        """Whether the recorded keys wait until a take needs them (see the class docs)."""
        self.requests: list[RecordedRequest] = []
        self._keys: list[Key] | None = None if self._deferred else []
        """The recorded keys, by index; ``None`` until a take needs them."""
        self._where: dict[Key, int | list[int]] = {}
        """The recorded indexes with a key: one, or a list in recorded order."""
        self._skip: dict[Key, int] = {}
        """For a key held by several indexes: how many of them, from the first, are
        known not to be servable (a take starts looking there)."""
        self._state = bytearray()  # _QUEUED, _PLAYED or _OUT, per recorded index
        self._first = 0
        """No index below this one is servable (states only leave ``_QUEUED``)."""
        self._played: list[int] = []
        self._lock = threading.Lock()
        for request in requests:
            self.add(request, played=False)

    def __len__(self) -> int:
        return len(self.requests)

    def key(self, request: RecordedRequest, *, where: str = "the live request") -> Key:
        """The key ``request`` is matched by."""
        return _key(self.parts, request, where)

    def take(self, request: RecordedRequest | None, key: Key | None = None) -> int | None:
        """The next unplayed recorded index with ``request``'s key (``key``, when the
        caller has it), in recorded order, now marked played; ``None`` when there is
        none left."""
        key = self._given(request, key)
        with self._lock:
            found = self._indexed().get(key)
            if found is None:
                return None
            state = self._state
            if isinstance(found, int):
                if state[found] != _QUEUED:
                    return None
                index = found
            else:
                at, end = self._skip.get(key, 0), len(found)
                while at < end and state[found[at]] != _QUEUED:
                    at += 1
                self._skip[key] = at + 1 if at < end else at
                if at == end:
                    return None
                index = found[at]
            state[index] = _PLAYED
            self._played.append(index)
        return index

    def take_first(self, request: RecordedRequest | None, key: Key | None = None) -> int | None:
        """vcrpy's ``allow_playback_repeats``: the first recorded index with ``request``'s
        key, played or not (vcrpy plays the first match every time), now marked played."""
        key = self._given(request, key)
        with self._lock:
            found = self._indexed().get(key)
            state = self._state
            indexes = [found] if isinstance(found, int) else found or ()
            index = next((i for i in indexes if state[i] != _OUT), None)
            if index is None:
                return None
            state[index] = _PLAYED
            self._played.append(index)
        return index

    def play(self, index: int) -> bool:
        """Mark recorded interaction ``index`` played by someone else (a stdio server's
        replayer, in its own process); ``False`` if it was played already."""
        with self._lock:
            if self._state[index] != _QUEUED:
                return False
            self._state[index] = _PLAYED
            self._played.append(index)
        return True

    def withdraw(self, index: int) -> None:
        """Take recorded ``index`` out of matching without playing it: the other form of
        an imported step whose one form was played (it stays unplayed, not served)."""
        with self._lock:
            if self._state[index] == _QUEUED:
                self._state[index] = _OUT

    def _given(self, request: RecordedRequest | None, key: Key | None) -> Key:
        """``key``, or ``request``'s key when it is not given (one of them is)."""
        if key is not None:
            return key
        if request is None:
            raise TypeError("give the request or its key")
        return self.key(request)

    def peek_consumed(self, request: RecordedRequest) -> list[int]:
        """The indexes with ``request``'s key that were already played, in play order
        (an index played again under ``allow_playback_repeats`` each time)."""
        key = self.key(request)
        with self._lock:
            found = self._indexed().get(key)
            if found is None:
                return []
            mine = {found} if isinstance(found, int) else set(found)
            return [i for i in self._played if i in mine]

    def unplayed(self) -> list[int]:
        """Indexes never played, in recorded order (what strict mode reports)."""
        with self._lock:
            return [i for i, state in enumerate(self._state) if state != _PLAYED]

    def played(self) -> list[int]:
        """Indexes played so far, in the order they were played."""
        with self._lock:
            return list(self._played)

    def add(self, request: RecordedRequest, *, played: bool = True) -> int:
        """Append a request (``new_episodes``) and index it; returns its index.

        A request recorded live was answered live, so it counts as played unless
        ``played=False``: a repeat of it is recorded again rather than replayed.
        """
        with self._lock:
            index = len(self.requests)
            if self._keys is not None:
                key = _key(self.parts, request, f"interactions[{index}]")
                self._keys.append(key)
                self._file(key, index)
            self.requests.append(request)
            self._state.append(_PLAYED if played else _QUEUED)
            if played:
                self._played.append(index)
        return index

    def _file(self, key: Key, index: int) -> None:
        """Note that ``index`` has ``key`` (the caller holds the lock)."""
        found = self._where.get(key)
        if found is None:
            self._where[key] = index
        elif isinstance(found, int):
            self._where[key] = [found, index]
        else:
            found.append(index)

    def rekey(self, requests: Sequence[RecordedRequest]) -> None:
        """Index ``requests`` in place of the recorded ones (the same interactions in
        another form: scrubbed), keeping which were played, in what order, and which
        were taken out of matching."""
        if len(requests) != len(self.requests):
            raise ValueError(f"rekey needs {len(self.requests)} requests, got {len(requests)}")
        with self._lock:
            self.requests = list(requests)
            self._keys, self._where, self._skip = None, {}, {}
            if not self._deferred:
                self._indexed()

    @property
    def keys(self) -> list[Key]:
        """The recorded keys, by index (computed now if no take needed them yet)."""
        with self._lock:
            self._indexed()
            assert self._keys is not None  # just computed
            return self._keys

    def _indexed(self) -> dict[Key, int | list[int]]:
        """The recorded indexes by key, computing every recorded key the first time
        (the caller holds the lock)."""
        if self._keys is None:
            self._keys = []
            for index, request in enumerate(self.requests):
                key = _key(self.parts, request, f"interactions[{index}]")
                self._keys.append(key)
                self._file(key, index)
        return self._where

    def is_played(self, index: int) -> bool:
        """Whether recorded interaction ``index`` was played."""
        with self._lock:
            return self._state[index] == _PLAYED

    def cursor(self) -> int:
        """Where replay is: one past the interaction played last (0 before any)."""
        with self._lock:
            return self._cursor()

    def _cursor(self) -> int:
        return self._played[-1] + 1 if self._played else 0  # the caller holds the lock

    def next_in_order(self) -> tuple[int, RecordedRequest] | None:
        """The recorded request at :meth:`cursor` and its index (``None`` past the
        last): the one a replay in recorded order asks for next."""
        with self._lock:
            at = self._cursor()
            if at >= len(self.requests):
                return None
            return at, self.requests[at]

    def take_next(self, at: int) -> bool:
        """Mark recorded index ``at`` played when it is the first servable one, and say
        whether it was: then it is what :meth:`take` gives for its key (every earlier
        index is played or out of matching), found without computing a key. ``False``
        leaves the take to :meth:`take`, by key."""
        with self._lock:
            state, first, end = self._state, self._first, len(self._state)
            while first < end and state[first] != _QUEUED:
                first += 1
            self._first = first
            if first != at:
                return False
            state[at] = _PLAYED
            self._played.append(at)
        return True


# -- ranking -----------------------------------------------------------------------


def _shown(part: Part, request: RecordedRequest) -> Any:
    return part.show(request) if part.show is not None else part.key(request)


def _body_part(parts: tuple[Part, ...]) -> Part | None:
    return next((p for p in parts if isinstance(p.key, BodyMatcher)), None)


def _rank(
    request: RecordedRequest,
    live_key: Key,
    keys: Sequence[Key],
    requests: Sequence[RecordedRequest],
    parts: tuple[Part, ...],
    *,
    cursor: int = 0,
    n: int = 3,
) -> list[tuple[int, float]]:
    """The ``n`` closest candidates with scores: most agreeing key parts first, then
    the most similar bodies. Only the :data:`RANKED` best by agreement (nearest the
    replay cursor on ties) have their bodies compared."""
    agree = [sum(x == y for x, y in zip(key, live_key, strict=True)) for key in keys]
    order = sorted(range(len(keys)), key=lambda i: (-agree[i], abs(i - cursor), i))[:RANKED]
    body = _body_part(parts)
    show = body.show if body is not None and body.show is not None else normalize_body
    live_body = show(request)
    sims = {i: similarity(show(requests[i]), live_body) for i in order}
    best = sorted(order, key=lambda i: (-agree[i], -sims[i], i))[:n]
    return [(i, (agree[i] + sims[i]) / (len(parts) + 1)) for i in best]


def closest(
    request: RecordedRequest,
    candidates: Sequence[RecordedRequest],
    n: int = 3,
    *,
    match_on: Sequence[str | Matcher] = MATCH_ON_DEFAULT,
) -> list[tuple[int, float]]:
    """The ``n`` candidates most like ``request``, best first, as ``(index, score)``.

    Ranked by how many ``match_on`` parts agree, then by how alike the normalized
    bodies are; the score, from 0 to 1 (identical), is (agreeing parts + body
    similarity) / (parts + 1).
    """
    parts = resolve_match_on(match_on)
    keys = [_key(parts, c, f"candidates[{i}]") for i, c in enumerate(candidates)]
    return _rank(request, _key(parts, request, "the request"), keys, candidates, parts, n=n)


# -- the miss report ---------------------------------------------------------------


def _rerecord_command(rerecord: str, test: str | None) -> str:
    """``rerecord`` is a record mode (the command is built) or a whole command."""
    if rerecord not in RECORD_MODES:
        return rerecord
    target = f"{shlex.quote(test)} " if test else ""
    return f"pytest {target}--agentreplay-record-mode={rerecord}"


def _body_lines(recorded: Any, live: Any, mask: Mask, limit: int) -> list[str]:
    """How a recorded normalized body differs from the live one."""
    if isinstance(recorded, (dict, list)) and isinstance(live, (dict, list)):
        return json_diff(recorded, live, limit=limit, mask=mask, labels=("recorded", "now"))

    def describe(value: Any) -> str:
        if value is None:
            return "no body"
        if isinstance(value, bytes):
            return f"{len(value):,} bytes of non-JSON {render(value, mask)}"
        return f"JSON {render(value, mask)}"

    if isinstance(recorded, bytes) and isinstance(live, bytes):
        text = [v.decode("utf-8", "backslashreplace") for v in (recorded, live)]
        old, new, note = string_pair(text[0], text[1], mask)
        sizes = f"{len(recorded):,} → {len(live):,} bytes"
        return [f"(not JSON, {sizes}): recorded b{old}, now b{new}{note}"]
    return [f"(whole body): recorded {describe(recorded)}, now {describe(live)}"]


def _part_lines(
    part: Part, recorded: RecordedRequest, live: RecordedRequest, mask: Mask
) -> list[str]:
    """How one key part differs: a line for a scalar, a diff for a body or headers."""
    old, new = _shown(part, recorded), _shown(part, live)
    if isinstance(part.key, BodyMatcher) or part.name == "raw_body":
        return _body_lines(old, new, mask, 12)
    if part.name == "headers":
        return json_diff(old, new, limit=8, mask=mask, labels=("recorded", "now"))
    if isinstance(old, dict) and isinstance(new, dict):  # a structured part: conversation
        return json_diff(old, new, limit=12, mask=mask, labels=("recorded", "now"))
    if isinstance(old, str) and isinstance(new, str):  # says so when masking hid the change
        shown_old, shown_new, note = string_pair(old, new, mask)
        return [f"{part.name}: recorded {shown_old}, now {shown_new}{note}"]
    return [f"{part.name}: recorded {render(old, mask)}, now {render(new, mask)}"]


def _differences(
    index: Index, i: int, differing: list[Part], request: RecordedRequest, mask: Mask
) -> list[str]:
    """The diff lines of one candidate: a scalar part on one line, a body or headers
    under its own heading (no heading when it is the only part that differs)."""
    lines = [f"      differs in {', '.join(p.name for p in differing)}:"]
    for part in differing:
        diff = _part_lines(part, index.requests[i], request, mask)
        if part.show is None or len(differing) == 1:
            lines += [f"        {line}" for line in diff]
        else:
            lines += [f"        {part.name}:", *(f"          {line}" for line in diff)]
    return lines


def _candidate(
    index: Index, i: int, live_key: Key, request: RecordedRequest, mask: Mask
) -> list[str]:
    """One entry of the closest list: where, whether played, what differs."""
    recorded = index.requests[i]
    played = "already played in this test" if index.is_played(i) else "not played yet"
    lines = [f"  interactions[{i}]: {recorded.method.upper()} {mask(recorded.url)} ({played})"]
    differing = [p for p, a, b in zip(index.parts, index.keys[i], live_key, strict=True) if a != b]
    if differing:
        return lines + _differences(index, i, differing, request, mask)
    times = len(index.peek_consumed(request))
    same = ", ".join(p.name for p in index.parts) or "position (match_on is empty)"
    lines.append(
        f"      same {same}: it matched, but it was consumed — the code made this call one "
        f"more time than when the cassette was recorded (recorded {times} "
        f"time{'s' if times > 1 else ''}, this is call {times + 1})"
    )
    return lines


def explain_miss(
    request: RecordedRequest,
    index: Index,
    *,
    cassette: Path,
    test: str | None,
    record_mode: str,
    rerecord: str,
    mask: Mask = _identity,
) -> str:
    """Why ``request`` matched nothing, for a test failure: the request, cassette,
    test and record mode; the closest recorded interactions (up to 3), each with
    whether it was already played and a diff at JSON paths; and the command to
    re-record (``rerecord`` is a record mode such as ``new_episodes``, or a whole
    command). Every piece of text passes through ``mask`` before it is shown.
    """
    where = f"test {test}, record mode {record_mode}" if test else f"record mode {record_mode}"
    lines = [
        f"no recorded interaction matches {request.method.upper()} {mask(request.url)} "
        f"in cassette {mask(str(cassette))} ({where})",
        f"matching on: {', '.join(p.name for p in index.parts) or '(nothing: positional)'}",
    ]
    if not len(index):
        lines.append("the cassette has no recorded interactions")
    else:
        live_key = index.key(request)
        ranked = _rank(
            request, live_key, index.keys, index.requests, index.parts, cursor=index.cursor()
        )
        played = len(index.played())
        lines.append(
            f"closest recorded interactions (of {len(index)}; {played} played, "
            f"{len(index) - played} not played):"
        )
        for i, _score in ranked:
            lines += _candidate(index, i, live_key, request, mask)
    lines.append(f"to re-record: {_rerecord_command(rerecord, test)}")
    return mask("\n".join(lines))
