"""The scrubber: what every write path runs over a cassette, and the check after it.

:class:`Scrubber` removes by name what is known to be secret or volatile (the names
in :mod:`.rules`; encoded bodies and multipart parts in :mod:`.bodies`) and checks the
serialised text for what still looks secret (:mod:`.scan`, loaded on the first check);
a write it refuses raises :class:`SecretLeakError`.
"""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from ..cassettes.checks import inside
from .bodies import decoded, scrub_multipart
from .errors import Finding, SecretLeakError
from .rules import Rules

if TYPE_CHECKING:
    from .scan import EnvNeedles, Hit

__all__ = [
    "CustomScrubber",
    "Scrubber",
    "default_scrubber",
]

CustomScrubber = Callable[["Interaction"], "Interaction"]
"""A user scrubber: takes an interaction, returns the scrubbed one (it may be modified in
place and returned: it always receives a private copy)."""


Whole = Callable[[], str]
"""Gives a text that was handed over in pieces, whole (only when a piece holds a hit)."""


class Scrubber:
    """Removes secrets and volatile noise from interactions, and checks the result.

    ``extra_headers`` / ``extra_query_params`` / ``extra_body_keys`` add names to the
    defaults (``SECRET_HEADERS``, ``SECRET_QUERY_PARAMS``, ``SECRET_BODY_KEYS``);
    ``custom`` scrubbers run after the defaults, in order; ``env`` is where API-key
    variables are read for the backstop (``os.environ``, read at each check, when
    ``None``); ``allow`` lists exact strings the backstop accepts (a known fake key);
    ``keep_volatile`` scrubs secrets only, keeping the volatile headers (dates, user
    agents, request ids) a cassette drops or normalizes, to show them safely.
    """

    def __init__(
        self,
        *,
        extra_headers: Iterable[str] = (),
        extra_query_params: Iterable[str] = (),
        extra_body_keys: Iterable[str] = (),
        custom: Sequence[CustomScrubber] = (),
        env: Mapping[str, str] | None = None,
        placeholder: str = "REDACTED",
        allow: Iterable[str] = (),
        keep_volatile: bool = False,
    ) -> None:
        if not placeholder:
            raise ValueError("placeholder must be a non-empty string")
        self.placeholder = placeholder
        self.custom = tuple(custom)
        self._rules = Rules.build(
            placeholder=placeholder,
            extra_headers=tuple(extra_headers),
            extra_query_params=tuple(extra_query_params),
            extra_body_keys=tuple(extra_body_keys),
            keep_volatile=keep_volatile,
        )
        self._allow = frozenset(allow)
        self._env_source = env
        self._env: EnvNeedles | None = None  # the backstop's, built on first use
        self._data_filter = _data_filter(self._rules.body_keys)

    def __repr__(self) -> str:
        return f"Scrubber(placeholder={self.placeholder!r}, custom={len(self.custom)})"

    # -- scrubbing -----------------------------------------------------------------------

    def scrub(self, cassette: Cassette) -> Cassette:
        """A scrubbed copy of ``cassette`` (the input is never modified). Idempotent.
        Parts that needed no scrubbing (JSON bodies, events) are shared with the input.

        The copies are checked as they are built: a value changed into a bad one since
        the cassette was built raises :class:`~..cassettes.checks.CassetteValueError`
        with its path (``interactions[2].response.status``)."""
        scrubbed = [
            inside(("interactions", n), self.scrub_interaction, interaction)
            for n, interaction in enumerate(cassette.interactions)
        ]
        return cassette.replace(interactions=scrubbed)

    def scrub_interaction(self, i: Interaction) -> Interaction:
        """One interaction scrubbed by the defaults, then by each custom scrubber."""
        request = inside("request", self._request, i.request)
        response = inside("response", self._response, i.response)
        return self._run_custom(i.replace(request=request, response=response))

    def scrub_request(self, r: RecordedRequest) -> RecordedRequest:
        """A request scrubbed exactly as when it is stored, so that a live request can be
        matched against recorded ones. Custom scrubbers see it with an empty 200 response."""
        request = self._request(r)
        if not self.custom:
            return request
        stub = Interaction(request=request, response=RecordedResponse(status=200))
        return self._run_custom(stub).request

    def headers_only(self, r: RecordedRequest) -> bool:
        """Whether :meth:`scrub_request` surely changes nothing of ``r`` but its headers:
        no custom scrubber, a URL with nothing to redact, no body or a JSON body with
        nothing to redact. A key that reads no header is then the same before and after
        scrubbing, and a replayed request is matched without its scrubbed copy (built
        only for what shows it: a miss report, an imported call's log; issue 29)."""
        if self.custom or r.body is not None or r.body_b64 is not None:
            return False
        rules = self._rules
        return rules.url(r.url) == r.url and (r.json_body is None or rules.clean(r.json_body))

    def _run_custom(self, interaction: Interaction) -> Interaction:
        if not self.custom:
            return interaction
        current = copy.deepcopy(interaction)
        for scrubber in self.custom:
            result = scrubber(current)
            if not isinstance(result, Interaction):
                raise TypeError(
                    f"custom scrubber {_name(scrubber)} returned {type(result).__name__}; "
                    "it must return the (scrubbed) Interaction it was given"
                )
            current = result
        return current

    def _request(self, r: RecordedRequest) -> RecordedRequest:
        r = decoded(r)  # a compressed body is scrubbed decoded (issue 18)
        rules = self._rules
        changes: dict[str, Any] = {
            "headers": rules.headers(r.headers),
            "url": rules.url(r.url),
            "json_body": rules.json_value(r.json_body),
        }
        self._bodies(r, changes)
        return r.replace(**_changed(r, changes))

    def _response(self, r: RecordedResponse) -> RecordedResponse:
        r = decoded(r)
        rules = self._rules
        changes: dict[str, Any] = {
            "headers": rules.headers(r.headers),
            "json_body": rules.json_value(r.json_body),
        }
        self._bodies(r, changes)
        if r.events is not None:
            changes["events"] = [self._event(e) for e in r.events]
        return r.replace(**_changed(r, changes))

    def _bodies(self, r: RecordedRequest | RecordedResponse, changes: dict[str, Any]) -> None:
        """A text body scrubbed by its content type; the text parts of a binary multipart
        upload by name (issue 18: a key in a form field of a file upload was stored)."""
        content_type = _content_type(r.headers)
        if r.body is not None:
            raw = r.body.encode("utf-8")
            scrubbed = scrub_multipart(raw, content_type, self._rules)
            if scrubbed is not raw:
                changes["body"] = scrubbed.decode("utf-8")
            else:
                changes["body"] = self._rules.body_text(r.body, content_type)
        if r.body_b64 is not None:
            raw = base64.b64decode(r.body_b64)
            scrubbed = scrub_multipart(raw, content_type, self._rules)
            if scrubbed is not raw:
                changes["body_b64"] = base64.b64encode(scrubbed).decode("ascii")

    def _event(self, event: RecordedEvent) -> RecordedEvent:
        """An event whose JSON data held a secret, re-serialised compactly; every other
        event is returned as is (same object, same bytes)."""
        data = event.data
        if not self._data_filter(data):
            return event
        scrubbed = self._rules.json_text(data)
        return event if scrubbed == data else event.replace(data=scrubbed)

    # -- the backstop --------------------------------------------------------------------

    def _env_needles(self) -> EnvNeedles:
        # The backstop's patterns (``_secret_scan``) load when text is first checked or
        # masked: a replay that writes nothing and reports nothing never needs them.
        if self._env is None:
            from .scan import EnvNeedles  # noqa: PLC0415 - see above

            self._env = EnvNeedles(self._env_source, ignore=(self.placeholder,))
        return self._env

    def _finder(self) -> Callable[[str], list[Hit]]:
        """What finds the hits in a text, for one check however many texts it scans
        (each body, each window of a stream's assembled text, each piece of a big
        write): the environment is read once, here (issue 29: reading ``os.environ``
        for every window cost more than the window's scan). A variable set later is
        seen by the next check: every write, scan and mask is one."""
        return self._env_needles().finder(self._allow)

    def remember_environment(self) -> None:
        """Watch, from now on, for the API-key values the environment holds now, even
        once they are gone from it: a test's ``monkeypatch.setenv`` is undone before its
        cassette is written (issue 18). Called as each live request goes out."""
        self._env_needles().remember()

    def scan(self, text: str) -> list[Finding]:
        """Every secret-looking string in ``text``, located (field path in a YAML or JSON
        document, else line number) and classified; in order, without duplicates."""
        hits = self._finder()(text)
        if not hits:
            return []
        from .scan import locate  # noqa: PLC0415 - see _finder

        places = locate(text, [h.start for h in hits])
        unique = dict.fromkeys(zip(places, (h.kind for h in hits), strict=True))
        # A path is built from mapping keys, which could hold a secret too: mask it.
        masked = {where: self.mask(where) for where in dict.fromkeys(places)}
        return list(dict.fromkeys(Finding(masked[where], kind) for where, kind in unique))

    def scan_cassette(self, cassette: Cassette) -> list[Finding]:
        """What a scan of the text cannot see: secrets in the decoded bytes of each
        ``body_b64`` (a binary upload, a body kept compressed; one that cannot be
        decoded is a finding too), and secrets split across the events of a stream,
        found in its text as a client assembles it (see :mod:`.deep_scan`)."""
        from .deep_scan import deep_findings  # noqa: PLC0415 - see _finder

        found = deep_findings(cassette, self._finder())
        return list(dict.fromkeys(Finding(self.mask(w), self.mask(k)) for w, k in found))

    def check(
        self, text: str, path: Path | None = None, *, cassette: Cassette | None = None
    ) -> None:
        """Raise :class:`SecretLeakError` if ``text`` (the final serialised cassette) still
        holds a secret; ``path`` is the file the text was headed for. Given the
        ``cassette`` the text was dumped from, :meth:`scan_cassette` looks too."""
        findings = self.scan(text)
        if cassette is not None:
            findings += [f for f in self.scan_cassette(cassette) if f not in findings]
        if findings:
            raise SecretLeakError(Path(path) if path is not None else None, findings)

    def checked(
        self, pieces: Iterable[str], path: Path | None, *, cassette: Cassette, whole: Whole
    ) -> Iterator[str]:
        """The pieces of the text dumped from ``cassette`` (headed for ``path``), each
        given only once it is scanned: :meth:`check` for a text too big to hold at once
        (issue 18: a 50 MB stream's text, held to be scanned, was a third of recording's
        memory). Nothing unscanned is handed on, so nothing unscanned reaches disk,
        not even a temporary file. Where something is found, ``whole()`` gives the
        whole text, whose :meth:`check` decides and names where."""
        from .scan import PieceScan  # noqa: PLC0415 - see _finder

        if self.scan_cassette(cassette):  # it needs no text: before anything is written
            self.check(whole(), path, cassette=cassette)  # raises, naming all it finds
        scan: PieceScan | None = PieceScan(self._finder())
        for piece in pieces:
            if scan is not None and scan.finds(piece):
                self.check(whole(), path)  # raises, unless the hit was a false one
                scan = None  # the whole text is clean: so is every piece
            yield piece

    def mask(self, text: str) -> str:
        """``text`` with every secret-looking string replaced by the placeholder — for
        error messages, diffs, reprs and failure reports.

        URLs in the text first get the scrubbing a cassette's URLs get (``?key=``,
        ``sig=``, ``#access_token=``, a userinfo password): a message must not show a
        credential that the cassette itself would never hold, even one of no known
        shape. Then everything the backstop would find is replaced.
        """
        if "://" in text:
            text = _URL_IN_TEXT.sub(lambda m: self._rules.url(m.group(0)), text)
        if "?" in text and "=" in text:  # a relative one: ``Location: /next?token=…``
            text = _PATH_IN_TEXT.sub(lambda m: self._rules.url(m.group(0)), text)
        from .scan import merge_spans  # noqa: PLC0415 - see _finder

        spans = merge_spans(self._finder()(text))
        if not spans:
            return text
        out, last = [], 0
        for start, end in spans:
            out += [text[last:start], self.placeholder]
            last = end
        out.append(text[last:])
        return "".join(out)


