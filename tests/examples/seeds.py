"""The seed tests the example agent's suite reproduces, and the bug each example catches.

The plugin was designed from 30 scenario tests of three agent runtimes (the *seed
tests*): a Rust runtime's model-step lifecycle tests (6), a web UI's streaming tests
(21) and a durable runtime's streaming proofs (3). They are numbered 1 to 30 in that
order, each file's tests in the order they stand in it. ``examples/tests/`` reproduces
each of them against the example agent (``examples/agent/``), assertion by
assertion.

:data:`BUGS` says, for each seed test, which example tests reproduce it, a bug that
breaks what the seed test checks, planted in the agent as an edit of its source, and
what the examples say when they catch it. ``test_seed_bugs.py`` plants each bug and
runs its examples, which must all fail saying so (and pass without it); the docs
render the same rows as a table (docs/how-to/reference-agent.md, through
``docs/_hooks/seed_bugs.py``). This module is that one source: plain data, no import
of the agent or of pytest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Seed:
    """One seed test: its number, the runtime it comes from, and its name there."""

    number: int
    origin: str
    name: str


@dataclass(frozen=True)
class Edit:
    """A change to one function of the example agent: ``old``, a piece of its source that
    occurs there exactly once, becomes ``new`` (whose further lines take the indentation
    of the line ``old`` starts on). ``where`` names the function as
    ``<module of agent>.<qualified name>``, e.g. ``runtime.Agent._partial``; a property
    is edited through its getter."""

    where: str
    old: str
    new: str


@dataclass(frozen=True)
class PlantedBug:
    """A bug that breaks what seed test ``seed`` checks, and the examples that catch it.

    ``examples`` are node ids under ``examples/tests/`` (a test with all its
    parameters, or one parametrization); each must fail with the bug planted and pass
    without it. ``caught_by`` are the words of the failure: each failing example shows
    one of them on a line of its traceback that ran (``>``) or in its error (``E``),
    and each is shown by one example at least (a fake model and a cassette can catch
    the same bug in their own words)."""

    seed: int
    examples: tuple[str, ...]
    bug: str
    edits: tuple[Edit, ...]
    caught_by: tuple[str, ...]


RUST = "a Rust runtime's model-step lifecycle tests"
WEB_UI = "a web UI's streaming tests"
DURABLE = "a durable runtime's streaming proofs"

SEEDS: tuple[Seed, ...] = tuple(
    Seed(number, origin, name)
    for number, (origin, name) in enumerate(
        [
            (RUST, "model_step_lifecycle_preserves_correlation_usage_and_content"),
            (RUST, "interrupted_stream_retries_in_a_fresh_model_step"),
            (RUST, "interrupted_stream_exhaustion_surfaces_only_the_safe_provider_error"),
            (RUST, "interrupt_during_stream_retry_backoff_cancels_the_retry"),
            (RUST, "failed_model_step_retains_provider_retry_metadata"),
            (RUST, "interrupted_model_request_emits_one_terminal_step"),
            (WEB_UI, "test_auth_401_without_delivery_persists_error_turn"),
            (WEB_UI, "test_auth_401_after_partial_preserves_partial_then_error"),
            (WEB_UI, "test_auth_401_seeded_multi_turn_partial_persists_error_turn"),
            (WEB_UI, "test_auth_401_classification_receives_stringified_probe_text"),
            (WEB_UI, "test_auth_401_seeded_replayed_assistant_does_not_satisfy_current_turn"),
            (WEB_UI, "test_captured_terminal_http_400_beats_structured_final_answer"),
            (WEB_UI, "test_auth_retry_success_does_not_append_error_turn"),
            (WEB_UI, "test_auth_retry_success_observes_replacement_agent_runtime"),
            (WEB_UI, "test_auth_exception_retry_observes_replacement_agent"),
            (WEB_UI, "test_auth_exception_retry_structured_failure_still_emits_error"),
            (WEB_UI, "test_success_repeated_assistant_text_stays_successful_current_turn"),
            (WEB_UI, "test_success_repeated_assistant_text_ignores_empty_error_field"),
            (WEB_UI, "test_non_auth_silent_failure_still_uses_no_response"),
            (WEB_UI, "test_live_settlement_empty_hint_does_not_append_empty_emphasis"),
            (WEB_UI, "test_completed_assistant_answer_with_stale_partial_flag_settles_done"),
            (WEB_UI, "test_stale_partial_with_unfinished_tool_call_still_reports_no_response"),
            (WEB_UI, "test_stale_partial_repeated_prompt_replay_still_reports_no_response"),
            (WEB_UI, "test_hard_failure_with_completed_answer_still_reports_no_response"),
            (WEB_UI, "test_non_auth_partial_delivery_persists_error_turn"),
            (WEB_UI, "test_non_auth_seeded_multi_turn_partial_persists_error_turn"),
            (WEB_UI, "test_non_auth_seeded_replayed_assistant_does_not_satisfy_current_turn"),
            (DURABLE, "both_paths_record_a_byte_identical_log"),
            (DURABLE, "replay_of_a_streamed_run_makes_no_live_call"),
            (DURABLE, "mid_stream_error_leaves_a_dangling_intent_that_reissues_on_resume"),
        ],
        start=1,
    )
)

# The examples, by the file they are in.
ONE_STEP = "test_one_step_turn.py::"
RETRIES = "test_retries.py::"
INTERRUPTS = "test_interrupts.py::"
ERROR_TURNS = "test_error_turns.py::"
CASES = "test_error_turn_cases.py::"
SILENT = "test_silent_failures.py::"
PARITY = "test_stream_parity.py::"
REPLAY = "test_replay.py::"
RESUME = "test_resume.py::"

# Edits used by more than one bug.
FIRST_DELTA_ONLY = Edit("runtime.Agent._partial", '"".join(step.partial)', "step.partial[0]")
FIRST_DELTA_BUG = "a failed turn saves only the first delta of the text the user saw"
ONLY_THE_PARTIAL = "('assistant', 'message', 'It') != ('assistant', 'message', 'It is"
SILENT_CHECK = "if is_silent(reply):"
# What the plugin says of a call a test did not plan: a fake model's script ran out, or
# a cassette has no recording of it.
SCRIPT_RAN_OUT = "received a model call after its script ran out"
NO_MATCH = "no recorded interaction matches"
# A turn that should have failed completed (with the partial text shown, "It is").
COMPLETED_NOT_FAILED = "At index 0 diff: 'completed' != 'failed'"
COMPLETED_WITH_THE_PARTIAL = "assert ('completed', 'It is') == ('failed', '')"
# assert_terminal_error_turn, when the text the user saw is not saved as it was shown.
NOT_KEPT = (
    "the failed step had streamed {!r} when it failed, but no message saved for the turn keeps it"
)

BUGS: tuple[PlantedBug, ...] = (
    PlantedBug(
        1,
        (ONE_STEP + "test_a_one_step_turn_reports_one_step_with_its_ids_usage_and_text",),
        "the first request of a session counts as a rewrite of the prompt cache's "
        "context: context epoch 1, provider and model named as the reasons",
        (
            Edit(
                "diagnostics.ContextEpochs.observe",
                "reasons = () if self._last is None else rewrite_reasons(self._last, key)",
                'reasons = rewrite_reasons(self._last or ContextKey("", "", None, (), ()), key)',
            ),
        ),
        ("context_epoch=1, rewrite_reasons=('provider', 'model')",),
    ),
    PlantedBug(
        1,
        (ONE_STEP + "test_a_one_step_turn_reports_one_step_with_its_ids_usage_and_text",),
        "a step's content parts are numbered from 1",
        (Edit("diagnostics.content_parts", "StepContent(0, index,", "StepContent(0, index + 1,"),),
        ("part_index=1, phase='final_answer'",),
    ),
    PlantedBug(
        1,
        (ONE_STEP + "test_a_one_step_turn_reports_one_step_with_its_ids_usage_and_text",),
        "the final message names a step of its own, not the step that answered",
        (
            Edit(
                "runtime.Agent._final",
                "FinalMessage(**step.ids(self.session_id),",
                'FinalMessage(**{**step.ids(self.session_id), "step_id": new_id()},',
            ),
        ),
        ("assert (final.session_id, final.turn_id, final.step_id) == expected[:3]",),
    ),
    PlantedBug(
        2,
        (RETRIES + "test_a_stream_cut_in_a_provider_side_search_is_retried_in_a_fresh_step",),
        "a retry goes on in the dropped try's model step (the same step id)",
        (
            Edit(
                "runtime.Agent._step_with_retries",
                "Step(turn.turn_id, new_id(), index)",
                "Step(turn.turn_id, turn.step.step_id if tries else new_id(), index)",
            ),
        ),
        ("assert first.step_id != retry.step_id",),
    ),
    PlantedBug(
        2,
        (RETRIES + "test_a_stream_cut_in_a_provider_side_search_is_retried_in_a_fresh_step",),
        "the text the dropped try had shown is saved before the retry",
        (
            Edit(
                "runtime.Agent._step_with_retries",
                "step.partial.clear()  # an abandoned try's text is never saved",
                "self.store.save(self._message(\n"
                '    turn.turn_id, "assistant", "".join(step.partial), step_id=step.step_id\n'
                "))",
            ),
        ),
        ("sent a different request body than the try it repeats", NO_MATCH),
    ),
    PlantedBug(
        3,
        (
            RETRIES
            + "test_a_stream_interrupted_every_time_fails_after_the_retry_limit_with_a_safe_error",
        ),
        "the error of a dropped stream shows the transport's own words to the user",
        (
            Edit(
                "errors._classify",
                'AgentError("provider", INTERRUPTED,',
                'AgentError("provider", str(exc) or INTERRUPTED,',
            ),
        ),
        ('!= "The model\'s response was interrupted. Please try again."',),
    ),
    PlantedBug(
        4,
        (
            INTERRUPTS
            + "test_an_interrupt_during_the_backoff_after_a_dropped_stream_cancels_the_retry",
            INTERRUPTS + "test_an_interrupt_during_the_retry_backoff_cancels_the_retry_at_once",
        ),
        "an interrupt during the wait before a retry is swallowed: the retry goes out",
        (
            Edit(
                "runtime.Agent._step_with_retries",
                "await asyncio.sleep(delay)",
                "try:\n    await asyncio.sleep(delay)\nexcept asyncio.CancelledError:\n    pass",
            ),
        ),
        (SCRIPT_RAN_OUT, NO_MATCH),
    ),
    PlantedBug(
        5,
        (RETRIES + "test_a_rate_limit_fails_the_step_with_status_retry_after_and_message",),
        "a rate limit's error drops the provider's retry-after",
        (
            Edit(
                "errors._from_status",
                '"provider", message, retryable=True, status=status, retry_after=retry_after',
                '"provider", message, retryable=True, status=status',
            ),
        ),
        ("At index 3 diff: None != '5'",),
    ),
    PlantedBug(
        6,
        (
            INTERRUPTS
            + "test_an_interrupt_while_the_model_request_is_blocked_ends_its_step_once_as_interrupted",
        ),
        "an interrupted step ends twice: the turn's abort ends its running step again",
        (
            Edit(
                "runtime.Agent._abort",
                'result = self._end_turn(turn, "aborted", *self._partial(turn))',
                'self._end_step(turn.step, "interrupted")\n'
                'result = self._end_turn(turn, "aborted", *self._partial(turn))',
            ),
        ),
        ("ValueError: too many values to unpack (expected 1)",),
    ),
    PlantedBug(
        7,
        (
            ERROR_TURNS
            + "test_refused_credentials_with_nothing_delivered_end_the_turn_in_an_auth_error_turn",
        ),
        "a failed turn saves no error turn",
        (Edit("runtime.Agent._fail", "*self._partial(turn), failure,", "*self._partial(turn),"),),
        ("Right contains one more item: ('assistant', 'error', 'The model provider rejected",),
    ),
    PlantedBug(
        8,
        (
            ERROR_TURNS
            + "test_refused_credentials_after_partial_text_keep_the_text_before_the_error_turn",
        ),
        FIRST_DELTA_BUG,
        (FIRST_DELTA_ONLY,),
        (ONLY_THE_PARTIAL,),
    ),
    PlantedBug(
        9,
        (CASES + "test_an_earlier_turn_then_partial_text_then_refused_credentials",),
        FIRST_DELTA_BUG,
        (FIRST_DELTA_ONLY,),
        (NOT_KEPT.format("Tomorrow it"),),
    ),
    PlantedBug(
        9,
        (CASES + "test_an_earlier_turn_then_partial_text_then_refused_credentials",),
        "the text kept of a failed turn is all the session streamed, earlier turns too",
        (
            Edit(
                "runtime.Agent._partial",
                '"".join(step.partial)',
                '"".join(e.text for e in self.events if type(e).__name__ == "MessageDelta")',
            ),
        ),
        ("'It is sunny in Leeds.Tomorrow it') != ('assistant', 'message', 'Tomorrow it')",),
    ),
    PlantedBug(
        10,
        (CASES + "test_the_error_keeps_the_provider_s_error_body_as_text_and_its_request_id",),
        "the error keeps the exception's words, not the provider's error body",
        (Edit("errors._provider_text", 'body = getattr(exc, "body", None)', "body = None"),),
        ("assert json.loads(error.provider_text) == SENT_401[provider]",),
    ),
    PlantedBug(
        11,
        (
            ERROR_TURNS
            + "test_a_reply_repeating_the_previous_answer_does_not_answer_a_turn_that_failed",
        ),
        "a failed turn whose text repeats an earlier answer completes with it",
        (
            Edit(
                "runtime.Agent._fail",
                "step_id = turn.step.step_id if turn.step else None",
                "shown = ''.join(turn.step.partial) if turn.step else ''\n"
                "earlier = [m.text for m in self.store.messages(self.session_id)\n"
                "           if m.role == 'assistant' and m.turn_id != turn.turn_id]\n"
                "if shown and shown in earlier:\n"
                "    return self._complete(turn, ModelReply(text=shown))\n"
                "step_id = turn.step.step_id if turn.step else None",
            ),
        ),
        ("assert 'completed' == 'failed'",),
    ),
    PlantedBug(
        12,
        (
            ERROR_TURNS
            + "test_an_unknown_model_error_beats_a_structured_looking_answer_of_an_earlier_step",
        ),
        "a turn that fails after an earlier step said something completes with that text",
        (
            Edit(
                "runtime.Agent._fail",
                "step_id = turn.step.step_id if turn.step else None",
                "said = [m.text for m in self.store.messages(self.session_id)\n"
                "        if m.turn_id == turn.turn_id and m.role == 'assistant' and m.text]\n"
                "if said:\n"
                "    return self._complete(turn, ModelReply(text=said[-1]))\n"
                "step_id = turn.step.step_id if turn.step else None",
            ),
        ),
        ("assert 'completed' == 'failed'",),
    ),
    PlantedBug(
        13,
        (
            ERROR_TURNS
            + "test_refused_credentials_healed_by_a_refresh_answer_with_the_replacement_client",
        ),
        "refused credentials that a refresh healed still save an auth error turn",
        (
            Edit(
                "runtime.Agent._refresh_or_fail",
                'self._end_step(step, "retrying", error=error)',
                "self.store.save(self._message(\n"
                '    step.turn_id, "assistant", error.message, kind="error", step_id=step.step_id\n'
                "))\n"
                'self._end_step(step, "retrying", error=error)',
            ),
        ),
        (
            "('assistant', 'error', 'The model provider rejected the credentials.') != "
            "('assistant', 'message', 'It is sunny in Leeds.')",
        ),
    ),
    PlantedBug(
        14,
        (
            ERROR_TURNS
            + "test_refused_credentials_healed_by_a_refresh_answer_with_the_replacement_client",
        ),
        "the turn names the client it began with, not the one the refresh replaced it with",
        (
            Edit(
                "runtime.Agent.provider",
                "return self.client.provider",
                'return self.__dict__.setdefault("_first_provider", self.client.provider)',
            ),
            Edit(
                "runtime.Agent.model",
                "return self.client.model",
                'return self.__dict__.setdefault("_first_model", self.client.model)',
            ),
        ),
        ("assert (result.provider, result.model) == (replacement, model)",),
    ),
    PlantedBug(
        15,
        (
            CASES
            + "test_credentials_refused_mid_stream_are_healed_and_the_replacement_client_answers",
        ),
        "only an HTTP 401 is healed: credentials refused mid-stream fail the turn",
        (
            Edit(
                "runtime.Agent._step_with_retries",
                'heal = error.kind == "auth" and',
                'heal = error.kind == "auth" and error.status == 401 and',
            ),
        ),
        ('assert (result.outcome, result.text) == ("completed", "Recovered answer.")',),
    ),
    PlantedBug(
        16,
        (
            CASES
            + "test_refreshed_credentials_refused_again_after_partial_text_still_end_in_an_error_turn",
        ),
        "the retry after a refresh is trusted: its failure ends the turn as answered, "
        "with the text shown",
        (
            Edit(
                "runtime.Agent._step_with_retries",
                "raise",
                "if refreshed:\n"
                '    return step, ModelReply(text="".join(step.partial), stop_reason="end_turn")\n'
                "raise",
            ),
        ),
        (COMPLETED_WITH_THE_PARTIAL,),
    ),
    PlantedBug(
        17,
        (SILENT + "test_a_new_message_repeating_the_history_is_an_answer",),
        "a new answer that repeats a message of the history is rejected as no answer",
        (
            Edit(
                "runtime.Agent._step_done",
                SILENT_CHECK,
                "history = {m.text for m in self.store.messages(self.session_id)}\n"
                "if is_silent(reply) or reply.text in history:",
            ),
        ),
        ('assert (first.text, result.outcome, result.text) == (ANSWER, "completed", echo)',),
    ),
    PlantedBug(
        18,
        (SILENT + "test_an_empty_error_field_an_earlier_turn_and_a_repeated_answer_still_answer",),
        "a stream event with an error field, even null or empty, makes the reply unfinished",
        (
            Edit(
                "providers.AnthropicClient.call",
                "async for event in events:",
                "errored = False\n"
                "async for event in events:\n"
                '    errored = errored or "error" in (getattr(event, "model_extra", None) or {})',
            ),
            Edit(
                "providers.AnthropicClient.call",
                "return _anthropic_reply(await events.get_final_message())",
                "reply = _anthropic_reply(await events.get_final_message())\n"
                "reply.stop_reason = None if errored else reply.stop_reason\n"
                "return reply",
            ),
            Edit(
                "providers._openai_stream_reply",
                "reply.stop_reason = choice.finish_reason or reply.stop_reason",
                'errored = "error" in (chunk.model_extra or {})\n'
                "reply.stop_reason = None if errored else choice.finish_reason or reply.stop_reason",
            ),
        ),
        (
            'assert (first.outcome, result.outcome, result.text) == ("completed", "completed", ANSWER)',
        ),
    ),
    PlantedBug(
        19,
        (SILENT + "test_an_empty_completion_is_no_response_saved_as_an_error_turn",),
        "an empty completion is taken for an answer",
        (
            Edit(
                "answers.is_silent",
                "return reply.stop_reason is None or not (reply.text.strip() or reply.tool_calls)",
                "return reply.stop_reason is None",
            ),
        ),
        (COMPLETED_NOT_FAILED,),
    ),
    PlantedBug(
        20,
        (CASES + "test_a_generic_failure_is_saved_verbatim_with_nothing_added",),
        "the error turn adds an empty hint, in bold, after the provider's words",
        (
            Edit(
                "runtime.Agent._fail",
                '"assistant", error.message, kind="error"',
                '"assistant", error.message + "\\n\\n****", kind="error"',
            ),
        ),
        (r"'synthetic hard failure\n\n****' != 'synthetic hard failure'",),
    ),
    PlantedBug(
        21,
        (
            CASES
            + "test_a_complete_answer_whose_stream_lacks_only_its_final_event_answers[fake-anthropic]",
            CASES
            + "test_a_complete_answer_whose_stream_lacks_only_its_final_event_answers[cassette-anthropic]",
        ),
        "the Anthropic client rejects an answer whose stream did not end with message_stop, "
        "though its stop reason came",
        (
            Edit(
                "providers.AnthropicClient.call",
                "return _anthropic_reply(await events.get_final_message())",
                "reply = _anthropic_reply(await events.get_final_message())\n"
                'if event.type != "message_stop":\n'
                "    reply.stop_reason = None\n"
                "return reply",
            ),
        ),
        ('assert (result.outcome, result.text) == ("completed", ANSWER)',),
    ),
    PlantedBug(
        22,
        (SILENT + "test_a_stream_that_ends_inside_a_tool_call_is_no_response",),
        "a stream cut inside a tool call is reported as an interrupted response, not as no answer",
        (
            Edit(
                "runtime.Agent._step_done",
                "error = no_response()",
                "error = no_response()\n"
                "if reply.tool_calls:\n"
                '    error = AgentError("provider", "The response was interrupted.", retryable=True)',
            ),
        ),
        ("assert 'provider' == 'no_response'",),
    ),
    PlantedBug(
        23,
        (
            CASES
            + "test_a_stream_cut_short_after_the_same_question_was_asked_earlier_is_no_response",
        ),
        "a reply cut short is accepted when the same question was asked before",
        (
            Edit(
                "runtime.Agent._step_done",
                SILENT_CHECK,
                'asked = [m.text for m in self.store.messages(self.session_id) if m.role == "user"]\n'
                "if is_silent(reply) and asked.count(asked[-1]) == 1:",
            ),
        ),
        (COMPLETED_WITH_THE_PARTIAL,),
    ),
    PlantedBug(
        24,
        (CASES + "test_a_complete_answer_followed_by_a_failure_is_no_response",),
        "a reply with all its text but no stop reason is taken for an answer",
        (
            Edit(
                "answers.is_silent",
                "return reply.stop_reason is None or not",
                "return not",
            ),
        ),
        (COMPLETED_NOT_FAILED,),
    ),
    PlantedBug(
        25,
        (SILENT + "test_a_stream_that_ends_before_the_answer_is_done_is_no_response",),
        FIRST_DELTA_BUG,
        (FIRST_DELTA_ONLY,),
        (NOT_KEPT.format("It is sunny"),),
    ),
    PlantedBug(
        25,
        (SILENT + "test_a_stream_that_ends_before_the_answer_is_done_is_no_response",),
        "the error turn is saved before the text the user saw",
        (
            Edit(
                "runtime.Agent._fail",
                "*self._partial(turn), failure,",
                "failure, *self._partial(turn),",
            ),
        ),
        ('assert saved(agent, result.turn_id)[-1] == ("assistant", "error", NO_RESPONSE)',),
    ),
    PlantedBug(
        26,
        (
            CASES
            + "test_an_earlier_turn_then_a_stream_ending_without_its_stop_reason_is_no_response",
        ),
        FIRST_DELTA_BUG,
        (FIRST_DELTA_ONLY,),
        (NOT_KEPT.format("Tomorrow it"),),
    ),
    PlantedBug(
        26,
        (
            CASES
            + "test_an_earlier_turn_then_a_stream_ending_without_its_stop_reason_is_no_response",
        ),
        "a reply rejected as no answer drops the text the user saw",
        (Edit("runtime.Agent._step_done", SILENT_CHECK, "step.partial.clear()\n" + SILENT_CHECK),),
        (NOT_KEPT.format("Tomorrow it"),),
    ),
    PlantedBug(
        27,
        (CASES + "test_an_earlier_answer_replayed_by_a_reply_that_never_finishes_is_no_response",),
        "a reply that repeats an earlier answer word for word is accepted though it never finished",
        (
            Edit(
                "runtime.Agent._step_done",
                SILENT_CHECK,
                "answers = [m.text for m in self.store.messages(self.session_id)\n"
                '           if m.role == "assistant"]\n'
                "if is_silent(reply) and reply.text not in answers:",
            ),
        ),
        (COMPLETED_NOT_FAILED,),
    ),
    PlantedBug(
        28,
        (PARITY + "test_streaming_and_json_paths_record_identical_logs_for_the_same_response",),
        "the write-ahead log's completion says whether the reply was streamed",
        (
            Edit(
                "runtime.Agent._step_done",
                'self._wal("completion", step, reply.as_json())',
                'self._wal("completion", step, {**reply.as_json(), "streamed": self.config.stream})',
            ),
        ),
        ("the WAL differs between the streaming and JSON paths",),
    ),
    PlantedBug(
        28,
        (PARITY + "test_streaming_and_json_paths_record_identical_logs_for_the_same_response",),
        "a streamed step reports no usage",
        (
            Edit(
                "runtime.Agent._step_done",
                'self._end_step(step, "completed", usage=reply.usage,',
                'self._end_step(step, "completed", usage=None if self.config.stream else reply.usage,',
            ),
        ),
        ("logged different runs for the same response",),
    ),
    PlantedBug(
        29,
        (REPLAY + "test_resuming_from_a_completed_call_replays_it_without_a_model_call",),
        "resume asks the model again for a call whose completion is in the log",
        (
            Edit(
                "runtime.Agent._resume",
                'records[-1].entry == "intent"',
                'records[-1].entry in ("intent", "completion")',
            ),
        ),
        (SCRIPT_RAN_OUT, NO_MATCH),
    ),
    PlantedBug(
        30,
        (RESUME + "test_a_mid_stream_error_left_as_a_dangling_intent_is_reissued_once_on_resume",),
        "resume writes the dangling intent a second time before it re-issues the call",
        (
            Edit(
                "runtime.Agent._resume",
                "index = records[-1].step_index if records else 0",
                "index = records[-1].step_index if records else 0\n"
                "if records:\n"
                "    self.store.save(records[-1])",
            ),
        ),
        (
            'assert wal == [("intent", dangling.key), ("intent", dangling.key), ("completion", dangling.key)]',
        ),
    ),
)
