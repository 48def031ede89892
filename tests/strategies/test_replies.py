"""``replies()``: every generated reply is served faithfully through the real SDKs,
and it shrinks toward a short plain-text reply."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentreplay import FakeModel, Reply, Text, Thinking, ToolCall, Usage
from pytest_agentreplay.strategies import json_objects, replies
from tests import sdk
from tests.strategies._minimal import minimal


@pytest.mark.sdk
@pytest.mark.parametrize("provider", sdk.PROVIDERS)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@settings(max_examples=30, derandomize=True, database=None, deadline=None)
@given(reply=replies(stop=False))
def test_every_reply_reaches_the_sdk_as_generated(
    provider: str, stream: bool, reply: Reply
) -> None:
    with FakeModel(reply):
        seen = sdk.call(provider, stream=stream, **sdk.tools_arg(provider))
    assert seen.text == reply.text_content
    assert seen.tool_calls == [(c.name, c.args) for c in reply.tool_calls]
    if stream:
        assert "".join(seen.deltas) == reply.text_content


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(reply=replies())
def test_replies_have_content_in_the_order_providers_send_it(reply: Reply) -> None:
    assert reply.text_content or reply.tool_calls
    kinds = [p.kind for p in reply.parts]
    assert kinds == sorted(kinds, key=["thinking", "text", "tool_call"].index)
    assert reply.fault is None


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(args=json_objects())
def test_tool_arguments_are_json_objects_that_round_trip(args: dict[str, object]) -> None:
    assert json.loads(json.dumps(args)) == args


@pytest.mark.parametrize(
    ("kwargs", "forbidden"),
    [
        ({"tool_calls": False}, "tool_call"),
        ({"thinking": False}, "thinking"),
    ],
)
def test_parts_can_be_switched_off(kwargs: dict[str, bool], forbidden: str) -> None:
    @settings(max_examples=100, derandomize=True, database=None)
    @given(reply=replies(**kwargs))
    def check(reply: Reply) -> None:
        assert forbidden not in [p.kind for p in reply.parts]

    check()


def test_plain_text_only_when_everything_else_is_off() -> None:
    plain = replies(tool_calls=False, thinking=False, usage=False, stop=False)
    reply = minimal(plain, lambda r: len(r.text_content) > 3)
    assert reply == Reply.text("0000")


def test_custom_text() -> None:
    reply = minimal(replies(text=st.sampled_from(["yes", "no"])), lambda r: True)
    assert reply == Reply.text("yes")


def test_shrinks_toward_a_short_plain_text_reply() -> None:
    assert minimal(replies(), lambda r: True) == Reply.text("0")
    assert minimal(replies(), lambda r: any(isinstance(p, Thinking) for p in r.parts)) == Reply(
        parts=[Thinking(text="0"), Text(text="0")]
    )
    calls = replies(thinking=False, usage=False, stop=False)
    assert minimal(calls, lambda r: len(r.tool_calls) >= 2) == Reply(
        parts=[ToolCall(name="a"), ToolCall(name="a")]
    )
    with_usage = replies(tool_calls=False, thinking=False)
    assert minimal(with_usage, lambda r: r.usage is not None) == Reply.text("0", usage=Usage())
