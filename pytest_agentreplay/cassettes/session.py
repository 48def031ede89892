"""One test's cassette: replay what matches, record what the record mode allows, save.

Record modes mean what pytest-recording users know:

========================  ===========================================================
``none`` (default)        replay only; an unmatched request fails at once, no egress
``once``                  replay if the cassette exists (then like ``none``); else
                          record everything and write it
``new_episodes``          replay what matches; record what does not, and append it
``all``                   never replay; record everything, keep the old interactions
``rewrite``               never replay; record everything, replacing the cassette
========================  ===========================================================

A session is the router's handler for the cassette (it claims requests it can
answer, and in replay-only modes every request that may not go out live, so a
miss fails with a diagnosis instead of a vague connection error) and its
recorder (live responses are teed into new interactions). At the end of the test
:meth:`CassetteSession.finish` writes the cassette — scrubbed, atomically, under
a lock, merged with what other processes wrote meanwhile (:mod:`.write`) — unless
the test failed and the cassette already existed.

The cassette is read by the one reader (:func:`.io.load`); the recorded requests,
the live requests matched against them, custom matchers and custom scrubbers all
see the same model objects. A miss is reported by :mod:`.miss`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..mcp.miss import answer_miss
from ..mcp.readdress import readdress
from ..mcp.streams import held_open, is_standalone_stream
from ..transport.answer import Plan
from ..transport.chunking import Chunker, Chunking
from ..transport.clients import client_library
from ..transport.gate import Gate
from ..transport.playback import Playback
from ..transport.router import HTTPRequest, Router
from . import io as cassette_io
from .calls import ReplayedCall, live_call, played_whole, replayed_outcome
from .cassette import Interaction, RecordedRequest
from .claims import Origins
from .errors import CassetteMiss, CassetteWriteError
from .formats import vcrpy
from .from_wire import request_from_wire
from .ledger import RunLedger
from .matching import IMPORTED_MATCH_ON, MATCH_ON_DEFAULT, Index
from .miss import cassette_miss
from .modes import RECORDING_MODES, REPLAYING_MODES
from .record import DEFAULT_MAX_BODY_BYTES, UNNUMBERED, LiveRecorder
from .replay import REPLAY_FAULTS, playback_for
from .write import WriteResult, write_recorded

if TYPE_CHECKING:
    from ..neutral import Fault
    from ..redact.scrubber import Scrubber
    from .formats.vcrpy import VcrFilters

__all__ = ["CassetteSession"]


@dataclass(slots=True)  # one per replayed request, between claims() and respond()
class _Pending:
    request: HTTPRequest
    recorded: RecordedRequest | None  # None: not built (see CassetteSession._as_recorded)
    index: int | None
    call: int  # the request's number among all this test's requests
    again: bool = False  # a reconnect to a held stream: its recording, without events
    scrubbed: bool = True
    """``False``: ``recorded`` is the live request as sent (or not built yet), matched
    unscrubbed because scrubbing could change none of its key
    (:meth:`CassetteSession._unscrubbed_key`, :meth:`CassetteSession._as_recorded`)."""


_Ended = tuple[int, str, str, int, "int | None", str, int, "str | None", "RecordedRequest | None"]
"""A replayed call as it is logged when it ends (:meth:`CassetteSession._ender`): its
number, method, URL, interaction, status, outcome, events sent, client library and the
request it sent when it differs from the recording; built into a
:class:`~.calls.ReplayedCall` when the log is read (:attr:`CassetteSession.calls`)."""


@dataclass(repr=False)  # its requests, calls and errors may hold credentials
class CassetteSession:
    """The cassette of one test (see the module docstring)."""

    path: Path
    record_mode: str
    router: Router
    scrubber: Scrubber
    test: str = ""
    match_on: Sequence[Any] | None = None
    more_match_on: Sequence[Any] = ()
    """vcrpy's ``additional_matchers``: matched besides ``match_on``, or besides the
    cassette's default when ``match_on`` is not set."""
    chunker: Chunker = Chunking.PER_EVENT
    pace: float | None = None
    allow_incomplete: bool = False
    save_on_failure: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rerecord: str = ""
    ledger: RunLedger | None = None
    """What this test run wrote into which cassette: ``rewrite`` keeps what other tests
    of the same run wrote into a shared cassette (:mod:`.ledger`)."""
    pytest_recording_file: Path | None = None
    """pytest-recording's file for the test's default cassette, there under that name
    while this cassette is not: a miss names it (:func:`.miss.renaming_hint`)."""
    filters: VcrFilters | None = None
    """vcrpy's ``filter_*`` / ``before_record_*`` / ``ignore_*`` options
    (:mod:`.formats.vcrpy.filters`)."""
    repeats: bool = False
    """vcrpy's ``allow_playback_repeats``: a request plays its first match, played or not."""
    record_on_exception: bool | None = None
    """vcrpy's ``record_on_exception``: ``True`` saves as ``save_on_failure``; ``False``
    writes nothing for a failed test, not even a new cassette."""
    errors: list[str] = field(default_factory=list)
    settle: Callable[[], None] | None = None
    """Brings in what was played elsewhere (a stdio MCP server's replayer, in its own
    process) before :attr:`unplayed` is read."""
    answered_misses: list[str] = field(default_factory=list)
    """Miss reports of JSON-RPC requests, answered with a JSON-RPC error rather than
    raised (:mod:`..mcp.miss`): the test fails with them after its body."""

    def __repr__(self) -> str:
        return f"<CassetteSession {self.path} mode={self.record_mode} calls={len(self._calls)}>"

    def __post_init__(self) -> None:
        self.existed = self.path.exists()
        self.replaying = self.record_mode in REPLAYING_MODES
        self.recording = self.record_mode in RECORDING_MODES or (
            self.record_mode == "once" and not self.existed
        )
        loaded, source = (
            cassette_io.load_with_format(self.path, lazy=True)
            if self.existed
            else (None, "agentreplay")
        )
        self.interactions: list[Interaction] = [] if loaded is None else loaded.interactions
        match_on = self.match_on
        if match_on is None and source == "vcrpy":
            match_on = vcrpy.MATCH_ON  # "loads unchanged" means "matches the same" (issue 20)
        if match_on is None and any(_imported(i) for i in self.interactions):
            match_on = IMPORTED_MATCH_ON  # a trace knows the conversation, not the body
        if self.more_match_on:
            match_on = _more(MATCH_ON_DEFAULT if match_on is None else match_on, self.more_match_on)
        self.index = Index([], **({} if match_on is None else {"match_on": match_on}))
        if self.replaying:
            for request in (i.request for i in self.interactions):
                self.index.add(request, played=False)
        self.recorded: dict[int, Interaction] = {}
        self.recorded_elsewhere: list[Interaction] = []
        self._recorder: LiveRecorder | None = None
        self.injected: dict[int, Fault] = {}
        self._again: dict[tuple[Hashable, ...], deque[int]] = {}
        self._pending: dict[int, _Pending] = {}
        self._sent: dict[int, int] = {}  # id(live request) -> its number, in sending order
        self._lock = threading.Lock()
        self._scrub_lock = threading.Lock()
        self._scrubbed = False  # the recorded requests are indexed as loaded until a miss
        self._held = Gate()  # MCP's standalone GET streams wait here until the test ends
        self._served = 0
        self._requests = 0
        self._calls: list[ReplayedCall | _Ended] = []
        self._origins = Origins(i.request.url for i in self.interactions)

    @property
    def calls(self) -> list[ReplayedCall]:
        """Every call of this test that ended, in the order each ended: answered from the
        cassette or recorded live. A replayed call is logged as the few values it ended
        with, and becomes a :class:`~.calls.ReplayedCall` when the log is first read
        (issue 29: building it was a few per cent of a replayed request, for a log most
        tests never read)."""
        with self._lock:
            log = self._calls
            for at, call in enumerate(log):
                if isinstance(call, tuple):
                    log[at] = self._replayed_call(call)
            return list(log)  # type: ignore[arg-type]  # every entry built just now

    @property
    def replayed(self) -> int:
        """How many calls the cassette answered so far (the log not read)."""
        with self._lock:
            return sum(isinstance(c, tuple) or c.source == "cassette" for c in self._calls)

    def _replayed_call(self, logged: _Ended) -> ReplayedCall:
        """The :class:`~.calls.ReplayedCall` of a logged :data:`_Ended`."""
        call, method, url, index, status, outcome, events_sent, client, sent = logged
        return ReplayedCall(
            index=call,
            method=method,
            url=url,
            source="cassette",
            interaction=index,
            status=status,
            outcome=replayed_outcome(self.interactions[index], outcome, status, events_sent),
            events_sent=events_sent,
            client=client,
            request=sent,
        )

    def _live_form(
        self, request: HTTPRequest
    ) -> tuple[RecordedRequest | None, tuple[Hashable, ...] | None]:
        """A live request as it is matched: in cassette form, filtered and scrubbed
        exactly as the recorded ones were when stored; and its key, when it is matched
        as sent (then it is not scrubbed here: see :meth:`_unscrubbed_key`)."""
        live = request_from_wire(request.method, request.url, request.headers, request.content)
        key = self._unscrubbed_key(live)
        return (live, key) if key is not None else (self._matched_form(live), None)

    def _keys_ignore_scrubbing(self) -> bool:
        """Whether scrubbing a request can change its key only through its URL and body:
        replaying, no vcrpy filter, and a key that reads no header."""
        return self.filters is None and self.replaying and self.index.headerless

    def _unscrubbed_key(self, live: RecordedRequest) -> tuple[Hashable, ...] | None:
        """The key of ``live`` scrubbed, read from ``live`` itself when scrubbing surely
        leaves it as it is (no vcrpy filter, nothing to scrub but headers, a key that
        reads no header); ``None`` otherwise. Scrubbing a replayed request was a fifth
        of its cost (issue 29); its scrubbed copy is made when something shows it."""
        if not self._keys_ignore_scrubbing():
            return None
        if not self.scrubber.headers_only(live):
            return None
        return self.index.key(live)

    def _scrubbed_request(self, pending: _Pending) -> RecordedRequest:
        """The request of ``pending`` scrubbed, as a miss report or a call log shows it."""
        if pending.recorded is None:
            sent = pending.request
            pending.recorded = request_from_wire(sent.method, sent.url, sent.headers, sent.content)
        if not pending.scrubbed:
            pending.recorded = self.scrubber.scrub_request(pending.recorded)
            pending.scrubbed = True
        return pending.recorded

    def _as_recorded(self, request: HTTPRequest) -> int | None:
        """The index of the next recorded request in order when ``request`` is sent
        exactly as it was stored, found without decoding ``request``; ``None`` otherwise.

        Same method and URL, no ``content-encoding``, and body bytes that are the
        recorded JSON body written compactly (as httpx and the SDKs send it): decoded,
        the body is that JSON value again (no duplicate key, NaN or nesting the decoder
        would refuse: the writer stored it, and ``NaN`` / ``Infinity`` send it the long
        way). With nothing to scrub in that URL or body, scrubbing changes only the
        headers, which the key does not read (:meth:`_unscrubbed_key`'s conditions):
        so the live key is the recorded request's (:meth:`_take_as_recorded`). Issue 29:
        decoding, scrubbing and keying a replayed request was a third of the plugin's
        cost per request."""
        if not self._keys_ignore_scrubbing():
            return None
        found = self.index.next_in_order()
        if found is None:
            return None
        at, recorded = found
        body = recorded.json_body
        if (
            recorded.method != request.method
            or recorded.url != request.url
            or type(body) not in (dict, list)
            or recorded.body is not None
            or recorded.body_b64 is not None
            or b"NaN" in request.content
            or b"Infinity" in request.content
            or request.has_header("content-encoding")
        ):
            return None
        try:
            if recorded.content() != request.content:
                return None
        except (ValueError, RecursionError):  # not writable as UTF-8 JSON: the long way
            return None
        return at if self.scrubber.headers_only(recorded) else None

    def _take_as_recorded(self, at: int) -> int | None:
        """The interaction answering a request sent exactly as recorded request ``at``
        was (:meth:`_as_recorded`): ``at`` itself when it is the first servable one and
        no failed call waits for its retry, found without a key (a replay in recorded
        order computes none, issue 29); else the one :meth:`_take` finds by ``at``'s
        key."""
        if not self._again and not self.repeats and self.index.take_next(at):
            self._withdraw_twin(at)
            return at
        return self._take(None, self.index.keys[at])

    def _matched_form(self, live: RecordedRequest) -> RecordedRequest | None:
        """``live`` through vcrpy's filters (``None``: they skip it), then scrubbed."""
        filtered = live if self.filters is None else self.filters.request(live)
        return None if filtered is None else self.scrubber.scrub_request(filtered)

    # --- the handle's API ----------------------------------------------------------

    def inject(self, fault: Fault, at_call: int) -> None:
        """Make the ``at_call``-th call (0-based) answered from the cassette in this test
        fail with ``fault`` instead of playing as recorded.

        The recording stays the answer to that request: a retry of the failed call (the
        same request again) replays it, as a retried call to the provider would succeed.
        """
        if at_call < 0:
            raise ValueError(f"at_call must be >= 0, got {at_call}")
        if fault.kind not in REPLAY_FAULTS:
            raise ValueError(
                f"Fault.{fault.kind}() cannot be injected into cassette playback (it holds "
                f"until a fake model's release()); use one of "
                f"{', '.join(sorted(REPLAY_FAULTS))}, e.g. Fault.timeout(after_events=k)"
            )
        with self._lock:
            self.injected[at_call] = fault

    @property
    def unplayed(self) -> list[int]:
        """Indexes of recorded interactions this test did not play. An imported step
        served either streamed or not holds both forms: the one not asked for is not
        left unplayed once the other was played."""
        if not self.replaying:
            return []
        if self.settle is not None:
            self.settle()
        left = self.index.unplayed()
        played_steps = {
            _step(self.interactions[i]) for i in range(len(self.interactions)) if i not in left
        }
        return [i for i in left if _step(self.interactions[i]) not in played_steps - {None}]

    def recorder(self) -> LiveRecorder | None:
        """The live recorder for the router, when this mode records."""
        if not self.recording:
            return None
        self._recorder = LiveRecorder(
            self._recorded, max_bytes=self.max_body_bytes, sequence_of=self._sequence_of
        )
        return self._recorder

    def end_open_streams(self) -> int:
        """Record every live body still streaming as ``incomplete`` now, and how many
        there were: the process is being stopped (see :meth:`LiveRecorder.end_open`)."""
        return self._recorder.end_open("incomplete") if self._recorder is not None else 0

    def _sequence_of(self, request: HTTPRequest) -> int | None:
        """The number this session gave ``request`` when it was sent (see ``claims``)."""
        with self._lock:
            return self._sent.pop(id(request), None)

    # --- Handler protocol --------------------------------------------------------------

    def claims(self, request: HTTPRequest) -> bool:
        """Whether the cassette answers ``request``: a match, or (in replay) a miss to
        report. Requests left to go out live are numbered here, in the order they are
        sent, which is the order they are written in."""
        if not self.recording and self._origins.elsewhere(request.method, request.url):
            return False  # another local service: left to the egress rules (loopback)
        at = self._as_recorded(request)
        index = None if at is None else self._take_as_recorded(at)
        if index is not None:  # sent as recorded: matched without being decoded
            with self._lock:
                call = self._requests
                self._requests += 1
                self._pending[id(request)] = _Pending(request, None, index, call, scrubbed=False)
            return True
        recorded, key = self._live_form(request)
        if recorded is None:
            # vcrpy's filters skip it (ignore_hosts, a before_record_request returning
            # None): as under vcrpy, never matched nor recorded; the egress rules decide.
            return False
        index = self._take(recorded, key) if self.replaying else None
        again = index is None and self.replaying and self._reconnect(request, recorded)
        if again:
            index = self.index.peek_consumed(recorded)[0]
        if (
            index is None
            and not self.recording
            and not self._origins.is_miss(request.method, request.url)
        ):
            return False  # not the cassette's business: left to the egress rules
        with self._lock:
            call = self._requests
            self._requests += 1
            if index is None and self.recording:
                self._sent[id(request)] = call
        if index is None and self.recording:
            # The key a test put in the environment is gone by the time the cassette is
            # written (monkeypatch undone): the backstop learns it now (issue 18).
            self.scrubber.remember_environment()
            return False  # goes out live, and is recorded
        with self._lock:
            self._pending[id(request)] = _Pending(
                request, recorded, index, call, again, scrubbed=key is None
            )
        return True

    def _reconnect(self, request: HTTPRequest, recorded: RecordedRequest) -> bool:
        """Whether ``request`` reopens an MCP server's standalone stream played already
        (:mod:`..mcp.streams`): a live server answers every reconnect."""
        return is_standalone_stream(request.method, request.headers_as_sent()) and bool(
            self.index.peek_consumed(recorded)
        )

    def _take(
        self, recorded: RecordedRequest | None, key: tuple[Hashable, ...] | None = None
    ) -> int | None:
        """The interaction answering ``recorded`` (whose key is ``key``, when known): one
        whose last call was failed by an injected fault first (the retry gets the
        recording), else the next unplayed."""
        if key is None:
            assert recorded is not None  # one of them is given
            key = self.index.key(recorded)
        if self._again:
            with self._lock:
                again = self._again.get(key)
                if again:
                    return again.popleft()
        take = self.index.take_first if self.repeats else self.index.take
        index = take(recorded, key)
        if index is None and not self._scrubbed:
            self._scrub_recorded()
            index = take(recorded, key)
        if index is not None:
            self._withdraw_twin(index)
        return index

    def _withdraw_twin(self, index: int) -> None:
        """An imported step is one call served in either form: once one form answered,
        the other answers no later request (the same question asked again, a retry,
        must get the next step, not this step's other form)."""
        step = _step(self.interactions[index])
        if step is None:
            return
        for other, interaction in enumerate(self.interactions):
            if other != index and _step(interaction) == step:
                self.index.withdraw(other)

    def _scrub_recorded(self) -> None:
        """Index the recorded requests in the form live ones are matched in: scrubbed.

        A live request is scrubbed before it is matched; a recorded one that holds what
        the rules now scrub (a vcrpy cassette, a hand edit, a rule added since) never
        matched it, and the miss report showed the same masked value on both sides
        (issue 18). Files the plugin wrote are scrubbed already, so this runs at the
        first miss only (scrubbing 10,000 long requests takes seconds), once.
        """
        with self._scrub_lock:
            if self._scrubbed:
                return
            loaded = self.index.requests
            scrubbed = [self.scrubber.scrub_request(request) for request in loaded]
            if scrubbed != loaded:
                self.index.rekey(scrubbed)
            self._scrubbed = True

    def _offer_again(self, recorded: RecordedRequest, index: int) -> None:
        with self._lock:
            self._again.setdefault(self.index.key(recorded), deque()).append(index)

    def respond(self, request: HTTPRequest) -> Playback:
        """Play the interaction claimed for ``request`` — failed by the fault injected at
        this call number, if any — or raise the miss report."""
        __tracebackhide__ = True  # a miss shows the test's frames and the report, not ours
        with self._lock:
            pending = self._pending.pop(id(request))
            number = self._served
            self._served += 1
            fault = self.injected.pop(number, None)
        if pending.index is None:
            client = client_library(request.headers_as_sent())
            miss = self._miss(self._scrubbed_request(pending), client=client)
            answer = answer_miss(request.content, str(miss))
            if answer is None:
                raise miss
            with self._lock:
                self.answered_misses.append(str(miss))
            return answer
        if fault is not None:
            self._offer_again(self._scrubbed_request(pending), pending.index)
        imported = _imported(self.interactions[pending.index])
        live = self._scrubbed_request(pending) if imported else None
        return self._play(pending.call, request, pending.index, fault, live, again=pending.again)

    def _play(
        self,
        call: int,
        request: HTTPRequest,
        index: int,
        fault: Fault | None,
        live: RecordedRequest | None = None,
        *,
        again: bool = False,
    ) -> Playback:
        played: list[Playback] = []  # the ender reads the status the client really got
        ender = self._ender(call, request, index, played, live)
        plan = Plan(chunker=self.chunker, on_end=ender)
        headers = request.headers_as_sent()  # decoded where they are read: most never are
        interaction = readdress(self.interactions[index], request.content, headers)
        if fault is None and is_standalone_stream(request.method, headers):
            interaction = held_open(interaction, plan, self._held, again=again)
        played.append(
            playback_for(
                interaction,
                method=request.method,
                path=lambda: request.path,  # split from the URL for a fault only
                fault=fault,
                plan=plan,
                pace=self.pace,
                allow_incomplete=self.allow_incomplete,
                where=f"{self.path}: interactions[{index}]",
            )
        )
        return played[0]

    async def respond_async(self, request: HTTPRequest) -> Playback:
        return self.respond(request)

    def play_whole(self, request: RecordedRequest) -> Interaction | None:
        """For a client bridge that plays recordings itself (vcrpy, for requests /
        urllib3 / aiohttp): the interaction answering ``request`` (unscrubbed: it is
        matched scrubbed, exactly as an httpx request), now played and logged as a
        call; ``None`` when none is left, or this mode does not replay."""
        here = self.replaying and (
            self.recording or not self._origins.elsewhere(request.method, request.url)
        )
        matched = self._matched_form(request) if here else None
        index = None if matched is None else self._take(matched)
        if index is None:
            return None
        interaction = self.interactions[index]
        with self._lock:
            call = self._requests
            self._requests += 1
            self._calls.append(played_whole(call, request.url, interaction, index))
        return interaction

    def refuse(self, request: RecordedRequest) -> CassetteMiss | None:
        """The miss report for a request (unscrubbed) that another client bridge —
        vcrpy, for requests / urllib3 / aiohttp — cannot play back in replay; ``None``
        when vcrpy's filters skip it or it is not the cassette's business (another
        loopback port: :mod:`.claims`), left to the egress rules as in :meth:`claims`."""
        matched = self._matched_form(request)
        if matched is None or not self._origins.is_miss(request.method, request.url):
            return None  # not the cassette's business: vcrpy lets it go, to the egress rules
        return self._miss(matched)

    def _miss(self, recorded: RecordedRequest, client: str | None = None) -> CassetteMiss:
        self.router.blocked.append(f"{recorded.method} {recorded.url}")
        if self.existed:
            self._scrub_recorded()  # the report compares scrubbed with scrubbed
        return cassette_miss(
            recorded,
            self.index if self.existed else None,
            cassette=self.path,
            test=self.test,
            record_mode=self.record_mode,
            rerecord=self.rerecord,
            mask=self.scrubber.mask,
            elsewhere=None if self.existed else self.pytest_recording_file,
            client=client,
        )

    def _ender(
        self,
        call: int,
        request: HTTPRequest,
        index: int,
        played: list[Playback],
        live: RecordedRequest | None = None,
    ) -> Callable[[str, int], None]:
        """The ``on_end`` of a replayed call: logs it (:data:`_Ended`, read as a
        :class:`~.calls.ReplayedCall`) with the status the client got (an injected HTTP
        error's; none before the headers). An imported interaction was matched by what
        its trace knew, not by its body: the call keeps the request the client really
        sent (scrubbed), ``live``."""
        sent = live if _imported(self.interactions[index]) else None
        method, url = request.method, request.url
        client = client_library(request.headers_as_sent())  # no header kept: keys among them

        def ended(outcome: str, events_sent: int) -> None:
            playback = played[0]
            status = None if playback.before_headers else playback.status
            logged = (call, method, url, index, status, outcome, events_sent, client, sent)
            with self._lock:
                self._calls.append(logged)

        return ended

    # --- recording ----------------------------------------------------------------------

    def _recorded(self, sequence: int, result: Interaction | str) -> None:
        with self._lock:
            if isinstance(result, str):
                self.errors.append(result)
                return
            self.recorded[sequence] = result
            number = sequence if sequence < UNNUMBERED else len(self._calls)
            self._calls.append(live_call(number, result))

    def add_recorded(self, interaction: Interaction) -> None:
        """Add an interaction recorded by vcrpy (non-httpx clients); written after the
        httpx ones."""
        self.scrubber.remember_environment()  # as in claims
        with self._lock:
            self.recorded_elsewhere.append(interaction)

    @property
    def new_interactions(self) -> list[Interaction]:
        """Interactions recorded in this test: httpx-family ones in the order their
        requests were sent, then those recorded through vcrpy."""
        with self._lock:
            return [*(self.recorded[k] for k in sorted(self.recorded)), *self.recorded_elsewhere]

    def _to_store(self) -> list[Interaction]:
        """The new interactions as they are stored: through vcrpy's ``before_record_*``
        filters, which may skip one (``None``). The scrubber runs after them."""
        new = self.new_interactions
        if self.filters is None:
            return new
        kept = (self.filters.interaction(i) for i in new)
        return [i for i in kept if i is not None]

    # --- the end -----------------------------------------------------------------------

    def finish(self, *, failed: bool, interrupted: bool = False) -> WriteResult:
        """Write the cassette if this test recorded something and the mode says so.

        ``interrupted``: the run was stopped (Ctrl-C, ``pytest.exit``) while this test
        held the cassette, or a ``BaseException`` ended the test. pytest gives an
        interrupted test no call report, so it counts as failed here: an existing
        cassette is kept untouched, and a new one is written only as incomplete
        (issue 18).
        """
        self._held.open()  # streams held open for MCP clients end with the test
        if self.errors:  # they name the request: its URL may hold a credential
            raise CassetteWriteError(self.scrubber.mask(f"{self.path}: " + "\n".join(self.errors)))
        new = self._to_store()
        if not new:
            skipped = bool(self.recorded or self.recorded_elsewhere)
            why = "vcrpy's filters skipped all it recorded" if skipped else "nothing recorded"
            return WriteResult(self.path, written=False, recorded=0, reason=why)
        if failed and self.record_on_exception is False:
            reason = "the test failed (record_on_exception=False)"
            return WriteResult(self.path, written=False, recorded=len(new), reason=reason)
        # A partial re-recording never replaces a good cassette, even with save_on_failure.
        save = self.save_on_failure or bool(self.record_on_exception)
        kept = interrupted or (failed and not save)
        if kept and self.existed:
            what = "the test was interrupted" if interrupted else "the test failed"
            return WriteResult(
                self.path,
                written=False,
                recorded=len(new),
                reason=f"{what}; the existing cassette was kept",
            )
        return write_recorded(
            self.path,
            [_as_stopped(i) for i in new] if interrupted else new,
            self.scrubber,
            replace_old=self.record_mode == "rewrite",
            ledger=self.ledger,
        )


def _as_stopped(interaction: Interaction) -> Interaction:
    """A stream the test closed early while it was being stopped, as ``incomplete``.

    A ``KeyboardInterrupt`` raised in the test's own read loop leaves the client's
    iterator to be closed as the frame unwinds, where nothing says why: the tee saw a
    hang-up, ``cancelled``, which replay plays as a fragment instead of refusing it.
    """
    response = interaction.response
    if response.end != "cancelled":
        return interaction
    return interaction.replace(response=response.replace(end="incomplete"))


def _imported(interaction: Interaction) -> bool:
    return interaction.origin is not None and interaction.origin.get("source") == "trace"


def _step(interaction: Interaction) -> object:
    """The imported step an interaction is one form of (``None``: not one of two)."""
    origin = interaction.origin
    if origin is None or origin.get("serves") != "as asked":
        return None
    return (origin.get("trace"), origin.get("step"))


def _more(match_on: Sequence[Any], more: Sequence[Any]) -> tuple[Any, ...]:
    """``match_on`` and then the parts of ``more`` it does not have yet (vcrpy appends
    ``additional_matchers`` to ``match_on``; a part named twice adds nothing)."""
    parts = list(match_on)
    parts.extend(part for part in more if part not in parts)
    return tuple(parts)
