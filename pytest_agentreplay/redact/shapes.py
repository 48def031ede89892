"""Key shapes: credentials found by what they look like, each anchored on fixed text.

False positives matter as much as misses: a backstop that fires on real data gets
switched off. Each shape therefore starts at a token boundary (the character
before it is not ``[A-Za-z0-9_-]``, or a JSON/YAML escape such as ``\\n``) and has
a minimum length and charset; ``sk-...`` must contain a digit. The real corpus
has ``encrypted_content`` reasoning blobs (URL-safe base64) holding fragments
like ``Osk-z0QB...`` and ``cHf_3p3...``: the boundary rule is what rejects them
(in standard base64 ``-`` never occurs, so ``sk-`` cannot appear at all). There
is no entropy test: it fires on every signature, id and base64 blob of a real
recording (issue 18 compared detect-secrets).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .prefilter import Prefilter, Trigger

__all__ = ["KEY_SHAPES", "PREFILTER", "Hit", "shape_hits"]

_KEYCHAR_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_KEYCHARS = frozenset(_KEYCHAR_STR)
_ESCAPES = frozenset({"\\n", "\\t", "\\r", "\\b", "\\f", "\\/", "\\\\"})
_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True, order=True)
class Hit:
    """A secret found at ``text[start:end]`` (the value is never kept)."""

    start: int
    end: int
    kind: str


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
    """A key shape: ``regex`` (group 1, if any, is the secret part), an optional
    ``accept`` test on it, and ``lead``: characters one of which must come just before
    the match (``[Bb]earer`` is written as ``earer`` with ``lead="Bb"``)."""

    kind: str
    regex: str
    accept: Callable[[str], bool] | None = None
    boundary: bool = True
    lead: str = ""
    starts: tuple[str, ...] = ()
    """The fixed texts every match starts with, one of them: the pattern is matched only
    where :data:`PREFILTER` finds one (issue 29: forty anchors searched one by one, and
    the short ones hitting almost any text, made the scan the slowest step of a write).
    ``tests/redact/test_prefilter.py`` checks that each pattern's matches start so."""

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """``regex``, compiled where :data:`PREFILTER` first finds one of its starts:
        compiling forty shapes was 3 ms of every run that loads the scrubber, and a
        replayed suite whose texts hold no key's start never needs them (issue 29)."""
        return re.compile(self.regex)


def _shape(
    kind: str,
    regex: str,
    accept: Callable[[str], bool] | None = None,
    *,
    boundary: bool = True,
    lead: str = "",
    starts: Sequence[str] = (),
) -> _Shape:
    return _Shape(kind, regex, accept, boundary, lead, tuple(starts) or (_anchor(regex),))


def _anchor(regex: str) -> str:
    """The literal text ``regex`` starts with, up to its first special character. A
    pattern with alternatives at its top, or none of this, names its ``starts``."""
    literal = _LITERAL.match(regex)
    assert literal is not None  # it matches the empty string
    text = re.sub(r"\\(.)", r"\1", literal.group(0))
    if regex[literal.end() : literal.end() + 1] in ("?", "*", "{"):
        text = text[:-1]  # the last character is optional or repeated
    if not text or "|" in re.sub(r"\([^()]*\)", "", regex):
        raise ValueError(f"a key shape needs its fixed starts named: {regex!r}")
    return text


_LITERAL = re.compile(r"(?:[A-Za-z0-9_=:/-]|\\[./-])*")


def _spelled(*parts: str) -> tuple[str, ...]:
    """Every text made of one choice from each part (``"|"`` between choices):
    ``_spelled("ecret", "_|", "A|a")`` gives ``ecret_A``, ``ecret_a``, ``ecretA``, ..."""
    out = [""]
    for part in parts:
        out = [head + choice for head in out for choice in part.split("|")]
    return tuple(out)


