"""The backstop's key shapes as they were before issue 29: the baseline of ``secret_scan.py``.

A frozen copy of ``pytest_agentreplay/redact/shapes.py`` at commit 37ebc56 (each shape
searched on its own: forty ``anchor in text`` tests and regex passes), kept so that the
bench measures today's scanner against this one in the same run, and so that the tests
(``tests/redact/test_prefilter.py``) check the new one finds exactly what this one
finds. Do not edit it: it is the reference. :func:`find` is ``redact.scan.find`` of the
same commit with these shapes; the rest (escapes, environment values) is the package's.

--- the frozen module follows ---
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pytest_agentreplay.redact import Scrubber
from pytest_agentreplay.redact.escapes import unescaped
from pytest_agentreplay.redact.scan import EnvNeedles
from pytest_agentreplay.redact.shapes import Hit

__all__ = ["KEY_SHAPES", "BaselineScrubber", "find", "shape_hits"]

_KEYCHAR_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_KEYCHARS = frozenset(_KEYCHAR_STR)
_ESCAPES = frozenset({"\\n", "\\t", "\\r", "\\b", "\\f", "\\/", "\\\\"})
_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def _has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _not_word_like(token: str) -> bool:
    """``Bearer YOUR_API_KEY_HERE`` in documentation is not a token; random ones are."""
    return not (re.fullmatch(r"[A-Z_.-]+", token) or re.fullmatch(r"[a-z_.-]+", token))


def _basic_credentials(token: str) -> bool:
    """A ``Basic`` token that decodes to ``user:password``."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw and raw.isascii() and raw.decode("ascii").isprintable()


def _url_password(password: str) -> bool:
    """A password in a URL's userinfo, not a placeholder (``REDACTED``, ``password``,
    ``***``, ``${DB_PASSWORD}``, ``<pass>``): one word of one case is taken for one."""
    return _not_word_like(password) and re.fullmatch(r"[*xX.]+|[<{$%].*", password) is None


@dataclass(frozen=True)
class _Shape:
    """A key shape: ``pattern`` (group 1, if any, is the secret part), an optional
    ``accept`` test on it, and ``lead``: characters one of which must come just before
    the match. Patterns start with a literal because ``re`` then scans fast (a leading
    character class is ten times slower), so ``[Bb]earer`` is written as ``earer``
    with ``lead="Bb"``."""

    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[str], bool] | None = None
    boundary: bool = True
    lead: str = ""
    anchor: str = ""
    """The fixed text every match starts with: a text without it is not searched
    (``str.__contains__`` is many times faster than a regex pass, and most texts hold
    none of the shapes; issue 18 added fifteen)."""


def _shape(
    kind: str,
    regex: str,
    accept: Callable[[str], bool] | None = None,
    *,
    boundary: bool = True,
    lead: str = "",
) -> _Shape:
    return _Shape(kind, re.compile(regex), accept, boundary, lead, _anchor(regex))


def _anchor(regex: str) -> str:
    """The literal text ``regex`` always starts with (``""`` if none is certain)."""
    if "|" in re.sub(r"\([^()]*\)", "", regex):
        return ""  # alternatives at the top: no common start
    literal = re.match(r"[A-Za-z0-9_-]*", regex)
    text = literal.group(0) if literal else ""
    if regex[len(text) : len(text) + 1] in ("?", "*", "{"):
        text = text[:-1]  # the last character is optional or repeated
    return text


