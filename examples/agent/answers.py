"""What counts as an answer: the silent failures that no exception announces.

A model call can end without an error and still not answer the user. The runtime
saves such a reply as an error turn (``no_response``) instead of as the turn's
answer. A reply is silent when it produced no new message:

* its stream ended before the provider said it was done (no stop reason);
* it holds nothing: no text, no tool call.

What the text says is not looked at: a new message whose text equals an earlier
answer (to another question, or to the same one asked again) is an answer. An earlier
version rejected replies that repeated the history by comparing texts; that also
rejected a short answer such as "Yes." given to two different questions, and
a model that truly sends the history back sends it as the history, not as a new
message.
"""

from __future__ import annotations

from .providers import ModelReply


def is_silent(reply: ModelReply) -> bool:
    """Whether ``reply`` fails to answer: it never finished, or it holds nothing."""
    return reply.stop_reason is None or not (reply.text.strip() or reply.tool_calls)
