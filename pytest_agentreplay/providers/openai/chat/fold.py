"""The Chat Completions stream accumulator: ``chat.completion.chunk`` events → final JSON.

It follows the ``openai`` SDK's ``ChatCompletionStreamState`` (see
``openai/lib/streaming/chat/_completions.py`` and ``openai/lib/streaming/_deltas.py``)
— string deltas concatenate, indexed lists merge by ``index``, ``logprobs``
lists extend, ``usage`` comes from the usage chunk — but builds what the
*provider* would have returned without streaming where the SDK takes a shortcut:

* ``role`` / ``channel`` / ``type`` / ``id`` values that some providers repeat
  in every delta (OpenRouter, Groq) are replaced, not concatenated;
* a later chunk's ``"usage": null`` (OpenAI's moderation chunk) does not erase
  the usage already received;
* Mistral's list-valued ``delta.content`` (``thinking`` parts) turns the content
  into Mistral's non-streaming part list instead of being dropped;
* Azure's ``object: ""`` prompt-filter chunks are folded in
  (``prompt_filter_results``), not skipped;
* tool calls lose their streaming-only ``index``; the fields the non-streaming
  schema always has are filled in (``message.refusal = null``,
  ``message.annotations = []``, ``choice.logprobs = null``, ``usage = null``);
* choices are ordered by ``index`` whatever order they first appear in.

In-stream errors (a chunk or ``event: error`` whose data carries a truthy
``error``, exactly where the SDK raises ``APIError``) stop the fold: the partial
body is kept and ``Folded.error`` is the ``error`` object. ``complete`` is true
only when ``data: [DONE]`` arrived without an error.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ....sse import SSEEvent
from ...base import Codec, Folded
from ...roles import EventFolder

__all__ = ["fold"]

# Keys whose repeated values replace the previous one instead of concatenating.
_REPLACE_KEYS = frozenset({"index", "type", "role", "id", "channel", "format", "signature"})
_TOP_FIRST = ("id", "created", "model")  # identity: fixed by the first chunk
_TOP_SKIP = frozenset({"choices", "object", "obfuscation", "usage", "error"})
_CHOICE_KEYS = frozenset({"index", "delta", "finish_reason", "logprobs"})
_KNOWN_EVENTS = (None, "message", "error")


def _accumulate(old: Any, new: Any, key: str) -> Any:
    """Merge one delta value into the accumulated one (SDK ``accumulate_delta`` rules,
    with replace semantics for identity-like keys and scalars)."""
    if new is None:
        return old
    if old is None:
        return _merge_list([], new) if _is_indexed(new) else copy.deepcopy(new)
    if key in _REPLACE_KEYS:
        return copy.deepcopy(new)
    if isinstance(old, str) and isinstance(new, str):
        return old + new
    if isinstance(old, dict) and isinstance(new, dict):
        return _merge_dict(old, new)
    if isinstance(old, list) and isinstance(new, list):
        return _merge_list(old, new) if _is_indexed(new) else old + copy.deepcopy(new)
    return copy.deepcopy(new)


def _merge_dict(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    for key, value in new.items():
        old[key] = _accumulate(old.get(key), value, key)
    return old


def _is_indexed(value: Any) -> bool:
    return isinstance(value, list) and any(
        isinstance(v, dict) and isinstance(v.get("index"), int) for v in value
    )


def _merge_list(old: list[Any], new: list[Any]) -> list[Any]:
    for entry in new:
        index = entry.get("index") if isinstance(entry, dict) else None
        if not isinstance(index, int) or index >= len(old):
            old.append(copy.deepcopy(entry))
        elif isinstance(old[index], dict):
            old[index] = _merge_dict(old[index], entry)
    return old


def _replace_merge(old: Any, new: Any) -> Any:
    """Deep merge where scalars replace (choice / top-level extras such as Azure
    ``content_filter_results`` or Groq ``x_groq``); ``None`` never erases."""
    if new is None:
        return old
    if isinstance(old, dict) and isinstance(new, dict):
        merged = dict(old)
        for key, value in new.items():
            merged[key] = _replace_merge(old.get(key), value)
        return merged
    return copy.deepcopy(new)


def fold(codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> Folded:
    """Accumulate a chunk stream into the ``chat.completion`` body (see the module docs)."""
    return _Folder(codec, events, strict=strict).run()


class _Folder(EventFolder):
    """One fold over one event list."""

    def __init__(self, codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> None:
        super().__init__(codec, events, strict=strict)
        self._top: dict[str, Any] | None = None
        self._extras: dict[str, Any] = {}
        self._choices: dict[int, dict[str, Any]] = {}
        self._usage: Any = None
        self._complete = False
        self._error: dict[str, Any] | None = None

    # -- driving -------------------------------------------------------------

    def step(self, event: SSEEvent) -> bool:
        if event.event not in _KNOWN_EVENTS:
            self.skip(f"unknown event name {event.event!r}", "event")
            return False
        if event.data.startswith("[DONE]"):  # the SDK stops at the same test
            self._complete = True
            return True
        data = self.data()
        if data.get("error"):
            self._error = self._error_object(data["error"])
            return True
        if event.event == "error":
            raise self.fail("an 'error' event carries no 'error' object", "error")
        self._dispatch(data)
        return False

    def result(self) -> Folded:
        error = self._error
        return self.folded(self.body(), complete=self._complete and error is None, error=error)

    @staticmethod
    def _error_object(error: Any) -> dict[str, Any]:
        return dict(error) if isinstance(error, dict) else {"message": str(error)}

    def _dispatch(self, data: dict[str, Any]) -> None:
        kind = data.get("object")
        if kind == "chat.completion.chunk" or (kind is None and "choices" in data):
            self._chunk(data, annotation_only=False)
        elif kind == "":  # Azure prompt / async content filter results
            self._chunk(data, annotation_only=True)
        else:
            self.skip(f"unknown object type {kind!r}", "object")

    # -- chunks --------------------------------------------------------------

    def _chunk(self, data: dict[str, Any], *, annotation_only: bool) -> None:
        choices = data.get("choices", [])
        if not isinstance(choices, list):
            raise self.fail("must be a list", "choices")
        if annotation_only:
            if data.get("prompt_filter_results") is not None:
                self._extras["prompt_filter_results"] = copy.deepcopy(data["prompt_filter_results"])
        else:
            self._top_level(data)
        for k, choice in enumerate(choices):
            self._choice(choice, f"choices[{k}]")

    def _top_level(self, data: dict[str, Any]) -> None:
        if self._top is None:
            self._top = {key: data[key] for key in _TOP_FIRST if key in data}
        for key, value in data.items():
            if key in _TOP_SKIP or key in _TOP_FIRST:
                continue
            self._extras[key] = _replace_merge(self._extras.get(key), value)
        if data.get("usage") is not None:
            self._usage = copy.deepcopy(data["usage"])

    def _choice(self, raw: Any, path: str) -> None:
        if not isinstance(raw, dict):
            raise self.fail("must be an object", path)
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise self.fail("must be an integer", f"{path}.index")
        state = self._choices.setdefault(
            index, {"index": index, "message": {}, "logprobs": None, "finish_reason": None}
        )
        delta = raw.get("delta")
        if delta is not None:
            if not isinstance(delta, dict):
                raise self.fail("must be an object", f"{path}.delta")
            self._delta(state["message"], delta, f"{path}.delta")
        if raw.get("finish_reason"):
            state["finish_reason"] = raw["finish_reason"]
        self._logprobs(state, raw.get("logprobs"), f"{path}.logprobs")
        for key, value in raw.items():
            if key not in _CHOICE_KEYS:
                state[key] = _replace_merge(state.get(key), value)

    def _logprobs(self, state: dict[str, Any], logprobs: Any, path: str) -> None:
        if logprobs is None:
            return
        if not isinstance(logprobs, dict):
            raise self.fail("must be an object", path)
        current = state["logprobs"]
        if current is None:
            state["logprobs"] = {
                "content": copy.deepcopy(logprobs.get("content")),
                "refusal": copy.deepcopy(logprobs.get("refusal")),
            }
            return
        for key in ("content", "refusal"):
            more = logprobs.get(key)
            if more:
                if not isinstance(more, list):
                    raise self.fail("must be a list", f"{path}.{key}")
                current[key] = (current.get(key) or []) + copy.deepcopy(more)

    # -- message deltas ------------------------------------------------------

    def _delta(self, message: dict[str, Any], delta: dict[str, Any], path: str) -> None:
        for key, value in delta.items():
            if key == "tool_calls":
                self._tool_calls(message, value, f"{path}.tool_calls")
            elif key == "content" and (
                isinstance(value, list) or isinstance(message.get("content"), list)
            ):
                self._content_parts(message, value, f"{path}.content")
            else:
                if (
                    key in ("content", "refusal")
                    and value is not None
                    and not isinstance(value, str)
                ):
                    raise self.fail("must be a string, a list of parts or null", f"{path}.{key}")
                message[key] = _accumulate(message.get(key), value, key)

    def _tool_calls(self, message: dict[str, Any], value: Any, path: str) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            raise self.fail("must be a list", path)
        calls: list[dict[str, Any]] = message.setdefault("tool_calls", [])
        for j, entry in enumerate(value):
            here = f"{path}[{j}]"
            if not isinstance(entry, dict):
                raise self.fail("must be an object", here)
            index = entry.get("index")
            if not isinstance(index, int) or isinstance(index, bool):
                raise self.fail("must be an integer", f"{here}.index")
            function = entry.get("function") or {}
            if not isinstance(function, dict):
                raise self.fail("must be an object", f"{here}.function")
            arguments = function.get("arguments")
            if arguments is not None and not isinstance(arguments, str):
                raise self.fail("must be a string", f"{here}.function.arguments")
            if index > len(calls):
                raise self.fail(
                    f"tool call index {index} arrived before index {len(calls)}", f"{here}.index"
                )
            if index == len(calls):
                calls.append(self._open_call(entry, function, here))
            self._merge_call(calls[index], entry, function)

    def _open_call(
        self, entry: dict[str, Any], function: dict[str, Any], path: str
    ) -> dict[str, Any]:
        if entry.get("id") is None and function.get("name") is None:
            raise self.fail(
                f"delta for tool call index {entry['index']} that was never opened "
                "(no id or function name)",
                f"{path}.index",
            )
        return {
            "id": None,
            "type": entry.get("type") or "function",
            "function": {"name": "", "arguments": ""},
        }

    @staticmethod
    def _merge_call(call: dict[str, Any], entry: dict[str, Any], function: dict[str, Any]) -> None:
        for key, value in entry.items():
            if key in ("index", "function"):
                continue
            call[key] = _accumulate(call.get(key), value, key)
        call["function"] = _merge_dict(call["function"], function)

    def _content_parts(self, message: dict[str, Any], value: Any, path: str) -> None:
        """Mistral: ``delta.content`` as a list of parts turns the content into the
        part list Mistral returns without streaming (thinking, then text)."""
        parts = message.get("content")
        if not isinstance(parts, list):
            parts = [{"type": "text", "text": parts}] if parts else []
            message["content"] = parts
        if value is None:
            return
        if isinstance(value, str):
            value = [{"type": "text", "text": value}]
        if not isinstance(value, list):
            raise self.fail("must be a string, a list of parts or null", path)
        for j, part in enumerate(value):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise self.fail("content part needs a string 'type'", f"{path}[{j}].type")
            self._content_part(parts, part, f"{path}[{j}]")

    def _content_part(self, parts: list[Any], part: dict[str, Any], path: str) -> None:
        last = parts[-1] if parts else None
        kind = part["type"]
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise self.fail("must be a string", f"{path}.text")
            if isinstance(last, dict) and last.get("type") == "text":
                last["text"] += text
            elif text:
                parts.append(copy.deepcopy(part))
        elif kind == "thinking":
            text = self._thinking_text(part.get("thinking"), f"{path}.thinking")
            if isinstance(last, dict) and last.get("type") == "thinking":
                last["thinking"][0]["text"] += text
                for key, value in part.items():
                    if key not in ("type", "thinking"):
                        last[key] = value
            elif text:
                parts.append({**copy.deepcopy(part), "thinking": [{"type": "text", "text": text}]})
        else:
            parts.append(copy.deepcopy(part))

    def _thinking_text(self, value: Any, path: str) -> str:
        if isinstance(value, str):
            return value
        if not isinstance(value, list):
            raise self.fail("must be a string or a list of text parts", path)
        texts = []
        for k, inner in enumerate(value):
            text = inner.get("text") if isinstance(inner, dict) else None
            if not isinstance(text, str):
                raise self.fail("must be a string", f"{path}[{k}].text")
            texts.append(text)
        return "".join(texts)

    # -- result --------------------------------------------------------------

    def body(self) -> dict[str, Any]:
        """The body folded so far, in the non-streaming ``chat.completion`` shape."""
        top = self._top or {}
        body: dict[str, Any] = {key: top[key] for key in ("id",) if key in top}
        body["object"] = "chat.completion"
        body.update({key: top[key] for key in ("created", "model") if key in top})
        body["choices"] = [self._final_choice(self._choices[i]) for i in sorted(self._choices)]
        body["usage"] = self._usage
        body.update(copy.deepcopy(self._extras))
        return body

    @staticmethod
    def _final_choice(state: dict[str, Any]) -> dict[str, Any]:
        acc = state["message"]
        message: dict[str, Any] = {
            "role": acc.get("role") or "assistant",
            "content": copy.deepcopy(acc.get("content")),
        }
        for key, value in acc.items():
            if key not in ("role", "content", "refusal", "annotations"):
                message[key] = copy.deepcopy(value)
        message["refusal"] = acc.get("refusal")
        message["annotations"] = copy.deepcopy(acc.get("annotations") or [])
        choice = {
            "index": state["index"],
            "message": message,
            "logprobs": copy.deepcopy(state["logprobs"]),
            "finish_reason": state["finish_reason"],
        }
        choice.update({k: copy.deepcopy(v) for k, v in state.items() if k not in choice})
        return choice