_TAIL = r"(?![A-Za-z0-9_-])"
_BEARER = r"[ \t]+([A-Za-z0-9._~+/=-]{16,})"
_BASIC = r"[ \t]+([A-Za-z0-9+/]{12,}={0,2})"
KEY_SHAPES: tuple[_Shape, ...] = (
    _shape("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    _shape("openai-key", r"sk-(?!ant-)[A-Za-z0-9_-]{20,}", _has_digit),
    _shape("stripe-key", r"k_live_[A-Za-z0-9]{20,}", lead="rs"),
    _shape("google-api-key", r"AIza[0-9A-Za-z_-]{35}" + _TAIL),
    _shape("google-oauth-token", r"ya29\.[0-9A-Za-z_-]{20,}"),
    _shape("groq-key", r"gsk_[A-Za-z0-9]{40,}"),
    _shape("huggingface-token", r"hf_[A-Za-z0-9]{30,}"),
    _shape("github-token", r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}"),
    _shape("aws-access-key-id", r"(?:AKIA|ASIA)[A-Z0-9]{16}" + _TAIL),
    _shape("slack-token", r"xox[abposr]-[A-Za-z0-9-]{10,}", _has_digit),
    _shape("posthog-key", r"phc_[A-Za-z0-9]{30,}"),
    _shape("xai-key", r"xai-[A-Za-z0-9]{40,}"),
    _shape("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _shape("private-key", r"-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----", boundary=False),
    # Issue 18: the shapes detect-secrets knew and the backstop did not, each anchored
    # on fixed text (no entropy test: it fires on every signature and base64 blob).
    _shape(
        "gitlab-token",
        r"gl(?:pat|ptt|dt|rt|soat|cbt|ffct|ft|imt|agent|oas|wt)-[A-Za-z0-9_-]{20,}" + _TAIL,
        _has_digit,
    ),
    _shape("gitlab-runner-token", r"GR1348941[A-Za-z0-9_-]{20,}" + _TAIL),
    _shape("npm-token", r"npm_[A-Za-z0-9]{36}" + _TAIL),
    _shape("pypi-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    _shape("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _TAIL),
    _shape(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
        boundary=False,
    ),
    _shape("square-token", r"sq0(?:csp|atp)-[A-Za-z0-9_-]{22,}" + _TAIL),
    _shape("twilio-key", r"SK[0-9a-fA-F]{32}" + _TAIL),
    _shape("replicate-token", r"r8_[A-Za-z0-9]{37}" + _TAIL, _has_digit),
    _shape("databricks-token", r"dapi[0-9a-f]{32}(?:-[0-9])?" + _TAIL),
    *(
        _shape("azure-storage-key", label + r"=([A-Za-z0-9+/]{40,}={0,2})", boundary=False)
        for label in ("AccountKey", "SharedAccessKey")  # one literal each: scans faster
    ),
    *(
        _shape(
            "aws-secret-access-key",
            label
            + r"[\\\"']{0,3}[ \t]*[:=][ \t]*[\\\"']{0,3}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            _not_word_like,
            boundary=False,
            lead="Ss",
        )
        for label in ("ecret_?[Aa]ccess_?[Kk]ey", "ECRET_?ACCESS_?KEY")
    ),
    _shape(
        "url-password", r"://[^/\s:@\\\"'<>]*:([^/\s@\\\"'<>]+)@", _url_password, boundary=False
    ),
    *(
        _shape("bearer-token", word + _BEARER, _not_word_like, lead="Bb")
        for word in ("earer", "EARER")
    ),
    *(
        _shape("basic-auth", word + _BASIC, _basic_credentials, lead="Bb")
        for word in ("asic", "ASIC")
    ),
)
"""Known credential shapes, by kind. ``T3BlbkFJ`` (base64 of "OpenAI", the marker in
OpenAI keys) is searched separately: see :func:`_openai_marker`."""

_MARKER = "T3BlbkFJ"
_MARKER_TOKEN = (40, 220)  # length of an OpenAI key token around the marker
_B64_BEFORE = _KEYCHARS | {"+", "/"}  # "=" before a token is a delimiter (key=...)
_B64_AFTER = _B64_BEFORE | {"="}  # ... but after one it is base64 padding


def _at_boundary(text: str, start: int) -> bool:
    """Whether a token starts at ``start``: after a non-token character, a JSON/YAML
    escape (``\\n``) or a URL escape (``%20``) — none of which occur in base64."""
    if start == 0 or text[start - 1] not in _KEYCHARS:
        return True
    escaped = text[start - 2 : start] in _ESCAPES
    return escaped or _URL_ESCAPE.fullmatch(text[start - 3 : start]) is not None


def _shape_hits(text: str, shape: _Shape) -> Iterable[Hit]:
    if shape.anchor not in text:
        return
    for match in shape.pattern.finditer(text):
        start = match.start()
        if shape.lead:
            if start == 0 or text[start - 1] not in shape.lead:
                continue
            start -= 1
        if shape.boundary and not _at_boundary(text, start):
            continue
        group = 1 if shape.pattern.groups else 0
        if shape.accept is not None and not shape.accept(match.group(group)):
            continue
        yield Hit(match.start(group) if group else start, match.end(group), shape.kind)


_NON_KEY = re.compile(r"[^A-Za-z0-9_-]")


def _openai_marker(text: str) -> Iterable[Hit]:
    """A token of key length with ``T3BlbkFJ`` inside, standing alone: not part of a
    longer base64 run (a base64 PDF mentioning "OpenAI" contains the marker too).
    Linear time: a token is measured once, however many markers it holds."""
    shortest, longest = _MARKER_TOKEN
    done = 0
    for match in re.finditer(_MARKER, text):
        if match.start() < done:
            continue  # inside a token already measured
        stop = _NON_KEY.search(text, match.end())
        end = stop.start() if stop else len(text)
        done = end
        window = text[max(0, match.start() - longest) : match.start()]
        start = match.start() - (len(window) - len(window.rstrip(_KEYCHAR_STR)))
        standalone = (start == 0 or text[start - 1] not in _B64_BEFORE) and (
            end == len(text) or text[end] not in _B64_AFTER
        )
        if standalone and shortest <= end - start <= longest:
            yield Hit(start, end, "openai-key-marker")


_TELEGRAM = re.compile(r":AA[A-Za-z0-9_-]{33}" + _TAIL)
_MAILCHIMP = re.compile(r"-us[0-9]{1,2}" + _TAIL)
_HEX32 = re.compile(r"[0-9a-f]{32}")


def _telegram(text: str) -> Iterable[Hit]:
    """A Telegram bot token, ``123456789:AA…`` (found by its fixed ``:AA``, the bot id
    read backwards), alone or after ``bot`` as in its API URLs."""
    if ":AA" not in text:
        return
    for match in _TELEGRAM.finditer(text):
        before = text[max(0, match.start() - 10) : match.start()]
        digits = len(before) - len(before.rstrip("0123456789"))
        start = match.start() - digits
        if digits >= 8 and (_at_boundary(text, start) or text[start - 3 : start] == "bot"):
            yield Hit(start, match.end(), "telegram-bot-token")


_DISCORD = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _TAIL)


def _discord(text: str) -> Iterable[Hit]:
    """A Discord bot token, ``M…(24-26).……(6).……(27-38)``, found by its two dots (a
    leading ``[MNO]`` class made the scan of every text four times slower)."""
    for match in _DISCORD.finditer(text):
        window = text[max(0, match.start() - 27) : match.start()]
        size = len(window) - len(window.rstrip(_KEYCHAR_STR))
        start = match.start() - size
        token = text[start : match.end()]
        shaped = 24 <= size <= 26 and token[0] in "MNO" and _has_digit(token)
        if shaped and _at_boundary(text, start):
            yield Hit(start, match.end(), "discord-bot-token")


def _mailchimp(text: str) -> Iterable[Hit]:
    """A Mailchimp key, 32 hex digits then ``-usNN`` (found by its fixed ``-us``): the
    whole key is the hit, not the data-centre suffix alone."""
    if "-us" not in text:
        return
    for match in _MAILCHIMP.finditer(text):
        start = match.start() - 32
        if (
            start >= 0
            and _HEX32.fullmatch(text, start, match.start())
            and _at_boundary(text, start)
        ):
            yield Hit(start, match.end(), "mailchimp-key")


def shape_hits(text: str) -> set[Hit]:
    """Every key-shaped string in ``text``."""
    hits: set[Hit] = set(_openai_marker(text))
    hits.update(_telegram(text))
    hits.update(_mailchimp(text))
    hits.update(_discord(text))
    for shape in KEY_SHAPES:
        hits.update(_shape_hits(text, shape))
    return hits


# -- redact.scan.find of the same commit, with these shapes ---------------------------------


def find(text: str, env: EnvNeedles, allow: frozenset[str]) -> list[Hit]:
    """All hits in ``text``, as the backstop found them before issue 29."""
    hits = {h for h in _plain_hits(text, env) if text[h.start : h.end] not in allow}
    view = unescaped(text)
    if view is not None:
        spans = {(h.start, h.end) for h in hits}
        for hit in _plain_hits(view.text, env):
            value = view.text[hit.start : hit.end]
            start, end = view.original(hit.start), view.original(hit.end)
            if value in allow or (start, end) in spans:
                continue
            escaped = text[start:end] != value
            hits.add(Hit(start, end, f"{hit.kind} (escaped)" if escaped else hit.kind))
    return sorted(hits)


def _plain_hits(text: str, env: EnvNeedles) -> set[Hit]:
    hits = shape_hits(text)
    hits.update(env.hits(text))
    return hits


class BaselineScrubber(Scrubber):
    """A :class:`Scrubber` whose backstop is the one before issue 29 (all else alike)."""

    def _finder(self) -> Callable[[str], list[Hit]]:
        return lambda text: find(text, self._env_needles(), self._allow)
