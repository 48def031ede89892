"""Issue 27, items 12 to 16: secrets in forms the backstop did not read.

- a key JSON-escaped in a stream's data (``sk\\u002dant…``), also the value of
  ``ANTHROPIC_API_KEY``, reached the cassette readable;
- a key in a YAML comment passed ``agentreplay redact --check``, the CI gate;
- ``agentreplay diff --all`` of two pytest-recording cassettes printed their credential
  headers in full;
- a test parametrized with the API key got a cassette named after it, and the summary
  printed ``written: …/test_auth[<key>].yaml``;
- a relative redirect (``Location: /next?token=…``) kept its token.

Every form of a secret the backstop now reads is tried: as written, JSON-escaped once
and twice, YAML-escaped, URL-encoded, PHP's escaped slashes, split across events; in
event data, a header, a URL path, a comment. And every place a command or the plugin
prints: the CLI's output, the file names, the summary.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.redact import Scrubber, SecretLeakError
from pytest_agentreplay.redact.rules import Rules
from tests.cassettes._plugin_runs import PRELUDE, run
from tests.cli._helpers import run as agentreplay
from tests.cli._helpers import stream_interaction
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

KEY = "sk-ant-api03-" + "Hv7Tq" * 10
SLACK = "https://hooks.slack.com/services/T01234567/B01234567/" + "AbCdEfGh1234" * 2
FORMS = {
    "JSON \\u002d": KEY.replace("-", "\\u002d"),
    "one JSON \\u002d": KEY.replace("-", "\\u002d", 1),
    "JSON in JSON \\\\u002d": KEY.replace("-", "\\\\u002d"),
    "JSON \\u0048 (a letter)": KEY.replace("H", "\\u0048"),
    "YAML \\x2d": KEY.replace("-", "\\x2d"),
    "YAML \\U0000002d": KEY.replace("-", "\\U0000002d"),
    "URL %2D": KEY.replace("-", "%2D"),
    "URL %2d, lower case": KEY.replace("-", "%2d"),
}


@pytest.mark.parametrize("written", FORMS.values(), ids=FORMS.keys())
def test_an_escaped_key_is_found_and_masked_whole(written: str) -> None:
    text = f'data: {{"type":"text_delta","text":"the key is {written} ok"}}'
    by_shape = Scrubber(env={})
    by_value = Scrubber(env={"ANTHROPIC_API_KEY": KEY}, allow=())
    assert [f.kind for f in by_shape.scan(text)] == ["anthropic-key (escaped)"]
    kinds = {f.kind for f in by_value.scan(text)}
    assert "env:ANTHROPIC_API_KEY (escaped)" in kinds
    assert by_shape.mask(text) == 'data: {"type":"text_delta","text":"the key is REDACTED ok"}'


@pytest.mark.parametrize(
    "written",
    [SLACK.replace("/", "\\/"), SLACK.replace("/", "%2F").replace(":", "%3A")],
    ids=["PHP \\/", "URL-encoded"],
)
def test_an_escaped_webhook_is_found(written: str) -> None:
    assert [f.kind for f in Scrubber(env={}).scan(f"posted to {written}")] == [
        "slack-webhook (escaped)"
    ]


def test_an_allowed_key_stays_allowed_in_any_form() -> None:
    text = f"a {KEY.replace('-', chr(92) + 'u002d')} b"
    assert Scrubber(env={}, allow=[KEY]).scan(text) == []


def test_escapes_of_other_characters_cost_no_second_look() -> None:
    # Non-ASCII, quotes and markup are escaped by every JSON encoder: none of those
    # can spell a key, so the text is read once (and nothing is found).
    text = 'data: {"text":"caf\\u00e9 \\u003cb\\u003e \\"quoted\\" 50%"}'
    from pytest_agentreplay.redact.escapes import unescaped

    assert unescaped(text) is None
    assert Scrubber(env={}).scan(text) == []


def test_the_writer_refuses_a_json_escaped_key_in_a_stream(tmp_path: Path) -> None:
    interaction = stream_interaction()
    events = list(interaction.response.events or [])
    escaped = KEY.replace("-", "\\u002d")
    data = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}}'
    events[3] = events[3].replace(data=data % escaped)
    cassette = Cassette(
        interactions=[interaction.replace(response=interaction.response.replace(events=events))]
    )
    path = tmp_path / "c.yaml"
    with pytest.raises(SecretLeakError) as refused:
        cassette_io.save(path, cassette, scrubber=Scrubber(env={"ANTHROPIC_API_KEY": KEY}))
    assert "interactions[0].response.events[3].data" in str(refused.value)
    assert "(escaped)" in str(refused.value)
    assert not path.exists()


RECORDING = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_escaped(agentreplay):
    ask("echo it", stream=True)
"""
)


