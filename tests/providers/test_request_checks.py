"""A fake answers a call from its request *checked* (``Codec.check_call``, issue 29, W5):
the same checks as the parse into the neutral ``Request`` (the same error for the same
body), without building the models, which the fake builds when the test reads them.
Each provider's bad bodies get the same 400 from a fake as before, through a real
client, and the problem the test fails for names what the parse says."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay import FakeModel, Fault
from pytest_agentreplay.neutral import PROVIDERS, Provider
from pytest_agentreplay.providers import RenderContext, codec_for
from pytest_agentreplay.providers.base import CheckedRequest
from pytest_agentreplay.transport import answer

URLS: dict[Provider, tuple[str, str]] = {  # URL, the target a codec reads
    "anthropic": ("https://api.anthropic.com/v1/messages", "/v1/messages"),
    "openai_chat": ("https://api.openai.com/v1/chat/completions", "/v1/chat/completions"),
    "openai_responses": ("https://api.openai.com/v1/responses", "/v1/responses"),
    "gemini": (
        "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent",
        "/v1beta/models/g:generateContent",
    ),
}
HOSTS = ["api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com"]

_SCALARS = st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "x", "user"])
_KEYS = st.sampled_from(
    [
        "type", "text", "role", "content", "name", "input", "id", "tool_use_id",
        "is_error", "thinking", "signature", "input_schema", "description",
        "model", "system", "messages", "tools", "stream", "contents", "parts",
        "tool_calls", "function", "arguments", "tool_call_id", "instructions",
    ]
)  # fmt: skip
_TYPES = st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image", "message"])
_JSON = st.recursive(
    _SCALARS | _TYPES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)
_ROLES = st.sampled_from(["user", "assistant", "system", "tool", "robot", None])
_BLOCKS = st.fixed_dictionaries(
    {"type": _TYPES},
    optional={
        "text": _JSON,
        "name": _JSON,
        "input": _JSON,
        "id": _JSON,
        "tool_use_id": _JSON,
        "content": _JSON,
        "thinking": _JSON,
        "signature": _JSON,
        "is_error": _JSON,
    },
)
_MESSAGES = st.fixed_dictionaries(
    {"role": _ROLES},
    optional={"content": st.text(max_size=3) | st.lists(_BLOCKS | _JSON, max_size=3) | _JSON},
)
_BODIES = st.fixed_dictionaries(
    {},
    optional={
        "model": _JSON,
        "messages": st.lists(_MESSAGES | _JSON, max_size=3) | _JSON,
        "system": _JSON | st.lists(_BLOCKS, max_size=2),
        "tools": st.lists(st.dictionaries(_KEYS, _JSON, max_size=3), max_size=2) | _JSON,
        "stream": _JSON,
        "contents": _JSON,
        "input": _JSON,
        "instructions": _JSON,
    },
)


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "ok", run()
    except Exception as exc:  # the parse's errors: CodecError, pydantic's ValueError
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("provider", PROVIDERS)
@given(body=_BODIES)
def test_a_checked_request_fails_as_its_parse_does(
    provider: Provider, body: dict[str, Any]
) -> None:
    codec = codec_for(provider)
    target = URLS[provider][1]
    parsed = _outcome(lambda: codec.parse_call("POST", target, body))
    checked = _outcome(lambda: codec.check_call("POST", target, body))
    if parsed[0] != "ok":
        assert checked == parsed
        return
    assert checked[0] == "ok"
    request, facts = parsed[1], checked[1]
    assert (facts.provider, facts.model, facts.stream) == (
        request.provider,
        request.model,
        request.stream,
    )
    assert dict(facts.raw) == request.raw


def test_anthropic_answers_from_a_checked_request_and_others_from_their_parse() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    checked = codec_for("anthropic").check_call("POST", "/v1/messages", body)
    assert checked == CheckedRequest("anthropic", "m", True, body)
    assert checked.raw is body  # read while answering, not copied
    asked = {
        "openai_chat": {"messages": []},
        "openai_responses": {"input": "hi"},
        "gemini": {"contents": []},
    }
    for provider, other in asked.items():
        codec = codec_for(provider)
        target = URLS[provider][1]
        assert codec.check_call("POST", target, other) == codec.parse_call("POST", target, other)


_TOOL_USE = '{"type": "tool_use", "name": "f", "input": []}'
_THINKING = '{"type": "thinking", "thinking": "t", "signature": 3}'
BAD = [
    b"not json",
    b"[1, 2]",
    b'{"messages": "x"}',
    b'{"messages": [{"role": "robot", "content": "x"}]}',
    b'{"messages": [{"role": "user", "content": 5}]}',
    b'{"model": 5, "messages": []}',
    b'{"stream": "yes", "messages": []}',
    b'{"messages": [{"role": "user", "content": [{"type": "text"}]}]}',
    b'{"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": ""}]}]}',
    b'{"messages": [{"role": "assistant", "content": [%s]}]}' % _TOOL_USE.encode(),
    b'{"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 1}]}]}',
    b'{"messages": [{"role": "user", "content": [%s]}]}' % _THINKING.encode(),
    b'{"messages": [], "tools": [{"name": 3}]}',
    b'{"messages": [], "tools": [{"name": "t", "input_schema": 3}]}',
    b'{"messages": [], "system": [{"type": "image"}]}',
    b'{"messages": [{"role": "tool", "content": "x"}]}',
    b'{"input": 5}',
    b'{"input": [{"role": "robot", "content": "x"}]}',
    b'{"contents": 5}',
    b'{"contents": [{"role": "robot", "parts": []}]}',
]  # fmt: skip


def _refusal(provider: Provider, body: bytes) -> str | None:
    """What ``provider``'s parse says of ``body``; ``None`` for a body it reads."""
    try:
        parsed = json.loads(body)
        codec_for(provider).parse_call(
            "POST", URLS[provider][1], parsed if isinstance(parsed, dict) else {}
        )
    except ValueError as exc:  # CodecError is one
        return str(exc)
    return None


REFUSED = [(p, b) for p in PROVIDERS for b in BAD if _refusal(p, b) is not None]


def test_every_provider_refuses_some_of_the_bad_bodies() -> None:
    assert {p for p, _ in REFUSED} == set(PROVIDERS)


@pytest.mark.parametrize(("provider", "body"), REFUSED)
def test_a_bad_request_gets_the_providers_400_and_the_problem_names_the_field(
    provider: Provider, body: bytes
) -> None:
    codec = codec_for(provider)
    url = URLS[provider][0]
    why = _refusal(provider, body)
    with FakeModel(check_unused=False, hosts=HOSTS) as fake, httpx2.Client() as client:
        response = client.post(url, content=body, headers={"content-type": "application/json"})
        problems = fake.take_problems()
    fault = Fault.http(400, "pytest-agentreplay: its body is not a valid request")
    expected = answer.for_error(codec, fault, RenderContext(), answer.Plan())
    assert response.status_code == 400
    assert response.content == b"".join(expected.events)
    assert [k for k, _ in response.headers.multi_items()] == [k for k, _ in expected.headers]
    assert len(problems) == 1 and f"its body is not a valid request: {why}" in problems[0]
    assert fake.calls == [] and fake.requests == [] and fake.log == []
