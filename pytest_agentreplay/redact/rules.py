"""What the default scrubber removes, and the pure functions that remove it.

The tables here are the documented defaults of :class:`~.Scrubber`
(re-exported from :mod:`pytest_agentreplay.redact`). Everything works on plain
strings, dicts and lists, never on the cassette models, so each rule can be
tested on its own. Every function returns its input object unchanged (the very
same object) when there was nothing to scrub: that is what keeps ``scrub``
idempotent and keeps untouched SSE events byte-identical.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import quote, unquote_plus

from .. import jsonparse

__all__ = [
    "AUTH_SCHEMES",
    "DROPPED_HEADERS",
    "DROPPED_HEADER_PREFIXES",
    "ENV_SUFFIXES",
    "NORMALIZED_HEADERS",
    "REQUEST_ID_PLACEHOLDER",
    "SCHEME_HEADERS",
    "SECRET_BODY_KEYS",
    "SECRET_HEADERS",
    "SECRET_HEADER_SUFFIXES",
    "SECRET_QUERY_PARAMS",
    "HeaderAction",
    "Rules",
    "normalize_key",
]

ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_KEY")
"""Environment variables whose values (>= 8 characters) the backstop searches for."""

REQUEST_ID_PLACEHOLDER = "req_agentreplay"
"""Stable stand-in for ``request-id`` / ``x-request-id``: the SDKs read these headers
(``response._request_id``, ``APIStatusError.request_id``), so replay keeps one."""

SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization"})
"""Credentials whose auth scheme is kept: ``Bearer sk-...`` becomes ``Bearer REDACTED``."""

AUTH_SCHEMES = frozenset(
    {
        "aws4-hmac-sha256",
        "basic",
        "bearer",
        "bot",
        "digest",
        "dpop",
        "hoba",
        "key",
        "mutual",
        "negotiate",
        "ntlm",
        "oauth",
        "token",
    }
)
"""Schemes kept in front of a redacted credential; any other first word is redacted too,
so a bare key followed by a space can never pass for a scheme."""

SECRET_HEADERS = frozenset(
    {
        "anthropic-organization-id",
        "anthropic-workspace-id",
        "api-key",
        "cookie",
        "helicone-auth",
        "ocp-apim-subscription-key",
        "openai-organization",
        "openai-organization-id",
        "openai-project",
        "openai-project-id",
        "set-cookie",
        "x-access-token",
        "x-amz-security-token",
        "x-api-key",
        "x-auth-token",
        "x-csrf-token",
        "x-functions-key",
        "x-goog-api-key",
        "x-xsrf-token",
    }
)
"""Request and response headers whose value is replaced by the placeholder, any case."""

SECRET_HEADER_SUFFIXES = frozenset(
    {"apikey", "auth", "key", "passwd", "password", "secret", "token"}
)
"""A header whose last ``-``/``_`` separated word is one of these is a secret too
(``x-litellm-api-key``, ``x-portkey-api-key``, ``x-subscription-token``, ...).
Not ``credentials``: ``access-control-allow-credentials: true`` is a CORS flag."""

DROPPED_HEADERS = frozenset(
    {
        "cf-ray",
        "content-length",
        "date",
        "idempotency-key",
        "openai-processing-ms",
        "server-timing",
        "traceparent",
        "traceresponse",
        "tracestate",
        "user-agent",
        "x-amz-date",
        "x-amzn-trace-id",
        "x-cloud-trace-context",
        "x-goog-api-client",
    }
)
"""Volatile headers dropped so that re-recordings diff cleanly (``content-length`` is
recomputed by replay from the stored body)."""

DROPPED_HEADER_PREFIXES = ("x-stainless-", "x-envoy-")
"""Header families dropped whole: SDK platform telemetry and proxy timings."""

_DROPPED_SUFFIXES = ("request-id", "requestid", "correlation-id", "trace-id")
"""Per-request ids other than the two the SDKs read (``apim-request-id``,
``x-ms-client-request-id``, ``x-amzn-requestid``, ``mistral-correlation-id``, ...)."""

NORMALIZED_HEADERS = frozenset({"request-id", "x-request-id"})
"""Request ids the SDKs read: set to :data:`REQUEST_ID_PLACEHOLDER`, never dropped."""

SECRET_QUERY_PARAMS = frozenset(
    {
        "access_token",
        "api-key",
        "api_key",
        "apikey",
        "auth",
        "auth_token",
        "client_secret",
        "code_verifier",
        "id_token",
        "key",
        "password",
        "refresh_token",
        "secret",
        "session_token",
        "sig",
        "signature",
        "token",
        "x-amz-credential",
        "x-amz-security-token",
        "x-amz-signature",
        "x-goog-credential",
        "x-goog-signature",
    }
)
"""Query, fragment and form parameters whose value is redacted (names compared
case-insensitively after URL-decoding); all other parameters are kept byte for byte."""

SECRET_BODY_KEYS = frozenset(
    {
        "access_token",
        "api_key",
        "apitoken",
        "auth_token",
        "authorization",
        "aws_secret_access_key",
        "aws_session_token",
        "bearer_token",
        "client_secret",
        "id_token",
        "passwd",
        "password",
        "private_key",
        "proxy_authorization",
        "refresh_token",
        "secret",
        "secret_access_key",
        "secret_key",
        "session_token",
        "x_api_key",
    }
)
"""JSON object keys (at any depth) whose value is redacted. Compared with
:func:`normalize_key`: case, ``-`` and ``_`` are ignored (``apiKey``, ``API-KEY``,
``api_key`` are one key), but the whole key must match, so ``max_tokens`` or a
logprobs ``token`` are never touched."""

HeaderAction = Literal["keep", "drop", "normalize", "secret", "scheme"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)[ \t]+\S")
_WORDS = re.compile(r"[-_]")
_URL_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_SCHEME_RELATIVE = re.compile(r"//")
_RELATIVE = ("/", "?", "./", "../")
"""How a relative URL reference starts (a path, a query, ``//host``)."""
_URLISH = re.compile("|".join([_URL_PREFIX.pattern, *map(re.escape, _RELATIVE)]))
""":data:`_URL_PREFIX` or :data:`_RELATIVE`, in one match: how a string must start for
:meth:`Rules.url` to be asked about it."""
_EMBEDDED = re.compile(r"<([^<>]*)>|(?i:\burl=)([^;,\s]+)")
"""URL references inside a header value: ``<…>`` (``link``), ``url=…`` (``refresh``)."""
_FORM_TYPE = "application/x-www-form-urlencoded"


@lru_cache(maxsize=4096)  # every replayed request's keys pass here: the same few names
def normalize_key(name: str) -> str:
    """A JSON key as compared with :data:`SECRET_BODY_KEYS`: ``Api-Key`` gives ``apikey``."""
    return _WORDS.sub("", name).lower()


def redact_credential(value: str, placeholder: str) -> str:
    """``Bearer sk-...`` → ``Bearer REDACTED``; a value with no known scheme → the placeholder."""
    if not value:
        return value
    match = _SCHEME.match(value)
    if match and match.group(1).lower() in AUTH_SCHEMES:
        return f"{match.group(1)} {placeholder}"
    return placeholder


_URL_MEMO = 512
"""How many URLs :meth:`Rules.url` remembers."""


@dataclass(frozen=True)
class Rules:
    """The scrubbing rules in force: the defaults plus a scrubber's extras."""

    placeholder: str
    secret_headers: frozenset[str]
    query_params: frozenset[str]
    body_keys: frozenset[str]
    keep_volatile: bool = False
    """Keep the volatile headers (dates, user agents, request ids) as they are: secrets
    only are scrubbed (``agentreplay diff --all``)."""
    _actions: dict[str, HeaderAction] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    """:meth:`header_action` by header name: the same few names on every request."""
    _urls: dict[str, str] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    """:meth:`url` by URL (at most :data:`_URL_MEMO`): a suite calls a few endpoints,
    and every replayed request's URL is checked (issue 29)."""

    @classmethod
    def build(
        cls,
        *,
        placeholder: str,
        extra_headers: Collection[str],
        extra_query_params: Collection[str],
        extra_body_keys: Collection[str],
        keep_volatile: bool = False,
    ) -> Rules:
        """The defaults extended by the given names (compared case-insensitively); a name
        that is not a non-empty ``str`` is a ``TypeError`` naming it."""
        for what, names in (
            ("extra_headers", extra_headers),
            ("extra_query_params", extra_query_params),
            ("extra_body_keys", extra_body_keys),
        ):
            _check_names(what, names)
        return cls(
            placeholder=placeholder,
            secret_headers=SECRET_HEADERS | {h.lower() for h in extra_headers},
            query_params=SECRET_QUERY_PARAMS | {p.lower() for p in extra_query_params},
            body_keys=frozenset(normalize_key(k) for k in (*SECRET_BODY_KEYS, *extra_body_keys)),
            keep_volatile=keep_volatile,
        )

    # -- headers -------------------------------------------------------------------------

    def header_action(self, name: str) -> HeaderAction:
        """What happens to a header called ``name`` (any case)."""
        action = self._actions.get(name)
        if action is None:
            action = self._actions[name] = self._header_action(name)
        return action

    def _header_action(self, name: str) -> HeaderAction:
        lower = name.lower()
        if lower in self.secret_headers:
            return "secret"
        if lower in NORMALIZED_HEADERS:
            return "keep" if self.keep_volatile else "normalize"
        if _is_dropped(lower):
            return "keep" if self.keep_volatile else "drop"
        if lower in SCHEME_HEADERS:
            return "scheme"
        if _WORDS.split(lower)[-1] in SECRET_HEADER_SUFFIXES:
            return "secret"
        return "keep"

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        """Scrubbed headers, in their original order and case; ``headers`` itself if unchanged."""
        out: dict[str, str] = {}
        for name, value in headers.items():
            action = self.header_action(name)
            if action == "drop":
                continue
            out[name] = self._header_value(action, value)
        return headers if out == headers else out

    def _header_value(self, action: HeaderAction, value: str) -> str:
        if action == "secret":
            return self.placeholder if value else value
        if action == "scheme":
            return redact_credential(value, self.placeholder)
        if action == "normalize":
            return REQUEST_ID_PLACEHOLDER
        # A URL-valued header (a redirect's ``location``, a ``link``) can carry a signed URL.
        return self.references(value)

    def references(self, value: str) -> str:
        """``value`` with the URLs it is or holds scrubbed: absolute (``https://…``),
        scheme-relative (``//host/…``) or relative (``/next?token=…``, ``?page=2&sig=…``),
        whole or inside ``<…>`` (a ``link``) or after ``url=`` (a ``refresh``). Issue 27:
        a relative redirect kept its token, though the docs promise query secrets are
        redacted."""
        if _URLISH.match(value) is not None:
            return self.url(value)
        if ("?" in value or "#" in value) and ("<" in value or "=" in value):
            out = _EMBEDDED.sub(self._embedded, value)
            return value if out == value else out
        return value

    def _embedded(self, match: re.Match[str]) -> str:
        whole, inner = match.group(0), match.group(1) or match.group(2)
        return whole.replace(inner, self.url(inner), 1) if inner else whole

    # -- URLs and forms ------------------------------------------------------------------

    def url(self, url: str) -> str:
        """``url`` with secret query/fragment parameters and userinfo passwords redacted."""
        known = self._urls.get(url)
        if known is not None:
            return known
        head, hash_, fragment = url.partition("#")
        base, qmark, query = head.partition("?")
        out = self._userinfo(base) + qmark + self.params(query) + hash_ + self.params(fragment)
        out = url if out == url else out
        if len(self._urls) >= _URL_MEMO:  # a bound, not a policy: start again
            self._urls.clear()
        self._urls[url] = out
        return out

    def _userinfo(self, base: str) -> str:
        scheme = _URL_PREFIX.match(base) or _SCHEME_RELATIVE.match(base)
        if scheme is None:
            return base
        authority, slash, path = base[scheme.end() :].partition("/")
        userinfo, at, host = authority.rpartition("@")
        if not at or not userinfo:
            return base
        user, colon, password = userinfo.partition(":")
        if colon and not password:
            return base  # "user:@host": nothing secret
        safe = f"{user}:{self._quoted}" if colon else self._quoted
        return f"{scheme.group(0)}{safe}@{host}{slash}{path}"

    @property
    def _quoted(self) -> str:
        return quote(self.placeholder, safe="")

    def params(self, text: str) -> str:
        """``a=1&key=xyz`` → ``a=1&key=REDACTED``: only secret names change, order and
        encoding of everything else kept (works for queries, fragments and form bodies)."""
        if "=" not in text:
            return text
        pieces = text.split("&")
        for i, piece in enumerate(pieces):
            name, eq, value = piece.partition("=")
            if eq and value and unquote_plus(name).lower() in self.query_params:
                pieces[i] = f"{name}={self._quoted}"
        return "&".join(pieces)

    # -- JSON ----------------------------------------------------------------------------

    def json_value(self, value: Any) -> Any:
        """A parsed JSON value with secret keys (any depth) and signed-URL parameters
        inside string values redacted; the same object when nothing changed."""
        if self.clean(value):
            return value  # the common case, found without building a copy to compare
        if isinstance(value, dict):
            return self._json_object(value)
        if isinstance(value, list):
            return _same_or_new(value, [self.json_value(v) for v in value])
        if isinstance(value, str) and _URLISH.match(value) is not None:
            return self.url(value)  # a signed or paginated URL, absolute or relative
        return value

    def clean(self, value: Any) -> bool:
        """Whether :meth:`json_value` surely leaves ``value`` as it is: plain JSON types
        only, no key it redacts, no string it reads as a URL that :meth:`url` changes.
        ``False`` means "walk it": every request a cassette replays is scrubbed before
        it is matched, and nearly all of them hold nothing to scrub (issue 29)."""
        keys = self.body_keys
        todo = [value]
        for node in todo:  # the list grows as it is read: every value once, in order
            kind = type(node)
            if kind is str:
                if _URLISH.match(node) is not None and self.url(node) != node:
                    return False
            elif kind is dict:
                try:  # the names in one call: a name that is not text raises
                    if not keys.isdisjoint(map(normalize_key, node)):
                        return False
                except TypeError:
                    return False
                todo += node.values()
            elif kind is list:
                todo += node
            elif kind is not int and kind is not float and kind is not bool and node is not None:
                return False  # a subclass, or not JSON: the walk decides
        return True

    def _json_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = {
            k: self._secret(v, k) if normalize_key(k) in self.body_keys else self.json_value(v)
            for k, v in obj.items()
        }
        return obj if _unchanged(obj, out) else out

    def _secret(self, value: Any, key: str) -> Any:
        """The value under a secret key: strings redacted (lists of them too); an object
        keeps its shape, only its ``value`` field is redacted (OpenAI Realtime's
        ``client_secret: {value, expires_at}``), so a JSON-schema definition named
        ``Secret`` or a tool parameter named ``password`` is not mangled."""
        if isinstance(value, str):
            keep_scheme = normalize_key(key) in {"authorization", "proxyauthorization"}
            if keep_scheme:
                return redact_credential(value, self.placeholder)
            return self.placeholder if value else value
        if isinstance(value, list):
            return _same_or_new(value, [self._secret(v, key) for v in value])
        if isinstance(value, dict):
            walked = self._json_object(value)
            inner = walked.get("value")
            if isinstance(inner, str) and inner and inner != self.placeholder:
                walked = {**walked, "value": self.placeholder}
            return walked
        return value

    def json_text(self, text: str) -> str:
        """JSON text scrubbed: unchanged text when nothing needed scrubbing, else the
        scrubbed value re-serialised compactly (as providers send it). Text that is not
        JSON is returned as is."""
        try:
            value = jsonparse.loads(text)
        except ValueError:
            return text
        scrubbed = self.json_value(value)
        if scrubbed is value:
            return text
        return json.dumps(scrubbed, ensure_ascii=False, separators=(",", ":"))

    def body_text(self, text: str, content_type: str) -> str:
        """A stored text body: form bodies by parameter, JSON bodies by key."""
        ctype = content_type.lower()
        if _FORM_TYPE in ctype:
            return self.params(text)
        if "json" in ctype:
            return self.json_text(text)
        return text


def _check_names(what: str, names: Collection[str]) -> None:
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"{what} must hold names (non-empty str), got {name!r}")


def _is_dropped(lower: str) -> bool:
    if lower in DROPPED_HEADERS or lower.startswith(DROPPED_HEADER_PREFIXES):
        return True
    if lower.endswith(_DROPPED_SUFFIXES):
        return True
    # Rate-limit resets are timestamps/durations that change on every recording; the
    # limits and remaining counts are kept because clients act on them.
    return "ratelimit" in lower and "reset" in _WORDS.split(lower)


def _unchanged(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return all(new[k] is v for k, v in old.items())


def _same_or_new(old: list[Any], new: list[Any]) -> list[Any]:
    return old if all(a is b for a, b in zip(old, new, strict=True)) else new