_TAIL = r"(?![A-Za-z0-9_-])"
_GITLAB = "pat|ptt|dt|rt|soat|cbt|ffct|ft|imt|agent|oas|wt"
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
    _shape(
        "github-token",
        r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}",
        starts=(*_spelled("gh", "p|o|u|s|r", "_"), "github_pat_"),
    ),
    _shape("aws-access-key-id", r"(?:AKIA|ASIA)[A-Z0-9]{16}" + _TAIL, starts=("AKIA", "ASIA")),
    _shape(
        "slack-token",
        r"xox[abposr]-[A-Za-z0-9-]{10,}",
        _has_digit,
        starts=_spelled("xox", "a|b|p|o|s|r", "-"),
    ),
    _shape("posthog-key", r"phc_[A-Za-z0-9]{30,}"),
    _shape("xai-key", r"xai-[A-Za-z0-9]{40,}"),
    _shape("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _shape("private-key", r"-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----", boundary=False),
    # Issue 18: the shapes detect-secrets knew and the backstop did not, each anchored
    # on fixed text (no entropy test: it fires on every signature and base64 blob).
    _shape(
        "gitlab-token",
        r"gl(?:" + _GITLAB + r")-[A-Za-z0-9_-]{20,}" + _TAIL,
        _has_digit,
        starts=_spelled("gl", _GITLAB, "-"),
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
    _shape(
        "square-token", r"sq0(?:csp|atp)-[A-Za-z0-9_-]{22,}" + _TAIL, starts=("sq0csp-", "sq0atp-")
    ),
    _shape("twilio-key", r"SK[0-9a-fA-F]{32}" + _TAIL),
    _shape("replicate-token", r"r8_[A-Za-z0-9]{37}" + _TAIL, _has_digit),
    _shape("databricks-token", r"dapi[0-9a-f]{32}(?:-[0-9])?" + _TAIL),
    *(
        _shape("azure-storage-key", label + r"=([A-Za-z0-9+/]{40,}={0,2})", boundary=False)
        for label in ("AccountKey", "SharedAccessKey")
    ),
    *(
        _shape(
            "aws-secret-access-key",
            label
            + r"[\\\"']{0,3}[ \t]*[:=][ \t]*[\\\"']{0,3}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            _not_word_like,
            boundary=False,
            lead="Ss",
            starts=starts,
        )
        for label, starts in (
            (
                "ecret_?[Aa]ccess_?[Kk]ey",
                _spelled("ecret", "_|", "A|a", "ccess", "_|", "K|k", "ey"),
            ),
            ("ECRET_?ACCESS_?KEY", _spelled("ECRET", "_|", "ACCESS", "_|", "KEY")),
        )
    ),
    _shape(
        "url-password", r"://[^/\s:@\\\"'<>]*:([^/\s@\\\"'<>]+)@", _url_password, boundary=False
    ),  # found by its "@" (see _FOUND_BY)
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


def _matches(pattern: re.Pattern[str], text: str, places: Sequence[int]) -> Iterable[re.Match[str]]:
    """What ``pattern.finditer(text)`` gives, trying only ``places`` (in order): every
    match starts at one of them, and a match hides those it overlaps, as in finditer."""
    end = 0
    for place in places:
        if place < end:
            continue
        match = pattern.match(text, place)
        if match is not None:
            end = max(match.end(), place + 1)
            yield match


def _shape_hits(text: str, shape: _Shape, places: Sequence[int]) -> Iterable[Hit]:
    for match in _matches(shape.pattern, text, places):
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


def _openai_marker(text: str, places: Sequence[int]) -> Iterable[Hit]:
    """A token of key length with ``T3BlbkFJ`` inside, standing alone: not part of a
    longer base64 run (a base64 PDF mentioning "OpenAI" contains the marker too).
    Linear time: a token is measured once, however many markers it holds."""
    shortest, longest = _MARKER_TOKEN
    done = 0
    for place in places:
        if place < done:
            continue  # inside a token already measured
        stop = _NON_KEY.search(text, place + len(_MARKER))
        end = stop.start() if stop else len(text)
        done = end
        window = text[max(0, place - longest) : place]
        start = place - (len(window) - len(window.rstrip(_KEYCHAR_STR)))
        standalone = (start == 0 or text[start - 1] not in _B64_BEFORE) and (
            end == len(text) or text[end] not in _B64_AFTER
        )
        if standalone and shortest <= end - start <= longest:
            yield Hit(start, end, "openai-key-marker")


_TELEGRAM = re.compile(r":AA[A-Za-z0-9_-]{33}" + _TAIL)
_MAILCHIMP = re.compile(r"-us[0-9]{1,2}" + _TAIL)
_HEX32 = re.compile(r"[0-9a-f]{32}")


def _telegram(text: str, places: Sequence[int]) -> Iterable[Hit]:
    """A Telegram bot token, ``123456789:AA…`` (found by its fixed ``:AA``, the bot id
    read backwards), alone or after ``bot`` as in its API URLs."""
    for match in _matches(_TELEGRAM, text, places):
        before = text[max(0, match.start() - 10) : match.start()]
        digits = len(before) - len(before.rstrip("0123456789"))
        start = match.start() - digits
        if digits >= 8 and (_at_boundary(text, start) or text[start - 3 : start] == "bot"):
            yield Hit(start, match.end(), "telegram-bot-token")


_DISCORD_AFTER_DOT = r"[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"
_DISCORD = re.compile(r"\." + _DISCORD_AFTER_DOT[:-4] + "{27,38}" + _TAIL)


def _discord(text: str, places: Sequence[int]) -> Iterable[Hit]:
    """A Discord bot token, ``M…(24-26).……(6).……(27-38)``, found by its two dots (a
    leading ``[MNO]`` class made the scan of every text four times slower)."""
    for match in _matches(_DISCORD, text, places):
        window = text[max(0, match.start() - 27) : match.start()]
        size = len(window) - len(window.rstrip(_KEYCHAR_STR))
        start = match.start() - size
        token = text[start : match.end()]
        shaped = 24 <= size <= 26 and token[0] in "MNO" and _has_digit(token)
        if shaped and _at_boundary(text, start):
            yield Hit(start, match.end(), "discord-bot-token")


def _mailchimp(text: str, places: Sequence[int]) -> Iterable[Hit]:
    """A Mailchimp key, 32 hex digits then ``-usNN`` (found by its fixed ``-us``): the
    whole key is the hit, not the data-centre suffix alone."""
    for match in _matches(_MAILCHIMP, text, places):
        start = match.start() - 32
        if (
            start >= 0
            and _HEX32.fullmatch(text, start, match.start())
            and _at_boundary(text, start)
        ):
            yield Hit(start, match.end(), "mailchimp-key")


_Finder = Callable[[str, Sequence[int]], Iterable[Hit]]


def _url_starts(text: str, places: Sequence[int]) -> list[int]:
    """Where a URL's userinfo may begin, given each ``@`` (in order): the last ``://``
    before it and after the ``@`` before it. A match holds no ``/`` and no ``@`` between
    its ``://`` and the ``@`` that ends it, so its ``://`` is that one; and each part
    of the text is read back once, however many ``@`` it holds."""
    starts, after = [], 0
    for at in places:
        start = text.rfind("://", after, at)
        if start >= 0:
            starts.append(start)
        after = at + 1
    return starts


_FOUND_BY: dict[str, tuple[str, Callable[[str, Sequence[int]], list[int]]]] = {
    "url-password": ("@", _url_starts),
}
"""Shapes found by a character every match holds rather than by their starts, and how
to go from its places to the starts (issue 29). ``://`` is in almost every recording,
so a pass for it read nearly all of the text; ``@``, which ends every match of the
URL password, is in almost none, and a text without it costs one ``memchr``."""


def _finder(shape: _Shape) -> _Finder:
    if shape.kind in _FOUND_BY:
        _, starts = _FOUND_BY[shape.kind]
        return lambda text, places: _shape_hits(text, shape, starts(text, places))
    return lambda text, places: _shape_hits(text, shape, places)


def _triggers(name: str, shape: _Shape) -> Iterable[Trigger]:
    if shape.kind in _FOUND_BY:
        return (Trigger(_FOUND_BY[shape.kind][0], name),)
    return (Trigger(start, name) for start in shape.starts)


_FINDERS: dict[str, _Finder] = {
    "openai-key-marker": _openai_marker,
    "telegram-bot-token": _telegram,
    "mailchimp-key": _mailchimp,
    "discord-bot-token": _discord,
    **{f"{n}:{shape.kind}": _finder(shape) for n, shape in enumerate(KEY_SHAPES)},
}
PREFILTER = Prefilter(
    (
        Trigger(_MARKER, "openai-key-marker"),
        Trigger(":AA", "telegram-bot-token"),
        Trigger("-us", "mailchimp-key"),
        # Its one fixed character is common ("."): the rest of its start is checked in
        # the pass, so only the dots that begin ``.xxxxxx.`` (and a little more) reach
        # Python.
        Trigger(".", "discord-bot-token", guard=_DISCORD_AFTER_DOT),
        *(
            trigger
            for n, shape in enumerate(KEY_SHAPES)
            for trigger in _triggers(f"{n}:{shape.kind}", shape)
        ),
    )
)
"""Where each shape (and each of the four shapes found by hand) may start: the shapes'
patterns are matched only there."""


def shape_hits(text: str) -> set[Hit]:
    """Every key-shaped string in ``text``."""
    hits: set[Hit] = set()
    for owner, places in PREFILTER.find(text).items():
        hits.update(_FINDERS[owner](text, places))
    return hits
