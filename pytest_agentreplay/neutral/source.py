"""Replies and faults written back as the Python that builds them.

:func:`reply_source` and :func:`fault_source` give the shortest call that makes an
equal object (``Reply.text('Hi')``, ``Fault.cut(after_events=4)``): what a fault
plan's ``repr`` and a falsifying example show, so it can be pasted into a test.
They read the objects by attribute and import only the parts, so the reply module
can use them without an import cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .parts import Citation, Part, SearchResult, ServerToolCall, Text, Thinking, ToolCall, Usage

if TYPE_CHECKING:
    from .replies import Fault, Reply

__all__ = ["fault_source", "kwargs_source", "reply_source"]


def kwargs_source(**values: Any) -> str:
    """``, name=value`` for every value that is not ``None``, in order."""
    return "".join(f", {k}={v!r}" for k, v in values.items() if v is not None)


def _answer_source(fault: Fault) -> str:
    """The header keywords every fault constructor takes."""
    return kwargs_source(
        retry_after=fault.retry_after, request_id=fault.request_id, headers=fault.headers
    )


def fault_source(fault: Fault) -> str:
    """Python that builds ``fault``: ``Fault.cut(after_events=4)``."""
    after = fault.after_events
    answer = _answer_source(fault)
    if fault.kind == "http":
        extra = kwargs_source(error_type=fault.error_type)
        message = "" if fault.message is None else f", {fault.message!r}"
        return f"Fault.http({fault.status}{message}{answer}{extra})"
    if fault.kind == "error_event":
        extra = kwargs_source(error_type=fault.error_type, message=fault.message)
        return f"Fault.error_event(after_events={after or 0}{extra}{answer})"
    if fault.kind == "timeout" and after is None:
        return "Fault.timeout()"
    if fault.kind == "empty":
        return f"Fault.empty({answer.removeprefix(', ')})"
    return f"Fault.{fault.kind}(after_events={after or 0}{answer})"


def _usage_source(usage: Usage) -> str:
    fields = usage.model_dump(exclude_defaults=True)
    return "Usage(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"


def _model_source(value: Citation | SearchResult) -> str:
    """``Citation(url='...', title='...')``: the fields that differ from the defaults."""
    fields = value.model_dump(exclude_defaults=True)
    return f"{type(value).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"


def _list_source(values: Sequence[Citation | SearchResult]) -> str:
    return "[" + ", ".join(_model_source(v) for v in values) + "]"


def _server_tool_source(part: ServerToolCall) -> str:
    ident = kwargs_source(id=part.id, error=part.error)
    if part.name == "web_search":
        results = f", {_list_source(part.results)}" if part.results else ""
        return f"ServerToolCall.web_search({part.query!r}{results}{ident})"
    out = part.output
    printed = "" if out is None else kwargs_source(**out.model_dump(exclude_defaults=True))
    return f"ServerToolCall.code_execution({part.query!r}{printed}{ident})"


def _part_source(part: Part) -> str:
    if isinstance(part, Text):
        cited = f", citations={_list_source(part.citations)}" if part.citations else ""
        return f"Text(text={part.text!r}{cited})"
    if isinstance(part, Thinking):
        return f"Thinking(text={part.text!r}{kwargs_source(signature=part.signature)})"
    if isinstance(part, ServerToolCall):
        return _server_tool_source(part)
    return f"ToolCall(name={part.name!r}, args={part.args!r}{kwargs_source(id=part.id)})"


_LETTER = {"text": "T", "tool_call": "C", "thinking": "K", "server_tool_call": "S"}


def _shape(parts: Sequence[Part]) -> str:
    """``"TC"`` for text then a tool call: what shortest constructor fits."""
    return "".join(_LETTER[p.kind] for p in parts)


def _tail(reply: Reply) -> str:
    usage = None if reply.usage is None else _usage_source(reply.usage)
    fault = None if reply.fault is None else fault_source(reply.fault)
    model = None if reply.model is None else repr(reply.model)
    fields = None if reply.event_fields is None else repr(reply.event_fields)
    shown = (("usage", usage), ("model", model), ("fault", fault), ("event_fields", fields))
    return "".join(f", {k}={v}" for k, v in shown if v is not None)


def reply_source(reply: Reply) -> str:
    """Python that builds ``reply``, in its shortest form: ``Reply.text('Hi')``."""
    tail = _tail(reply)
    shape = _shape(reply.parts)
    if shape == "T":
        only = reply.parts[0]
        assert isinstance(only, Text)
        cited = f", citations={_list_source(only.citations)}" if only.citations else ""
        return f"Reply.text({only.text!r}{cited}{kwargs_source(stop=reply.stop)}{tail})"
    first = reply.parts[0] if reply.parts else None
    plain_text = isinstance(first, Text) and not first.citations
    if (shape == "C" or (shape == "TC" and plain_text)) and reply.stop is None:
        call = reply.parts[-1]
        assert isinstance(call, ToolCall)
        text = first.text if shape == "TC" and isinstance(first, Text) else None
        extra = kwargs_source(id=call.id, text=text)
        return f"Reply.tool_call({call.name!r}, {call.args!r}{extra}{tail})"
    parts = "[" + ", ".join(_part_source(p) for p in reply.parts) + "]"
    return f"Reply(parts={parts}{kwargs_source(stop=reply.stop)}{tail})"
