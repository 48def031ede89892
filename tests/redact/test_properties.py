"""Properties of scrubbing over generated cassettes: idempotent, input never modified,
nothing changed when there is nothing secret, no planted secret survives, and
``mask`` leaves nothing for ``scan`` to find."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.cassette import Cassette, Interaction
from pytest_agentreplay.redact import Scrubber
from tests.redact._helpers import dump, request, response

SCRUBBER = Scrubber(env={})

# Innocuous names (hand-picked, including near-misses of secret names).
SAFE_HEADERS = [
    "content-type",
    "accept",
    "anthropic-version",
    "anthropic-beta",
    "openai-version",
    "x-should-retry",
    "retry-after",
    "cache-control",
    "x-app-trace",
    "x-ratelimit-limit-tokens",
    "anthropic-ratelimit-tokens-remaining",
    "x-keyboard-layout",
    "x-tokens-used",
    "vary",
]
SECRET_HEADERS = [
    "authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "anthropic-workspace-id",
    "x-goog-api-key",
    "x-amz-security-token",
    "set-cookie",
    "proxy-authorization",
    "x-auth-token",
]
SAFE_KEYS = [
    "model",
    "max_tokens",
    "messages",
    "content",
    "role",
    "token",
    "tokens",
    "key",
    "key_points",
    "secretary",
    "passwords_seen",
    "type",
    "text",
    "id",
    "usage",
    "input_tokens",
    "value",
]
SECRET_KEYS = [
    "api_key",
    "apiKey",
    "client_secret",
    "access_token",
    "password",
    "Secret",
    "id_token",
]
SAFE_PARAMS = ["alt", "beta", "stream", "api-version", "starting_after", "q", "page"]
SECRET_PARAMS = ["key", "api_key", "token", "sig", "X-Amz-Signature", "access_token"]

# Values that cannot form any key shape: short, lower-case, no escapes.
SAFE_TEXT = st.text(string.ascii_lowercase + string.digits + " .,:;/()", max_size=15)
# Planted secrets: distinctive, so "did it survive" is a plain substring test.
SECRETS = st.text(string.ascii_uppercase + string.digits, min_size=6, max_size=12).map(
    lambda s: f"QQ{s}ZZ"
)


def _case(name: str) -> st.SearchStrategy[str]:
    return st.sampled_from([name, name.upper(), name.title()])


def _json(keys: list[str], leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), leaves)
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(keys), inner, max_size=4),
        ),
        max_leaves=12,
    )


def _event_data(body: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    as_json = st.builds(
        lambda v, spaced: json.dumps(v, separators=(", ", ": ") if spaced else (",", ":")),
        st.dictionaries(st.sampled_from(SAFE_KEYS), body, min_size=1, max_size=3),
        st.booleans(),
    )
    with_url = st.builds(
        lambda v, spaced: json.dumps(
            {"url": f"https://example.com/{v}?id=1#top"},
            separators=(", ", ": ") if spaced else None,
        ),
        SAFE_TEXT,
        st.booleans(),
    )
    return st.one_of(
        as_json, with_url, st.just("[DONE]"), SAFE_TEXT.filter(lambda s: "\r" not in s)
    )


def _url(params: st.SearchStrategy[list[tuple[str, str]]]) -> st.SearchStrategy[str]:
    def build(path: str, pairs: list[tuple[str, str]], fragment: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in pairs)
        return f"https://api.example.com/v1/{path}" + (f"?{query}" if query else "") + fragment

    return st.builds(
        build,
        st.sampled_from(["messages", "chat/completions", "responses"]),
        params,
        st.sampled_from(["", "#stream"]),
    )


SAFE_VALUE = SAFE_TEXT.filter(lambda s: s and s.strip() == s)


@st.composite
def safe_interactions(draw: st.DrawFn) -> Interaction:
    """Interactions with no secret and no volatile header anywhere."""
    headers = draw(st.dictionaries(st.sampled_from(SAFE_HEADERS), SAFE_VALUE, max_size=4))
    params = st.lists(
        st.tuples(
            st.sampled_from(SAFE_PARAMS),
            SAFE_VALUE.map(lambda s: s.replace(" ", "+").replace("#", "")),
        ),
        max_size=3,
    )
    body = _json(SAFE_KEYS, SAFE_TEXT)
    stream = draw(st.booleans())
    return Interaction(
        request=request(draw(_url(params)), headers=headers, json_body=draw(body)),
        response=response(
            headers=draw(st.dictionaries(st.sampled_from(SAFE_HEADERS), SAFE_VALUE, max_size=4)),
            events=draw(st.lists(_event_data(body), max_size=5)) if stream else None,
            json_body=None if stream else draw(body),
        ),
    )


@st.composite
def secret_interactions(draw: st.DrawFn) -> tuple[Interaction, list[str]]:
    """Interactions with planted secrets in secret slots; returns them too."""
    planted: list[str] = []

    def secret() -> str:
        value = draw(SECRETS)
        planted.append(value)
        return value

    headers = {
        draw(_case(n)): (f"Bearer {secret()}" if "auth" in n else secret())
        for n in draw(st.lists(st.sampled_from(SECRET_HEADERS), max_size=3, unique=True))
    }
    headers |= draw(st.dictionaries(st.sampled_from(SAFE_HEADERS), SAFE_VALUE, max_size=2))
    pairs = [
        (draw(_case(p)), secret())
        for p in draw(st.lists(st.sampled_from(SECRET_PARAMS), max_size=2))
    ]
    body = _json(SAFE_KEYS + SECRET_KEYS, SAFE_TEXT)
    json_body = draw(body)
    nested = {draw(st.sampled_from(SECRET_KEYS)): secret(), "messages": [{"content": "hi"}]}
    data = json.dumps({"type": "x", "session": {draw(st.sampled_from(SECRET_KEYS)): secret()}})
    return (
        Interaction(
            request=request(
                draw(_url(st.just(pairs))),
                headers=headers,
                json_body={"payload": json_body, "auth": nested},
            ),
            response=response(
                headers={draw(_case("set-cookie")): secret()},
                events=[*draw(st.lists(_event_data(body), max_size=3)), data],
            ),
        ),
        planted,
    )


def _cassette(interactions: list[Interaction]) -> Cassette:
    return Cassette(version=1, interactions=interactions)


@given(
    st.lists(st.one_of(safe_interactions(), secret_interactions().map(lambda p: p[0])), max_size=3)
)
def test_scrub_is_idempotent(interactions: list[Interaction]) -> None:
    once = SCRUBBER.scrub(_cassette(interactions))
    twice = SCRUBBER.scrub(once)
    assert twice == once
    assert dump(twice) == dump(once)


@given(st.lists(safe_interactions(), max_size=3))
def test_a_cassette_without_secrets_is_unchanged(interactions: list[Interaction]) -> None:
    cassette = _cassette(interactions)
    scrubbed = SCRUBBER.scrub(cassette)
    assert scrubbed == cassette
    assert dump(scrubbed) == dump(cassette)


@given(secret_interactions())
def test_no_planted_secret_survives_scrubbing(pair: tuple[Interaction, list[str]]) -> None:
    interaction, planted = pair
    text = dump(SCRUBBER.scrub(_cassette([interaction])))
    assert [s for s in planted if s in text] == []


@given(secret_interactions())
def test_scrub_never_modifies_its_input(pair: tuple[Interaction, list[str]]) -> None:
    cassette = _cassette([pair[0]])
    before = dump(cassette)
    SCRUBBER.scrub(cassette)
    assert dump(cassette) == before


@given(secret_interactions())
def test_scrubbed_sse_data_stays_valid_json(pair: tuple[Interaction, list[str]]) -> None:
    scrubbed = SCRUBBER.scrub_interaction(pair[0])
    last = (scrubbed.response.events or [])[-1]
    assert json.loads(last.data)["type"] == "x"


KEYS = st.sampled_from(
    [
        "sk-ant-api03-abcDEF123456ghiJKL789mnoPQR",
        "gsk_" + "a1B2c3D4e5" * 5,
        "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "ghp_" + "Z9y8X7w6V5" * 4,
    ]
)


@given(
    st.lists(st.one_of(SAFE_TEXT, KEYS), max_size=8),
    st.sampled_from([" ", "\n", '"', "'", "=", ": ", "\\n"]),
)
def test_mask_leaves_nothing_for_scan(parts: list[str], sep: str) -> None:
    text = sep.join(parts)
    masked = SCRUBBER.mask(text)
    assert [p for p in parts if p.startswith(("sk-", "gsk_", "AIza", "ghp_")) and p in masked] == []
    assert SCRUBBER.scan(masked) == []
    assert SCRUBBER.mask(masked) == masked


_URL_VALUES = st.sampled_from(
    [
        "https://cdn.example.com/a.png",
        "https://cdn.example.com/a.png?sig=QQSECRETZZ&w=2",
        "https://user:QQSECRETZZ@example.com/",
        "/next?page=2",
        "/next?token=QQSECRETZZ",
        "?access_token=QQSECRETZZ",
        "./a",
        "../b?key=QQSECRETZZ",
    ]
)


@given(_json(SAFE_KEYS + SECRET_KEYS, st.one_of(SAFE_TEXT, SECRETS, _URL_VALUES)))
def test_the_quick_look_finds_nothing_to_scrub_only_where_the_walk_changes_nothing(
    value: Any,
) -> None:
    """``Rules.clean`` (issue 29) lets a JSON value skip the copying walk: it must say
    "clean" only where the walk gives back the very same object, and the value the
    walk gives is the same whether or not it looked first."""
    rules = SCRUBBER._rules
    before = json.dumps(value)
    walked = _walk(rules, value)
    if rules.clean(value):
        assert walked is value
    assert rules.json_value(value) == walked
    assert json.dumps(value) == before  # the input is never modified


def _walk(rules: Any, value: Any) -> Any:
    """``json_value`` without the quick look (the walk as it was before issue 29)."""
    if isinstance(value, dict):
        return rules._json_object(value)
    if isinstance(value, list):
        new = [_walk(rules, v) for v in value]
        return value if all(a is b for a, b in zip(value, new, strict=True)) else new
    return rules.json_value(value)


@given(st.text(max_size=12) | _URL_VALUES)
def test_the_quick_look_reads_a_string_as_a_url_as_the_walk_does(text: str) -> None:
    """One pattern asks what the walk asks with two: a scheme, or a relative start."""
    from pytest_agentreplay.redact import rules as module

    walk_reads_it = bool(module._URL_PREFIX.match(text)) or text.startswith(module._RELATIVE)
    assert bool(module._URLISH.match(text)) is walk_reads_it


def test_the_quick_look_leaves_a_name_that_is_not_text_to_the_walk() -> None:
    class Name(str):
        pass

    rules = SCRUBBER._rules
    assert not rules.clean({1: "x"})
    assert not rules.clean([{"a": {b"k": 2}}])
    assert rules.clean({Name("model"): "m"})  # text after all: read as its text
    assert not rules.clean({Name("api_key"): "sk-x"})
    assert rules.json_value({Name("api_key"): "sk-x"}) == {"api_key": "REDACTED"}
