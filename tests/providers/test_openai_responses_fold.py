"""Folding real OpenAI Responses streams, and refusing malformed ones.

Every 200 streaming Responses interaction in ``tests/corpus`` (api.openai.com,
OpenRouter's data-only records with ``[DONE]``, DeepSeek, and the background-mode
``GET /responses/{id}?stream=true`` resume) is decoded with our ``sse.decode``,
folded, and compared with what the real ``openai`` SDK builds from the *same
bytes*. Our folded JSON is parsed by the SDK too (served as a JSON body to
``responses.create``), so both sides are the SDK's own ``Response`` models.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import Reply, ServerToolCall, Text, Thinking, ToolCall
from pytest_agentreplay.providers.base import IdFactory, RenderContext
from pytest_agentreplay.providers.openai_responses import OpenAIResponsesCodec
from pytest_agentreplay.sse import SSEEvent, decode
from tests import corpus
from tests.providers._responses_sdk import dump, sdk_create, sdk_raw_events, sdk_stream

pytestmark = pytest.mark.sdk

CODEC = OpenAIResponsesCodec()

RESUME_PATH_PREFIX = "/v1/responses/"
STREAMS = [
    item
    for item in corpus.streams()
    if item.provider == "openai_responses"
    or (item.method == "GET" and item.path.startswith(RESUME_PATH_PREFIX))
]
# The SDK's union model for web_search_call actions has no ``sources[].type ==
# "api"`` variant (the recording has one), so pydantic warns while dumping it.
# The data round-trips unchanged; only the warning is silenced, for that stream.
WEB_SEARCH = "openai_responses/pydantic-ai__test_openai_responses_model_web_search_tool_stream"
SERIALIZER_WARNING = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


def params() -> list[Any]:
    return [
        pytest.param(
            item, id=item.id, marks=[SERIALIZER_WARNING] if item.id.startswith(WEB_SEARCH) else []
        )
        for item in STREAMS
    ]


def test_the_corpus_has_every_kind_of_responses_stream() -> None:
    hosts = {item.host for item in STREAMS}
    assert {"api.openai.com", "openrouter.ai", "api.deepseek.com"} <= hosts
    assert any(item.method == "GET" for item in STREAMS)
    assert len(STREAMS) == 16  # 13 from api.openai.com, 2 DeepSeek, 1 OpenRouter


# -- corpus: fold == the SDK's accumulator over the same bytes ---------------------------


@pytest.mark.parametrize("item", params())
def test_corpus_stream_folds_like_the_sdk(item: corpus.CorpusInteraction) -> None:
    decoded = decode(item.body)
    assert decoded.truncated is None
    folded = CODEC.fold_detailed(decoded.events, strict=True)
    assert (folded.complete, folded.error, folded.unknown) == (True, None, [])

    ours = dump(sdk_create(folded.body))
    if item.method == "GET":
        # A resumed stream starts at response.queued; the SDK's accumulator
        # insists on response.created first and raises. Next best independent
        # reference: the SDK's raw typed stream, whose terminal event carries
        # the response the SDK hands to its caller.
        with pytest.raises(RuntimeError, match=r"response\.created"):
            sdk_stream([item.body])
        terminal = list(sdk_raw_events([item.body], method="GET"))[-1]
        assert terminal.type == "response.completed"
        assert ours == dump(terminal.response)
    else:
        _, final = sdk_stream([item.body])
        assert ours == dump(final)


# Per output item: the strings that deltas build (messages, calls, reasoning).
def _delta_strings(body: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for item in body["output"]:
        if item["type"] == "message":
            out.append(
                [
                    (
                        p["type"],
                        p.get("text", p.get("refusal")),
                        [lp["token"] for lp in p.get("logprobs") or []],
                    )
                    for p in item["content"]
                ]
            )
        elif item["type"] == "function_call":
            out.append(item["arguments"])
        elif item["type"] == "reasoning":
            out.append(
                (
                    [s["text"] for s in item.get("summary") or []],
                    [c["text"] for c in item.get("content") or []],
                )
            )
        else:
            out.append(item["type"])  # server-side items carry no deltas
    return out


def _without_finals(events: list[SSEEvent]) -> list[SSEEvent]:
    """Only the records that open things and the deltas: every ``*.done`` and the
    terminal ``response.completed`` dropped."""
    kept = []
    for event in events:
        data = json.loads(event.data) if event.data.startswith("{") else {}
        kind = data.get("type", "")
        if not kind.endswith(".done") and kind != "response.completed":
            kept.append(event)
    return kept


@pytest.mark.parametrize("item", params())
def test_corpus_deltas_agree_with_the_final_snapshot(item: corpus.CorpusInteraction) -> None:
    """response.completed repeats everything, so check the deltas on their own:
    a fold of only the opening records and deltas (complete=False) must give
    the same texts, arguments, summaries and logprob tokens as the final one."""
    events = decode(item.body).events
    final = CODEC.fold(events)
    partial = CODEC.fold_detailed(_without_finals(events), strict=True)
    assert not partial.complete
    assert partial.body["status"] in ("in_progress", "queued")
    # (Server-side items such as web_search_call only become final in their
    # output_item.done; for them only the item type is compared.)
    assert _delta_strings(partial.body) == _delta_strings(final)


def test_openrouter_completed_snapshot_renames_the_reasoning_item() -> None:
    """OpenRouter's response.completed gives the reasoning item a new ``rs_tmp_``
    id; like the SDK, the fold takes the terminal snapshot as the final body."""
    item = next(i for i in STREAMS if i.host == "openrouter.ai")
    events = decode(item.body).events
    assert events[-1].data == "[DONE]"
    streamed_id = json.loads(events[2].data)["item"]["id"]
    final = CODEC.fold(events)
    assert final["output"][0]["id"] != streamed_id
    partial = CODEC.fold_detailed(events[:-2])  # before response.completed
    assert partial.body["output"][0]["id"] == streamed_id
    assert CODEC.to_reply(final).parts == CODEC.to_reply(partial.body).parts


def test_resumed_stream_reaches_the_same_response_as_the_original() -> None:
    name = "openai_responses/pydantic-ai__test_background_mode_streaming_starting_after_vcr.yaml"
    original, resumed = (next(i for i in STREAMS if i.id == f"{name}#{n}") for n in (0, 1))
    assert resumed.method == "GET"
    assert resumed.provider == "openai_responses"  # a GET resume is a Responses stream too
    assert CODEC.handles(resumed.method, resumed.path)
    assert CODEC.fold(decode(resumed.body).events) == CODEC.fold(decode(original.body).events)


def test_non_streaming_twin_has_the_shape_of_the_folded_stream() -> None:
    """The web-search cassette's second call is the non-streaming answer to a
    follow-up question, so only the shape can agree: same Response keys, the
    same kinds of output items, text, usage and stop in neutral form."""
    name = f"{WEB_SEARCH}.yaml"
    stream = next(i for i in STREAMS if i.id == f"{name}#0")
    twin = next(i for i in corpus.interactions() if i.id == f"{name}#1")
    assert not twin.is_sse
    folded = CODEC.fold(decode(stream.body).events)
    body = json.loads(twin.body)
    assert set(folded) == set(body)
    assert [o["type"] for o in folded["output"]] == [o["type"] for o in body["output"]]
    a, b = CODEC.to_reply(folded), CODEC.to_reply(body)
    kinds = [Thinking, ServerToolCall, Thinking, Text]  # the web search is a server tool call
    assert [type(p) for p in a.parts] == [type(p) for p in b.parts] == kinds
    assert a.server_tool_calls[0].query == "weather: San Francisco, CA"
    assert b.server_tool_calls[0].query == "weather: Mexico City, Mexico"
    assert a.stop == b.stop == "end_turn"
    assert a.usage is not None
    assert b.usage is not None
    assert b.text_content.startswith("Mexico City weather")


def test_corpus_to_reply() -> None:
    by_id = {item.id: CODEC.to_reply(CODEC.fold(decode(item.body).events)) for item in STREAMS}
    call = by_id["openai_responses/pydantic-ai__test_openai_responses_streaming_usage.yaml#0"]
    assert call.stop == "tool_use"
    assert call.parts[1] == ToolCall(
        name="final_result", args={"result": 6666}, id="call_CWXgs68YprAjp6t0371hiPOI"
    )
    assert isinstance(call.parts[0], Thinking)
    assert call.parts[0].signature is not None
    assert call.parts[0].signature.startswith("gAAAAAB")
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens, call.usage.reasoning_tokens) == (
        53,
        469,
        448,
    )
    thinking = by_id[
        "openai_responses/pydantic-ai__test_openai_responses_thinking_part_iter.yaml#0"
    ]
    assert isinstance(thinking.parts[0], Thinking)
    assert thinking.parts[0].text.count("\n\n**") == 3  # four summary parts, joined
    deepseek = by_id["other/pydantic-ai__test_deepseek_responses[function_tool_stream].yaml#0"]
    assert deepseek.parts[0] == Thinking(
        text="The user asks about temperature in Tokyo. I'll call the tool."
    )


# -- malformed streams ---------------------------------------------------------------------


def _events(reply: Reply | None = None) -> list[SSEEvent]:
    reply = reply or Reply.tool_call("f", {"x": 1}, text="Hello there, world")
    return CODEC.render_events(reply, RenderContext(ids=IdFactory("bad")))


def _replace(events: list[SSEEvent], index: int, **changes: Any) -> list[SSEEvent]:
    """``events`` with the data of record ``index`` updated (``None`` deletes a key)."""
    data = json.loads(events[index].data)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    edited = SSEEvent(data=json.dumps(data), event=events[index].event)
    return [*events[:index], edited, *events[index + 1 :]]


def _index_of(events: list[SSEEvent], kind: str) -> int:
    return next(i for i, e in enumerate(events) if e.event == kind)


def _fails(events: list[SSEEvent], index: int, field: str) -> CodecError:
    with pytest.raises(CodecError) as info:
        CODEC.fold_detailed(events)
    assert (info.value.event_index, info.value.field) == (index, field)
    assert info.value.provider == "openai_responses"
    return info.value


def test_non_json_data_names_the_event() -> None:
    events = _events()
    i = _index_of(events, "response.output_text.delta")
    broken = [*events[:i], SSEEvent(data="{not json", event=events[i].event), *events[i + 1 :]]
    assert "not JSON" in str(_fails(broken, i, "data"))


def test_data_without_a_type() -> None:
    events = _events()
    _fails(_replace(events, 3, type=None), 3, "type")
    _fails([*events[:3], SSEEvent(data="[1, 2]"), *events[3:]], 3, "data")


def test_event_name_must_agree_with_the_data_type() -> None:
    events = _events()
    i = _index_of(events, "response.output_text.delta")
    renamed = [
        *events[:i],
        SSEEvent(data=events[i].data, event="response.refusal.delta"),
        *events[i + 1 :],
    ]
    _fails(renamed, i, "event")


def test_delta_for_an_output_index_never_opened() -> None:
    events = _events()
    i = _index_of(events, "response.output_text.delta")
    assert "never opened" in str(_fails(_replace(events, i, output_index=7), i, "output_index"))


def test_delta_for_a_content_part_never_opened() -> None:
    events = _events()
    i = _index_of(events, "response.output_text.delta")
    _fails(_replace(events, i, content_index=1), i, "content_index")


def test_content_parts_must_open_in_order() -> None:
    events = _events()
    i = _index_of(events, "response.content_part.added")
    assert "out of order" in str(_fails(_replace(events, i, content_index=2), i, "content_index"))


def test_item_id_must_match_the_item_at_output_index() -> None:
    events = _events()
    i = _index_of(events, "response.function_call_arguments.delta")
    _fails(_replace(events, i, item_id="fc_someone_else"), i, "item_id")


def test_delta_into_a_part_of_another_type() -> None:
    events = _events()
    i = _index_of(events, "response.output_text.delta")
    refusal = json.loads(events[i].data) | {"type": "response.refusal.delta"}
    swapped = [
        *events[:i],
        SSEEvent(data=json.dumps(refusal), event="response.refusal.delta"),
        *events[i + 1 :],
    ]
    _fails(swapped, i, "content_index")


def test_sequence_numbers_must_increase() -> None:
    events = _events()
    _fails(_replace(events, 5, sequence_number=2), 5, "sequence_number")
    _fails(_replace(events, 5, sequence_number="5"), 5, "sequence_number")


def test_output_index_opened_twice() -> None:
    events = _events()
    i = _index_of(events, "response.output_item.added")
    doubled = [*events[: i + 1], events[i], *events[i + 1 :]]
    _fails(_replace(doubled, i + 1, sequence_number=10_000), i + 1, "output_index")


def test_records_before_response_created() -> None:
    events = _events()
    _fails(events[2:], 0, "type")


def test_records_after_the_terminal_event() -> None:
    events = _events()
    _fails([*events, events[4]], len(events), "type")


def test_a_delta_after_its_item_is_done() -> None:
    events = _events()
    i = _index_of(events, "response.output_text.delta")
    done = _index_of(events, "response.output_item.done")
    moved = _renumbered([*events[:i], *events[i + 1 : done + 1], events[i], *events[done + 1 :]])
    assert "already done" in str(_fails(moved, done, "output_index"))


def test_output_item_done_cannot_change_the_item_type() -> None:
    events = _events()
    i = _index_of(events, "response.output_item.done")
    item = json.loads(events[i].data)["item"] | {"type": "function_call"}
    _fails(_replace(events, i, item=item), i, "item.type")


def test_terminal_response_must_be_the_same_response() -> None:
    events = _events()
    last = json.loads(events[-1].data)["response"] | {"id": "resp_other"}
    _fails(_replace(events, len(events) - 1, response=last), len(events) - 1, "response.id")


# -- unknown, errors, sentinels ------------------------------------------------------------


def test_unknown_event_types_are_kept_and_only_strict_refuses_them() -> None:
    events = _events()
    future = SSEEvent(
        data=json.dumps({"type": "response.future_thing.delta", "x": 1, "sequence_number": 3}),
        event="response.future_thing.delta",
    )
    stream = [*events[:3], future, *events[3:]]
    stream = [_renumber(e, n) for n, e in enumerate(stream)]
    folded = CODEC.fold_detailed(stream)
    assert folded.unknown == [3]
    assert folded.complete
    assert folded.body == CODEC.fold(_renumbered(events))
    with pytest.raises(CodecError) as info:
        CODEC.fold_detailed(stream, strict=True)
    assert (info.value.event_index, info.value.field) == (3, "type")


def _renumber(event: SSEEvent, number: int) -> SSEEvent:
    data = json.loads(event.data) | {"sequence_number": number}
    return SSEEvent(data=json.dumps(data), event=event.event)


def _renumbered(events: list[SSEEvent]) -> list[SSEEvent]:
    return [_renumber(e, n) for n, e in enumerate(events)]


def test_a_stream_that_never_completes_folds_partially() -> None:
    events = _events()
    i = _index_of(events, "response.function_call_arguments.delta")
    folded = CODEC.fold_detailed(events[: i + 2])
    assert not folded.complete
    assert folded.body["status"] == "in_progress"
    assert folded.body["usage"] is None
    reply = CODEC.to_reply(folded.body)
    assert reply.text_content == "Hello there, world"
    assert reply.tool_calls[0].name == "f"


def test_documented_flat_error_record_is_understood_too() -> None:
    events = _events()
    flat = SSEEvent(
        event="error",
        data=json.dumps(
            {
                "type": "error",
                "code": "server_error",
                "message": "Boom",
                "param": None,
                "sequence_number": 4,
            }
        ),
    )
    folded = CODEC.fold_detailed([*events[:4], flat, *events[4:]])
    assert folded.error == {"code": "server_error", "message": "Boom", "param": None}
    assert not folded.complete  # the fold stops at the error; the partial body stays
    assert folded.body["id"] == json.loads(events[0].data)["response"]["id"]


def test_bare_error_object_under_event_error() -> None:
    events = _events()
    bare = SSEEvent(event="error", data=json.dumps({"error": {"message": "Overloaded"}}))
    folded = CODEC.fold_detailed([*events[:4], bare])
    assert folded.error == {"message": "Overloaded"}
    assert not folded.complete


def test_response_failed_is_terminal_with_its_error() -> None:
    events = _events()
    failed = json.loads(events[-1].data)
    failed["type"] = "response.failed"
    failed["response"] |= {
        "status": "failed",
        "output": None,
        "error": {"code": "server_error", "message": "Model crashed."},
    }
    folded = CODEC.fold_detailed(
        [*events[:-1], SSEEvent(data=json.dumps(failed), event="response.failed")]
    )
    assert folded.complete
    assert folded.error == {"code": "server_error", "message": "Model crashed."}
    # output left out of the terminal snapshot: recovered from the finished items.
    assert [o["type"] for o in folded.body["output"]] == ["message", "function_call"]
    reply = CODEC.to_reply(folded.body)
    assert reply.fault is not None
    assert (reply.fault.error_type, reply.fault.message) == ("server_error", "Model crashed.")


def test_data_only_records_and_done_sentinel() -> None:
    """OpenRouter's framing: no ``event:`` lines, then ``data: [DONE]``."""
    events = [SSEEvent(data=e.data) for e in _events()]
    folded = CODEC.fold_detailed([*events, SSEEvent(data="[DONE]")])
    assert folded.complete
    assert folded.body == CODEC.fold(_events())
    # The sentinel ends the stream, as in the SDK: nothing after it is read.
    cut = CODEC.fold_detailed([*events[:5], SSEEvent(data="[DONE]"), SSEEvent(data="junk")])
    assert not cut.complete