def test_recording_a_stream_with_the_key_json_escaped_writes_nothing(
    pytester: pytest.Pytester, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's case, through the plugin: the provider streams the key escaped, and
    the key is the ``ANTHROPIC_API_KEY`` value."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    escaped = KEY.replace("-", "\\u002d")
    server.add_raw(
        [
            b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":'
            b'"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
            b'"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"text","text":""}}\n\n',
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"' + escaped.encode() + b'"}}\n\n',
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
            b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
            b'"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\n',
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
        ]
    )
    pytester.makepyfile(test_user=RECORDING)
    result = run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url, AR_KEY=KEY)
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert "refusing to write" in output
    assert "anthropic-key (escaped)" in output
    assert KEY not in output and escaped not in output
    assert not list(pytester.path.rglob("*.yaml"))


# --- the CI gate reads the file's bytes -------------------------------------------------


def _commented(tmp: Path) -> Path:
    path = tmp / "c.yaml"
    cassette_io.save(path, Cassette(interactions=[stream_interaction()]))
    path.write_text(f"# recorded with {KEY}\n" + path.read_text())
    return path


def test_redact_check_fails_on_a_key_in_a_yaml_comment(tmp_path: Path) -> None:
    path = _commented(tmp_path)
    before = path.read_bytes()
    checked = agentreplay("redact", "--check", path)
    assert checked.code == 1, checked.out
    assert "would rewrite" in checked.out
    assert "line 1 (anthropic-key, outside any field: a comment)" in checked.out
    assert KEY not in checked.out + checked.err
    assert path.read_bytes() == before  # --check writes nothing


def test_redact_removes_a_key_in_a_yaml_comment(tmp_path: Path) -> None:
    path = _commented(tmp_path)
    assert agentreplay("redact", path).code == 0
    assert KEY not in path.read_text()
    assert agentreplay("redact", "--check", path).code == 0
    assert agentreplay("lint", path).code == 0


# --- nothing a command prints holds a secret --------------------------------------------

VCR = """interactions:
- request:
    body: '{{"model":"gpt-4o","messages":[{{"role":"user","content":"hi"}}]}}'
    headers:
      Authorization:
      - Bearer {bearer}
      X-Api-Key:
      - {plain}
      Cookie:
      - session={cookie}
      Content-Type:
      - application/json
    method: POST
    uri: https://api.openai.com/v1/chat/completions?key={query}
  response:
    body:
      string: '{answer}'
    headers:
      Content-Type:
      - application/json
      Set-Cookie:
      - __cf_bm={cf}; path=/
      openai-organization:
      - {org}
      Date:
      - {date}
    status:
      code: 200
      message: OK
version: 1
"""
ANSWER = (
    '{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,'
    '"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],'
    '"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
)
SECRETS_A = {
    "bearer": "abcdef0123456789secretvalue",
    "plain": "plainsecretvalue1",
    "cookie": "hunter2hunter2",
    "query": "querysecret123",
    "cf": "cookiesecretvalue",
    "org": "org-secretorgname",
    "date": "Mon, 01 Dec 2026 10:00:00 GMT",
}
SECRETS_B = {
    "bearer": "zyxwvu9876543210othersecret",
    "plain": "plainsecretvalue2",
    "cookie": "hunter3hunter3",
    "query": "querysecret456",
    "cf": "cookiesecretother",
    "org": "org-otherorgname",
    "date": "Tue, 02 Dec 2026 11:00:00 GMT",
}


