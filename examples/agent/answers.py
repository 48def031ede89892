"""What counts as an answer: the silent failures that no exception announces.

A model call can end without an error and still not answer the user. The runtime
saves such a reply as an error turn (``no_response``) instead of as the turn's
answer. A reply is silent when:

* its stream ended before the provider said it was done (no stop reason);
* it holds nothing: no text, no tool call;
* its text only repeats the saved context: a question (this turn's too), or the
  answer to another question — a model that replays history has not answered.

The same answer to the same question asked again *is* an answer. This is a
heuristic, kept simple on purpose: a short answer such as "Yes." given to two
different questions would be rejected too; a real runtime would tune it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .providers import ModelReply
from .store import Message


def is_silent(reply: ModelReply, context: Sequence[Message], turn_id: str) -> bool:
    """Whether ``reply``, the answer to turn ``turn_id`` given ``context`` (the saved
    messages it was asked with), fails to answer."""
    if reply.stop_reason is None or not (reply.text.strip() or reply.tool_calls):
        return True
    return not reply.tool_calls and repeats_history(reply.text.strip(), context, turn_id)


def repeats_history(text: str, context: Sequence[Message], turn_id: str) -> bool:
    """Whether ``text`` is a question of ``context``, or a message that followed
    another question than turn ``turn_id``'s."""
    question = next(m.text for m in context if m.turn_id == turn_id and m.role == "user")
    asked = None  # the question the messages that follow it answer
    for message in context:
        if message.role == "user":
            asked = message.text
        if message.text.strip() == text and (message.role == "user" or asked != question):
            return True
    return False
