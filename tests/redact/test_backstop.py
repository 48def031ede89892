"""The backstop: ``scan`` / ``check`` / ``mask`` find what scrubbing missed, name where,
and never print the secret."""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from pytest_agentreplay.errors import AgentReplayError
from pytest_agentreplay.redact import Finding, Scrubber, SecretLeakError, default_scrubber
from tests.redact._helpers import dump, interaction, request, response

_RNG = random.Random(20261110)
ALNUM = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = ALNUM) -> str:
    # Always at least one digit: real keys have them, and sk-... requires one.
    return _rand_raw(n - 1, alphabet) + _RNG.choice(string.digits)


def _rand_raw(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(b'{"sub":"1234567890","iat":1762}').decode().rstrip("=")
    return f"{head}.{body}.{_rand(43, ALNUM + '-_')}"


SHAPES = {
    "anthropic-key": "sk-ant-api03-" + _rand(93, ALNUM + "-_"),
    "openai-key": "sk-proj-" + _rand(156, ALNUM + "-_"),
    "google-api-key": "AIza" + _rand(35, ALNUM + "-_"),
    "groq-key": "gsk_" + _rand(52),
    "huggingface-token": "hf_" + _rand(34),
    "github-token": "ghp_" + _rand(36),
    "aws-access-key-id": "AKIA" + _rand(16, string.ascii_uppercase + string.digits),
    "slack-token": "xoxb-" + _rand(12, string.digits) + "-" + _rand(24),
    "posthog-key": "phc_" + _rand(43),
    "jwt": _jwt(),
    "google-oauth-token": "ya29." + _rand(60, ALNUM + "-_"),
    "stripe-key": "sk_live_" + _rand(24),
    "xai-key": "xai-" + _rand(80),
}


def _canary() -> str:
    """A random, key-shaped value nobody would find in a recording by chance."""
    return "sk-ant-api03-" + _rand(60, ALNUM + "-_")


# -- known shapes ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_known_key_shape_is_found_and_named(kind: str) -> None:
    value = SHAPES[kind]
    text = dump(interaction(request(json_body={"messages": [{"content": f"my key is {value}"}]})))
    findings = Scrubber(env={}).scan(text)
    assert Finding("interactions[0].request.json.messages[0].content", kind) in findings
    assert value not in repr(findings)


def test_legacy_openai_key_is_found_by_prefix_and_marker() -> None:
    key = "sk-" + _rand(20) + "T3BlbkFJ" + _rand(20)
    kinds = {f.kind for f in Scrubber(env={}).scan(f"OPENAI_API_KEY={key}\n")}
    assert kinds == {"openai-key", "openai-key-marker"}


def test_openai_marker_without_prefix_is_found_in_a_key_length_token() -> None:
    token = _rand(74, ALNUM + "-_") + "T3BlbkFJ" + _rand(74, ALNUM + "-_")
    assert [f.kind for f in Scrubber(env={}).scan(f'"{token}"')] == ["openai-key-marker"]


@pytest.mark.parametrize("word", ["Bearer", "bearer", "BEARER"])
def test_bearer_token_in_text_is_found_without_the_word_bearer(word: str) -> None:
    token = _rand(40, ALNUM + "._-")
    text = f"curl -H 'Authorization: {word} {token}' https://api.example"
    scrubber = Scrubber(env={})
    assert [f.kind for f in scrubber.scan(text)] == ["bearer-token"]
    assert scrubber.mask(text) == f"curl -H 'Authorization: {word} REDACTED' https://api.example"


def test_stripe_restricted_key_is_found() -> None:
    key = "rk_live_" + _rand(30)
    assert [f.kind for f in Scrubber(env={}).scan(f"key: {key}")] == ["stripe-key"]


@pytest.mark.parametrize("word", ["Basic", "basic", "BASIC"])
def test_basic_credentials_in_text_are_found(word: str) -> None:
    creds = base64.b64encode(b"admin:" + _rand(20).encode()).decode()
    assert [f.kind for f in Scrubber(env={}).scan(f"Authorization: {word} {creds}")] == [
        "basic-auth"
    ]


def test_private_key_block_is_found() -> None:
    text = '{"pem": "-----BEGIN RSA PRIVATE KEY-----\\nMIIEow..."}'
    assert [f.kind for f in Scrubber(env={}).scan(text)] == ["private-key"]


def test_key_after_an_escaped_newline_is_found() -> None:
    """YAML and JSON write a newline inside a string as ``\\n``: the ``n`` before the key
    must not count as part of a longer token."""
    key = SHAPES["anthropic-key"]
    assert [f.kind for f in Scrubber(env={}).scan(f'"my key:\\n{key}"')] == ["anthropic-key"]


# -- no false positives ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # base64 fragments like those in the corpus's encrypted_content blobs
        "6KYEW1QETK9oOMc1zd0Osk-z0QBLQdGtMuFiR00Bs1M_E4T0lMYEsFRqQ8TZmM5",
        "4VyE83CXK6VdJD-YJbJcHf_3p3DyMUS38ZzA9IcNBk78dIV4HgKaC537krtqNf9",
        "sIRfoCLP3_6MdzCN5E81Hf_dU7SDHArz67zAvHDIKQktcJfN7GCW17ZjV5Ss3gX",
        # documentation placeholders
        "Authorization: Bearer YOUR_API_KEY_HERE",
        "Authorization: Bearer your_token_goes_here",
        "Authorization: Bearer REDACTED",
        "Basic information about the understanding of things",
        # words that merely start like a key
        "sk-learn is a library; risk-management-and-scheduling-system",
        "the task-oriented-multi-agent-orchestration-framework",
        # the marker inside a long base64 blob (a PDF mentioning "OpenAI")
        base64.b64encode(b"x" * 300 + b"OpenAI" + b"y" * 300).decode(),
        '{"max_tokens": 1024, "token": "Hello", "api_key": "REDACTED"}',
    ],
)
def test_no_false_positive_on(text: str) -> None:
    assert Scrubber(env={}).scan(text) == []


