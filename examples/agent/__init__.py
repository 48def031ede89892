"""A small reference agent runtime, built to be tested with pytest-agentreplay.

It is real code on the real SDKs — ``anthropic`` and ``openai``, chosen per session —
and small enough to read in one sitting::

    agent = Agent(SessionConfig(provider="anthropic", model="claude-sonnet-4-6"))
    result = await agent.run_turn("What is the weather in Leeds?")

* :mod:`.runtime` — the turn loop: model steps, tool calls, retries in fresh steps,
  interrupts, error turns, resume after a crash;
* :mod:`.turns` — the state of a turn and its steps while they run, and how a
  turn ended;
* :mod:`.step_events` — the events each step emits (deltas, tool begin/end, the
  step's end);
* :mod:`.providers` — the two SDK clients behind one shape, streaming or not;
* :mod:`.citations` — the web sources a reply cites, from either provider;
* :mod:`.diagnostics` — what a step says of itself: its prompt cache (and the
  context epochs of the session's requests), the text parts of its answer;
* :mod:`.answers` — what counts as an answer (the silent failures);
* :mod:`.events` — what the agent reports while it works;
* :mod:`.errors` — failures classified for the user (kind, retryable, status,
  retry-after);
* :mod:`.store` — sqlite: the saved messages, the turns and the write-ahead log;
* :mod:`.testing` — feeds a pytest-agentreplay ``RunLog`` from the events and the store.
"""

from .config import Provider, SessionConfig, Tool
from .errors import AgentError, ErrorKind
from .events import (
    Citation,
    ErrorEvent,
    Event,
    FinalMessage,
    MessageDelta,
    ModelStepCompleted,
    ModelStepStarted,
    PromptCache,
    ServerToolBegin,
    ServerToolEnd,
    StepContent,
    StepDiagnostics,
    ToolBegin,
    ToolEnd,
    TurnAborted,
    TurnComplete,
    Usage,
)
from .runtime import Agent
from .store import Message, Store, ToolUse, WalRecord
from .turns import TurnResult

__all__ = [
    "Agent",
    "AgentError",
    "Citation",
    "ErrorEvent",
    "ErrorKind",
    "Event",
    "FinalMessage",
    "Message",
    "MessageDelta",
    "ModelStepCompleted",
    "ModelStepStarted",
    "PromptCache",
    "Provider",
    "ServerToolBegin",
    "ServerToolEnd",
    "SessionConfig",
    "StepContent",
    "StepDiagnostics",
    "Store",
    "Tool",
    "ToolBegin",
    "ToolEnd",
    "ToolUse",
    "TurnAborted",
    "TurnComplete",
    "TurnResult",
    "Usage",
    "WalRecord",
]