@pytest.mark.parametrize("args", [["diff", "--all"], ["diff"]], ids=["--all", "plain"])
def test_diff_of_two_pytest_recording_cassettes_prints_no_credential(
    tmp_path: Path, args: list[str]
) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(VCR.format(answer=ANSWER, **SECRETS_A))
    b.write_text(VCR.format(answer=ANSWER, **SECRETS_B))
    result = agentreplay(*args, a, b)
    shown = result.out + result.err
    for name, value in [*SECRETS_A.items(), *SECRETS_B.items()]:
        if name != "date":
            assert value not in shown, f"{name} shown by {' '.join(args)}"
    if "--all" in args:  # what --all is for: the volatile fields, kept
        assert "Mon, 01 Dec 2026" in shown
        assert result.code == 1


@pytest.mark.parametrize(
    "command", [["inspect"], ["inspect", "--json"], ["inspect", "--events"], ["lint"], ["fold"]]
)
def test_no_other_command_prints_a_credential_of_a_pytest_recording_cassette(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(VCR.format(answer=ANSWER, **SECRETS_A))
    result = agentreplay(*command, path)
    shown = result.out + result.err
    for name, value in SECRETS_A.items():
        if name != "date":
            assert value not in shown, f"{name} shown by {' '.join(command)}"


# --- names ------------------------------------------------------------------------------

PARAMETRIZED = (
    PRELUDE
    + """
@pytest.mark.agentreplay
@pytest.mark.parametrize("key", [os.environ["AR_KEY"]])
def test_auth(agentreplay, key):
    ask_raw("who am I?")
"""
)


def test_a_test_parametrized_with_its_key_names_no_file_after_it(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=PARAMETRIZED)
    recorded = run(
        pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url, AR_KEY=KEY
    )
    recorded.assert_outcomes(passed=1)
    (path,) = (pytester.path / "cassettes" / "test_user").iterdir()
    assert KEY not in path.name
    assert re.fullmatch(r"test_auth\[REDACTED\]-[0-9a-f]{12}\.yaml", path.name), path.name
    assert f"written: {path}" in recorded.stdout.str()
    assert KEY not in recorded.stdout.str()
    run(pytester, AR_SERVER=echo_server.url, AR_KEY=KEY).assert_outcomes(passed=1)


# --- relative URLs ----------------------------------------------------------------------

RELATIVE = {
    "location": ("/next?token=abc123&page=2", "/next?token=REDACTED&page=2"),
    "content-location": ("?sig=zz&x=1", "?sig=REDACTED&x=1"),
    "link": (
        '</items?page=2&access_token=q>; rel="next"',
        '</items?page=2&access_token=REDACTED>; rel="next"',
    ),
    "refresh": ("0; url=/login?password=pw", "0; url=/login?password=REDACTED"),
    "x-next": ("//cdn.example.com/a?key=k&b=2", "//cdn.example.com/a?key=REDACTED&b=2"),
}


@pytest.mark.parametrize("name", RELATIVE)
def test_a_relative_url_in_a_header_loses_its_query_secrets(name: str) -> None:
    rules = Rules.build(
        placeholder="REDACTED", extra_headers=(), extra_query_params=(), extra_body_keys=()
    )
    value, scrubbed = RELATIVE[name]
    assert rules.headers({name: value}) == {name: scrubbed}


def test_a_relative_url_in_a_json_body_and_in_a_message_loses_its_query_secrets() -> None:
    rules = Rules.build(
        placeholder="REDACTED", extra_headers=(), extra_query_params=(), extra_body_keys=()
    )
    body = {"next": "/v1/items?token=abc&limit=2", "text": "is it? key=1", "path": "/plain"}
    assert rules.json_value(body) == {
        "next": "/v1/items?token=REDACTED&limit=2",
        "text": "is it? key=1",
        "path": "/plain",
    }
    assert Scrubber(env={}).mask("redirected to /next?token=abc123.") == (
        "redirected to /next?token=REDACTED."
    )


REDIRECT = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_redirect(agentreplay):
    response = httpx2.post(URL + "/v1/redirect")
    assert response.status_code == 302
"""
)


def test_a_recorded_relative_redirect_keeps_no_token(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    server.add_raw([b""], status=302, headers={"location": "/next?token=s3cr3t-t0k3n&page=2"})
    pytester.makepyfile(test_user=REDIRECT)
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url).assert_outcomes(passed=1)
    (path,) = (pytester.path / "cassettes" / "test_user").iterdir()
    text = path.read_text()
    assert "s3cr3t-t0k3n" not in text
    assert "location: /next?token=REDACTED&page=2" in text
    assert os.path.getsize(path) > 0