# -- environment values (canaries) ---------------------------------------------------------


def _assert_refused(text: str, where: str, canary: str, *, kind: str) -> None:
    with pytest.raises(SecretLeakError) as info:
        default_scrubber().check(text, Path("cassettes/test_x.yaml"))
    err = info.value
    assert Finding(where, kind) in err.findings
    message = str(err)
    assert where in message
    assert "cassettes/test_x.yaml" in message
    for form in (canary, quote(canary, safe=""), base64.b64encode(canary.encode()).decode()):
        assert form not in message
        assert form not in repr(err.findings)


def test_canary_in_an_unknown_header_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _rand(32)  # no known shape: only the env value can give it away
    monkeypatch.setenv("MISTRAL_API_KEY", canary)
    i = Scrubber().scrub_interaction(interaction(request(headers={"x-upstream-hint": canary})))
    text = dump(i)
    _assert_refused(
        text, "interactions[0].request.headers.x-upstream-hint", canary, kind="env:MISTRAL_API_KEY"
    )


def test_canary_in_the_url_path_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _canary()
    monkeypatch.setenv("ANTHROPIC_API_KEY", canary)
    i = Scrubber().scrub_interaction(
        interaction(request(f"https://api.example/v1/keys/{canary}/use"))
    )
    _assert_refused(dump(i), "interactions[0].request.url", canary, kind="env:ANTHROPIC_API_KEY")


def test_canary_in_basic_auth_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _rand(24)
    monkeypatch.setenv("SERVICE_TOKEN", canary)
    for user in ("u", "us", "use"):  # every base64 alignment
        basic = "Basic " + base64.b64encode(f"{user}:{canary}".encode()).decode()
        i = Scrubber().scrub_interaction(
            interaction(request(headers={"x-forwarded-authorization": basic}))
        )
        _assert_refused(
            dump(i),
            "interactions[0].request.headers.x-forwarded-authorization",
            canary,
            kind="env:SERVICE_TOKEN (base64)",
        )


