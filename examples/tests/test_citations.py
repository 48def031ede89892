"""Issue 21, G4: the web sources a reply cites reach the step, the answer and the store.

A model that searched the web cites its sources: Anthropic attaches
``web_search_result_location`` citations to the text block they support (after a
provider-side ``web_search``), OpenAI Chat attaches ``url_citation`` annotations to
the message (streamed as one ``annotations`` delta after the content). The agent
carries them, as :class:`agent.Citation` s spanning the text they support, on the
step's outcome (``ModelStepCompleted.citations``), the final message, the saved
answer and the write-ahead log — the same whether the reply was streamed or not.
"""

from __future__ import annotations

import sqlite3

import anthropic
import pytest
from agent import (
    Agent,
    Citation,
    FinalMessage,
    Message,
    ModelStepCompleted,
    ServerToolBegin,
    ServerToolEnd,
    SessionConfig,
    StepContent,
    Store,
    ToolBegin,
    TurnComplete,
)
from agent.citations import anthropic_citations, openai_citations
from agent.providers import ModelReply
from agent.testing import record

from pytest_agentreplay import Citation as Cites
from pytest_agentreplay import Reply, SearchResult, ServerToolCall, Text, invariants
from pytest_agentreplay.runlog import RunLog

MET = "https://met.example/leeds"
INTRO = "Let me look that up. "
ANSWER = "Rain is expected in Leeds tomorrow."
QUESTION = "Will it rain in Leeds tomorrow?"
SEARCH = ServerToolCall.web_search(
    "Leeds rain tomorrow", [SearchResult(url=MET, title="Met: Leeds")], id="srvtoolu_leeds"
)
CITED_AFTER_A_SEARCH = Reply(
    parts=[
        Text(text=INTRO),
        SEARCH,
        Text(
            text=ANSWER, citations=[Cites(url=MET, title="Met: Leeds", cited_text="rain tomorrow")]
        ),
    ]
)
# OpenAI Chat has no provider-side search: the answer cites one source for a span
# and one for all of it.
WHOLE = "https://news.example/leeds-weather"
CITED = {
    "anthropic": CITED_AFTER_A_SEARCH,
    "openai": Reply.text(
        ANSWER, citations=[Cites(url=MET, title="Met: Leeds", start=0, end=4), Cites(url=WHOLE)]
    ),
}


def _assert_cited(agent: Agent, text: str, cited: tuple[Citation, ...]) -> None:
    """The step's outcome, the final message, the saved answer and the write-ahead
    log's completion all carry ``cited`` for the answer ``text``."""
    [completed] = agent.events_of(ModelStepCompleted)
    assert (completed.outcome, completed.text, completed.citations) == ("completed", text, cited)
    [final] = agent.events_of(FinalMessage)
    assert (final.text, final.citations) == (text, cited)
    _, answer = agent.store.messages(agent.session_id)
    assert (answer.role, answer.text, answer.citations) == ("assistant", text, cited)
    [done] = agent.events_of(TurnComplete)
    assert done.text == text
    completion = agent.store.wal(agent.session_id)[-1]
    assert ModelReply.from_json(completion.body).citations == list(cited)


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "json"])
async def test_an_anthropic_answer_after_a_web_search_delivers_its_cited_url(stream, backend):
    """Checks (Anthropic, streamed and not alike): a reply with a provider-side web
    search and a text block citing its result completes the turn; the search begins
    and ends ``completed`` with its call id, and the agent runs no tool of its own;
    the cited URL, its title and the quoted passage reach the step's outcome, the
    final message, the saved answer and the write-ahead log, spanning the cited
    block in the answer's text; the step's content is the two text parts, at the
    indexes of their blocks (the search's two blocks between them), the citation on
    the second."""
    backend.script(CITED_AFTER_A_SEARCH)
    agent = Agent(backend.config("anthropic", stream=stream))

    result = await agent.run_turn(QUESTION)

    assert (result.outcome, result.text) == ("completed", INTRO + ANSWER)
    span = (len(INTRO), len(INTRO + ANSWER))
    expected = (Citation(MET, "Met: Leeds", "rain tomorrow", *span),)
    _assert_cited(agent, INTRO + ANSWER, expected)
    [completed] = agent.events_of(ModelStepCompleted)
    assert completed.content == (
        StepContent(0, 0, "final_answer", INTRO),
        StepContent(0, 3, "final_answer", ANSWER, expected),
    )
    [begin] = agent.events_of(ServerToolBegin)
    [end] = agent.events_of(ServerToolEnd)
    assert (begin.call_id, begin.name) == ("srvtoolu_leeds", "web_search")
    assert (end.call_id, end.outcome) == ("srvtoolu_leeds", "completed")
    assert agent.events_of(ToolBegin) == []
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "json"])
async def test_an_openai_chat_answer_delivers_its_url_citations(stream, backend):
    """Checks (OpenAI Chat, streamed and not alike): ``url_citation`` annotations —
    one on a span of the answer, one on all of it — reach the step's outcome, the
    final message, the saved answer and the write-ahead log with their URL, title
    and span, in order."""
    whole = WHOLE
    backend.script(CITED["openai"])
    agent = Agent(backend.config("openai", stream=stream))

    result = await agent.run_turn(QUESTION)

    assert (result.outcome, result.text) == ("completed", ANSWER)
    expected = (Citation(MET, "Met: Leeds", "", 0, 4), Citation(whole, "", "", 0, len(ANSWER)))
    _assert_cited(agent, ANSWER, expected)
    backend.assert_offline()


