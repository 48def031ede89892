"""Issue 18, item 3: a key split across SSE events — a provider echoing a secret a few
characters per delta — is caught by scanning each stream's text as the client
assembles it, for every provider's wire format, in text and in tool-call arguments.

The loopback server streams what each provider sends, three characters per text delta
and tool arguments cut unevenly (the plugin's codecs render them); the real SDKs read
the streams and assemble the secret; the recording must be refused, naming the events
and never printing the secret. A stream that only looks split (the same key value in
every event, ids, numbers) is written as usual.
"""

from __future__ import annotations

import base64
import json
import secrets

import pytest

from pytest_agentreplay import sse
from pytest_agentreplay.neutral import Reply, ToolCall
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from tests.cassettes._plugin_runs import cassette, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

PROVIDERS = ["anthropic", "openai_chat", "openai_responses"]

USER_TEST = """
import json, os
import anthropic, openai, pytest

URL = os.environ["AR_SERVER"]
CASES = json.loads(os.environ["AR_CASES"])
TOOLS = [{"name": "lookup", "description": "d", "input_schema": {"type": "object"}}]
OPENAI_TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]


def assemble(provider, where):
    if provider == "anthropic":
        client = anthropic.Anthropic(api_key="test", base_url=URL, max_retries=0)
        kwargs = {"tools": TOOLS} if where == "tool" else {}
        with client.messages.stream(model="m", max_tokens=9, messages=[
                {"role": "user", "content": "hi"}], **kwargs) as stream:
            message = stream.get_final_message()
        block = message.content[0]
        return block.text if where == "text" else json.dumps(block.input)
    client = openai.OpenAI(api_key="test", base_url=URL + "/v1", max_retries=0)
    if provider == "openai_chat":
        kwargs = {"tools": OPENAI_TOOLS} if where == "tool" else {}
        text = ""
        for chunk in client.chat.completions.create(model="m", stream=True, messages=[
                {"role": "user", "content": "hi"}], **kwargs):
            delta = chunk.choices[0].delta if chunk.choices else None
            if delta and delta.content:
                text += delta.content
            for call in (delta.tool_calls or []) if delta else []:
                text += call.function.arguments or ""
        return text
    text = ""
    for event in client.responses.create(model="m", input="hi", stream=True):
        if event.type in ("response.output_text.delta", "response.function_call_arguments.delta"):
            text += event.delta
    return text


@pytest.mark.agentreplay
@pytest.mark.parametrize("case", CASES)
def test_echo(agentreplay, case):
    provider, where = case.split("-")
    assert os.environ["AR_ECHOED"] in assemble(provider, where)
"""


def _events(provider: str, where: str, secret: str) -> list[bytes]:
    """The stream ``provider`` sends for a reply echoing ``secret``, three characters
    per text delta, or inside tool arguments cut as providers cut them."""
    if where == "text":
        reply = Reply.text(f"Your key is {secret} as set.")
    else:
        reply = Reply(parts=[ToolCall(name="lookup", args={"note": f"key {secret}"})])
    events = codec_for(provider).render_events(reply, RenderContext(model="m", text_chunk=3))
    encoder = sse.SSEEncoder()
    return [encoder.encode(event) for event in events]


def _cases() -> list[str]:
    return [f"{p}-{w}" for p in PROVIDERS for w in ("text", "tool")]


def _forms(secret: str) -> list[str]:
    raw = secret.encode()
    return [secret] + [base64.b64encode(b"x" * n + raw).decode()[4:-4] for n in range(3)]


@pytest.mark.parametrize(
    ("secret", "kind", "env"),
    [
        ("sk-ant-api03-" + secrets.token_urlsafe(48), "anthropic-key", {}),
        ("github_pat_" + secrets.token_hex(30), "github-token", {}),
        (f"ck-{secrets.token_urlsafe(24)}", "env:AR_ECHO_API_KEY", {"AR_ECHO_API_KEY": "*"}),
    ],
    ids=["key-shape", "another-shape", "env-value"],
)
def test_a_secret_split_across_events_stops_the_write(
    pytester: pytest.Pytester, server: ProviderServer, secret: str, kind: str, env: dict[str, str]
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    cases = _cases()
    for case in cases:
        server.add_raw(_events(*case.split("-"), secret))
    env = dict.fromkeys(env, secret)
    result = run(
        pytester,
        "--agentreplay-record-mode=once",
        AR_SERVER=server.url,
        AR_CASES=json.dumps(cases),
        AR_ECHOED=secret,
        **env,
    )
    result.assert_outcomes(passed=len(cases), errors=len(cases))
    for case in cases:
        assert not cassette(pytester, f"test_echo[{case}]").exists(), case
    result.stdout.fnmatch_lines_random(
        [f"*interactions[[]0[]].response.events[[]*[]]: {kind} (split across events *"] * len(cases)
    )
    printed = result.stdout.str() + result.stderr.str()
    assert not [form for form in _forms(secret) if form in printed]


def test_a_stream_that_only_repeats_values_is_written(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    """Ids and names repeated in every event, and ordinary text, are no secret."""
    pytester.makepyfile(test_user=USER_TEST)
    cases = _cases()
    for case in cases:
        server.add_raw(_events(*case.split("-"), "plain words"))
    run(
        pytester,
        "--agentreplay-record-mode=once",
        AR_SERVER=server.url,
        AR_CASES=json.dumps(cases),
        AR_ECHOED="plain words",
    ).assert_outcomes(passed=len(cases))
    for case in cases:
        assert cassette(pytester, f"test_echo[{case}]").exists(), case