def test_canary_under_an_innocent_json_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _canary()
    monkeypatch.setenv("ANTHROPIC_API_KEY", canary)
    i = Scrubber().scrub_interaction(interaction(request(json_body={"metadata": {"note": canary}})))
    _assert_refused(
        dump(i), "interactions[0].request.json.metadata.note", canary, kind="env:ANTHROPIC_API_KEY"
    )


def test_url_encoded_canary_in_a_query_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _rand(30) + "/+=" + _rand(7)  # AWS secret keys have these characters
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", canary)
    url = f"https://h.example/p?state={quote(canary, safe='')}"
    i = Scrubber().scrub_interaction(interaction(request(url)))
    _assert_refused(
        dump(i),
        "interactions[0].request.url",
        canary,
        kind="env:AWS_SECRET_ACCESS_KEY (url-encoded)",
    )


def test_canary_in_an_sse_event_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _rand(40)
    monkeypatch.setenv("OPENROUTER_API_KEY", canary)
    resp = response(events=['{"type":"ping"}', json.dumps({"echo": canary})])
    i = Scrubber().scrub_interaction(interaction(resp=resp))
    _assert_refused(
        dump(i), "interactions[0].response.events[1].data", canary, kind="env:OPENROUTER_API_KEY"
    )


def test_environment_is_read_at_check_time(monkeypatch: pytest.MonkeyPatch) -> None:
    scrubber = Scrubber()  # built before the variable exists
    canary = _rand(32)
    monkeypatch.setenv("LATE_API_KEY", canary)
    assert [f.kind for f in scrubber.scan(f"x {canary} y")] == ["env:LATE_API_KEY"]


def test_explicit_env_mapping_replaces_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _rand(32)
    monkeypatch.setenv("OS_API_KEY", canary)
    assert Scrubber(env={}).scan(canary) == []
    assert [f.kind for f in Scrubber(env={"X_SECRET": canary}).scan(canary)] == ["env:X_SECRET"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HOME_DIRECTORY", "Zk39vPq0xLmN7aBc"),  # name is not key-like
        ("SHORT_API_KEY", "Zk39vPq"),  # under 8 characters
        ("OPENAI_API_KEY", "REDACTED"),  # the placeholder itself
        ("DUMMY_TOKEN", "xxxxxxxxxxxx"),  # a dummy value
    ],
)
def test_env_values_that_cannot_be_secrets_are_ignored(name: str, value: str) -> None:
    assert Scrubber(env={name: value}).scan(f"header: {value}\n") == []


def test_allow_list_accepts_a_known_fake_key() -> None:
    fake = "sk-ant-api03-" + "fake0" * 8
    assert Scrubber(env={}, allow=[fake]).scan(f"key {fake}") == []
    assert Scrubber(env={}).scan(f"key {fake}") != []


# -- where: paths, lines, hostile text ------------------------------------------------------


def test_finding_outside_any_field_names_the_line() -> None:
    key = SHAPES["groq-key"]
    text = f"version: 1\n# leaked in a comment: {key}\ninteractions: []\n"
    assert Scrubber(env={}).scan(text) == [Finding("line 2", "groq-key")]


def test_text_that_is_not_yaml_gets_line_numbers() -> None:
    key = SHAPES["github-token"]
    text = f"first line\n: - [ broken {{ yaml\ntoken={key}\n"
    assert Scrubber(env={}).scan(text) == [Finding("line 3", "github-token")]


def test_secret_inside_a_mapping_key_is_not_printed_in_the_path() -> None:
    key = SHAPES["anthropic-key"]
    text = dump(interaction(request(json_body={"meta": {key: {"x": 1}}})))
    findings = Scrubber(env={}).scan(text)
    assert findings == [
        Finding("interactions[0].request.json.meta (in a mapping key)", "anthropic-key")
    ]