# The sources each provider's answer cites, as the run log keeps them (spans in the
# saved answer's text).
LOGGED = {
    "anthropic": [
        Cites(
            url=MET,
            title="Met: Leeds",
            cited_text="rain tomorrow",
            start=len(INTRO),
            end=len(INTRO + ANSWER),
        )
    ],
    "openai": [
        Cites(url=MET, title="Met: Leeds", start=0, end=4),
        Cites(url=WHOLE, start=0, end=len(ANSWER)),
    ],
}


@pytest.mark.anyio
async def test_the_cited_sources_reach_the_run_log_and_its_snapshot(scripted_model, snapshot):
    """Checks: the run-log adapter passes the saved answer's citations on — URL,
    title, quoted passage and span — so the run's snapshot (next to this file, in
    ``__snapshots__/test_citations/``) shows what the answer cites."""
    scripted_model.script(CITED["anthropic"])
    agent = Agent(SessionConfig())
    log = record(agent, RunLog.from_fake(scripted_model))

    await agent.run_turn(QUESTION)

    [answer] = log.messages(role="assistant")
    assert (answer.text, answer.citations) == (INTRO + ANSWER, LOGGED["anthropic"])
    assert log == snapshot


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_the_streamed_and_the_json_answer_cite_alike(provider):
    """Checks: ``assert_stream_parity`` over a cited answer — one SSE event a chunk,
    the whole body, one byte, seven bytes, and JSON: every run saves the same answer
    with the same citations (the run log holds them, so a path that lost or moved one
    would fail the parity)."""

    async def run(stream: bool) -> RunLog:
        agent = Agent(SessionConfig(provider=provider, stream=stream))
        log = record(agent)
        await agent.run_turn(QUESTION)
        return log

    runs = await invariants.assert_stream_parity_async(run, script=[CITED[provider]])

    for parity_run in runs:
        [answer] = parity_run.log.messages(role="assistant")
        assert answer.citations == LOGGED[provider]


def test_a_store_saved_before_citations_keeps_its_messages(tmp_path):
    """Checks: a store file written before messages had citations is opened without
    losing a message (it gains the column; old answers cite nothing), and a new
    answer's citations are saved and read back."""
    path = tmp_path / "agent.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, "
        "turn_id TEXT, step_id TEXT, role TEXT, kind TEXT, text TEXT, tool_calls TEXT, "
        "tool_call_id TEXT)"
    )
    old.execute(
        "INSERT INTO messages (session_id, turn_id, step_id, role, kind, text, tool_calls, "
        "tool_call_id) VALUES ('s', 't', NULL, 'user', 'message', 'Hello?', '[]', NULL)"
    )
    old.commit()
    old.close()

    store = Store(str(path))
    cited = (Citation(MET, "Met: Leeds", "", 0, 5),)
    store.save(Message("assistant", "Rain.", session_id="s", turn_id="t", citations=cited))
    store.close()

    question, answer = Store(str(path)).messages("s")
    assert (question.text, question.citations) == ("Hello?", ())
    assert (answer.text, answer.citations) == ("Rain.", cited)


@pytest.mark.parametrize(
    ("start", "end"),
    [(None, 4), (3, 2), (0, 99), (-1, 4), ("0", "4")],
    ids=["no-start", "reversed", "past-the-end", "negative", "strings"],
)
def test_an_annotation_whose_span_does_not_fit_cites_the_whole_text(start, end):
    """Checks: a ``url_citation`` whose span is missing, reversed, past the text's
    end, negative or not integers cites the whole text (rather than a slice that
    does not exist, or an exception that would leave the step without an end)."""
    note = {"type": "url_citation", "url_citation": {"url": MET, "start_index": start}}
    note["url_citation"]["end_index"] = end
    assert openai_citations([note], "Rain.") == [Citation(MET, "", "", 0, 5)]


def test_annotations_that_are_not_web_sources_are_left_out():
    """Checks: an annotation of another type, or a ``url_citation`` without a URL, is
    no web source and is left out; the others keep their order."""
    notes = [
        {"type": "file_citation", "file_citation": {"file_id": "file_1"}},
        {"type": "url_citation", "url_citation": {"url": "", "start_index": 0, "end_index": 1}},
        {"type": "url_citation", "url_citation": {"url": MET, "start_index": 0, "end_index": 4}},
        {"type": "url_citation"},
    ]
    assert openai_citations(notes, "Rain.") == [Citation(MET, "", "", 0, 4)]
    assert openai_citations(None, "Rain.") == []


def test_an_anthropic_document_citation_is_no_web_source():
    """Checks: of an Anthropic text block citing a document (``char_location``, no
    URL) and a web result, only the web result is a :class:`Citation`, spanning its
    block in the joined text."""
    content = anthropic.types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "text", "text": "Hi. "},
                {
                    "type": "text",
                    "text": "Rain.",
                    "citations": [
                        {
                            "type": "char_location",
                            "cited_text": "rain",
                            "document_index": 0,
                            "document_title": "Forecast",
                            "start_char_index": 0,
                            "end_char_index": 4,
                        },
                        {
                            "type": "web_search_result_location",
                            "cited_text": "rain",
                            "encrypted_index": "x",
                            "title": "Met: Leeds",
                            "url": MET,
                        },
                    ],
                },
            ],
        }
    ).content
    assert anthropic_citations(content) == [Citation(MET, "Met: Leeds", "rain", 4, 9)]
