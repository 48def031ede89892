"""The smallest example: the real anthropic SDK streaming a reply from a fake model.

No ``http_client=`` and no ``base_url=``: the plugin intercepts the SDK's own
client, renders the scripted reply in Anthropic's exact SSE format, and hands it
over event by event.
"""

from __future__ import annotations

import anthropic

from pytest_agentreplay import FakeModel, Reply, Usage


def test_the_sdk_streams_a_scripted_reply(scripted_model: FakeModel) -> None:
    """Checks: the real SDK, with no client or URL given, streams the scripted reply
    as several text deltas that add up to the final message, with the scripted
    usage; the fake logs one completed streaming call with the user's question."""
    scripted_model.script(
        Reply.text("Leeds is sunny today.", usage=Usage(input_tokens=12, output_tokens=6))
    )
    client = anthropic.Anthropic(api_key="test-key")

    deltas = []
    with client.messages.stream(
        model="claude-sonnet-4-6",
        max_tokens=256,
        messages=[{"role": "user", "content": "Weather in Leeds?"}],
    ) as stream:
        for text in stream.text_stream:
            deltas.append(text)
        message = stream.get_final_message()

    assert len(deltas) > 1, "the reply arrives as several text deltas"
    assert "".join(deltas) == message.content[0].text == "Leeds is sunny today."
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 6)

    [call] = scripted_model.log
    assert call.streaming and call.outcome == "completed"
    assert call.request.last_user_text == "Weather in Leeds?"