def test_secret_in_an_ancestor_key_is_masked_in_the_path() -> None:
    outer, inner = SHAPES["anthropic-key"], SHAPES["groq-key"]
    text = dump(interaction(request(json_body={outer: {"note": inner}})))
    findings = Scrubber(env={}).scan(text)
    assert all(outer not in f.where and inner not in f.where for f in findings)
    assert Finding("interactions[0].request.json.REDACTED.note", "groq-key") in findings


def test_aliases_are_not_expanded_when_locating() -> None:
    key = SHAPES["huggingface-token"]
    layers = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    layers += [
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)
    ]
    text = "\n".join([*layers, f"leak: {key}"]) + "\n"
    assert Scrubber(env={}).scan(text) == [Finding("leak", "huggingface-token")]


def test_check_passes_clean_text_silently() -> None:
    text = dump(
        Scrubber().scrub_interaction(interaction(request(headers={"x-api-key": _canary()})))
    )
    assert default_scrubber().check(text, Path("c.yaml")) is None


def test_secret_leak_error_is_an_agentreplay_error_without_a_path() -> None:
    with pytest.raises(AgentReplayError) as info:
        Scrubber(env={}).check(SHAPES["posthog-key"])
    assert isinstance(info.value, SecretLeakError)
    assert info.value.path is None
    assert info.value.findings == [Finding("line 1", "posthog-key")]


def test_many_findings_are_capped_in_the_message() -> None:
    text = "\n".join(f"k{i}: {_canary()}" for i in range(30))
    with pytest.raises(SecretLeakError) as info:
        Scrubber(env={}).check(text)
    assert len(info.value.findings) == 30
    assert "... and 10 more" in str(info.value)


# -- mask -----------------------------------------------------------------------------------


def test_mask_replaces_every_secret_and_keeps_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = _rand(32)
    monkeypatch.setenv("MY_SERVICE_KEY", canary)
    key = SHAPES["anthropic-key"]
    basic = base64.b64encode(canary.encode()).decode()
    text = f"request failed: x-api-key={key}; echo={canary}; basic={basic}"
    masked = Scrubber().mask(text)
    assert key not in masked and canary not in masked
    assert masked.startswith("request failed: x-api-key=REDACTED; echo=REDACTED; basic=")
    assert Scrubber().scan(masked) == []


def test_mask_leaves_clean_text_identical() -> None:
    text = "POST https://api.anthropic.com/v1/messages: 404 not_found_error"
    assert Scrubber(env={}).mask(text) == text


def test_secret_leak_error_survives_pickling() -> None:
    """xdist workers send errors to the controller pickled."""
    import pickle

    err = SecretLeakError(Path("c.yaml"), [Finding("interactions[0].request.url", "jwt")])
    back = pickle.loads(pickle.dumps(err))
    assert (back.path, back.findings, str(back)) == (err.path, err.findings, str(err))


def test_key_after_a_url_escape_is_found() -> None:
    key = SHAPES["anthropic-key"]
    text = f"https://h.example/search?q=my%20key%3A{key}"
    assert [f.kind for f in Scrubber(env={}).scan(text)] == ["anthropic-key"]


@pytest.mark.parametrize("style", ["'", '"'])
def test_canary_with_quotes_is_found_however_yaml_quotes_it(style: str) -> None:
    canary = "p@ss'w\"rd\\" + _rand(12)
    text = yaml.safe_dump({"note": canary}, default_style=style)
    assert canary not in text  # YAML escaped it ...
    findings = Scrubber(env={"DB_SECRET": canary}).scan(text)
    assert findings == [Finding("note", "env:DB_SECRET (escaped)")]  # ... and it is still found


def test_canary_with_quotes_is_found_in_json() -> None:
    canary = "p@ss'w\"rd\\" + _rand(12)
    findings = Scrubber(env={"DB_SECRET": canary}).scan(json.dumps({"note": canary}))
    assert findings == [Finding("note", "env:DB_SECRET (escaped)")]
