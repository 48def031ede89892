"""A one-step agent on the real ``openai`` SDK (Chat Completions), for the parity tests."""

from __future__ import annotations

import time
import uuid

import openai

from pytest_agentreplay.neutral import Usage
from pytest_agentreplay.runlog import RunLog


async def chat_answer(question: str, *, stream: bool, include_usage: bool = True) -> RunLog:
    """A one-step agent on the real ``openai`` SDK (Chat Completions). Streaming without
    ``stream_options={"include_usage": True}`` gets no usage: a classic parity bug."""
    log = RunLog()
    client = openai.AsyncOpenAI(api_key="test", max_retries=0)
    messages = [{"role": "user", "content": question}]
    step_id = uuid.uuid4().hex
    log.step_started(step_id, step_index=0, turn_id="turn-1", at=time.time())
    text, usage = "", None
    if stream:
        extra = {"stream_options": {"include_usage": True}} if include_usage else {}
        chunks = await client.chat.completions.create(
            model="gpt-4o", messages=messages, stream=True, **extra
        )  # type: ignore[call-overload]
        async for chunk in chunks:
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
                log.delta(chunk.choices[0].delta.content, step_id=step_id)
            if chunk.usage is not None:
                usage = chunk.usage
    else:
        completion = await client.chat.completions.create(model="gpt-4o", messages=messages)  # type: ignore[arg-type]
        text, usage = completion.choices[0].message.content or "", completion.usage
    tokens = (
        None
        if usage is None
        else Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
    )
    log.step_completed(step_id, usage=tokens, text=text, at=time.time())
    log.message("assistant", text, step_id=step_id, turn_id="turn-1")
    await client.close()
    return log
