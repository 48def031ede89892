"""The event types of an OpenAI Responses stream, by what the fold does with each.

The catalogue :mod:`.fold` dispatches on: lifecycle and terminal
events carry the whole response; item and content-part events build the output
from deltas; progress events are only checked. Anything not listed here is an
unknown event type (``Folded.unknown``, or an error with ``strict``).
"""

from __future__ import annotations

__all__ = [
    "ITEM_STRINGS",
    "KNOWN_EVENT_TYPES",
    "LIFECYCLE",
    "OTHER_HANDLED",
    "PART_STRINGS",
    "PROGRESS",
    "TERMINAL",
]

LIFECYCLE = frozenset({"response.created", "response.queued", "response.in_progress"})
"""Events carrying the response while it is made (a resumed stream starts at queued)."""
TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""Events carrying the final response: nothing but ``[DONE]`` may follow one."""
# Events that only report progress; the item's final state arrives in
# response.output_item.done. Checked (their output_index must be open), not folded.
PROGRESS = frozenset(
    {
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
        "response.image_generation_call.completed",
        "response.image_generation_call.partial_image",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.compaction.compacting",
        "response.shell_call_command.added",
        "response.shell_call_command.delta",
        "response.shell_call_command.done",
        "response.shell_call_output_content.delta",
        "response.shell_call_output_content.done",
        "response.audio.delta",
        "response.audio.done",
        "response.audio.transcript.delta",
        "response.audio.transcript.done",
    }
)
# Item-level string deltas: event type -> (item field, field of the .done event).
ITEM_STRINGS: dict[str, tuple[str, str | None]] = {
    "response.function_call_arguments.delta": ("arguments", None),
    "response.function_call_arguments.done": ("arguments", "arguments"),
    "response.mcp_call_arguments.delta": ("arguments", None),
    "response.mcp_call_arguments.done": ("arguments", "arguments"),
    "response.custom_tool_call_input.delta": ("input", None),
    "response.custom_tool_call_input.done": ("input", "input"),
    "response.code_interpreter_call_code.delta": ("code", None),
    "response.code_interpreter_call_code.done": ("code", "code"),
}
# Content-part string deltas: event type -> (part type, part field, field of .done).
PART_STRINGS: dict[str, tuple[str, str, str | None]] = {
    "response.output_text.delta": ("output_text", "text", None),
    "response.output_text.done": ("output_text", "text", "text"),
    "response.refusal.delta": ("refusal", "refusal", None),
    "response.refusal.done": ("refusal", "refusal", "refusal"),
    "response.reasoning_text.delta": ("reasoning_text", "text", None),
    "response.reasoning_text.done": ("reasoning_text", "text", "text"),
}
# Events the fold handles one by one: items, content parts, annotations, reasoning
# summaries, and the error record.
OTHER_HANDLED = frozenset(
    {
        "error",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.annotation.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
    }
)
KNOWN_EVENT_TYPES = frozenset(
    LIFECYCLE | TERMINAL | PROGRESS | set(ITEM_STRINGS) | set(PART_STRINGS) | OTHER_HANDLED
)
"""Every event type this fold understands; anything else is ``Folded.unknown``."""