def default_scrubber() -> Scrubber:
    """The scrubber every write path uses unless configured otherwise."""
    return Scrubber()


def _name(func: object) -> str:
    return getattr(func, "__qualname__", None) or repr(func)


def _content_type(headers: Mapping[str, str]) -> str:
    for name, value in headers.items():
        if name.lower() == "content-type":
            return value
    return ""


def _changed(side: RecordedRequest | RecordedResponse, changes: dict[str, Any]) -> dict[str, Any]:
    """The fields that differ from ``side`` (an event list is always a new list)."""
    return {k: v for k, v in changes.items() if k == "events" or v is not getattr(side, k)}


_URL_WITH_PARAMS = re.compile(r'://[^"\s]*[?#@]')
_URL_IN_TEXT = re.compile(r"""[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>`]*[^\s'"<>`.,;:!?)\]]""")
_PATH_IN_TEXT = re.compile(r"""(?<![\w.:/])/[^\s'"<>`?]*\?[^\s'"<>`]*[^\s'"<>`.,;:!?)\]]""")
"""A URL inside a message or repr: up to whitespace or the quote that closes it, less
the punctuation that ends the sentence around it."""


def _data_filter(body_keys: frozenset[str]) -> Callable[[str], bool]:
    """A fast pre-check on SSE data (a stream can have 100,000 events): only data that may
    hold a secret key (in any spelling), a URL with parameters or userinfo, or an escaped
    key character is parsed as JSON; everything else is left alone unparsed."""
    keys = re.compile("|".join(map(re.escape, sorted(body_keys, key=len, reverse=True))))

    def may_hold_secret(data: str) -> bool:
        if "\\u00" in data or ("://" in data and _URL_WITH_PARAMS.search(data)):
            return True
        return keys.search(data.lower().replace("_", "").replace("-", "")) is not None

    return may_hold_secret
