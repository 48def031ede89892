"""What a message is made of: text, tool calls, thinking, tool results, token usage.

The parts a model can say (:data:`Part`: :class:`Text` with its :class:`Citation`
list, :class:`ToolCall`, :class:`Thinking`, and :class:`ServerToolCall` — a tool the
provider runs itself, such as a web search) and the parts a request may also hold
(:class:`ToolResult`, :class:`Other`), plus :class:`Usage`. They are the leaves of
the model: replies, faults and requests are built from them, and they import
nothing else of the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, NonNegativeInt, model_validator

__all__ = [
    "Citation",
    "CodeOutput",
    "Frozen",
    "MessagePart",
    "Other",
    "Part",
    "SearchResult",
    "ServerToolCall",
    "ServerToolName",
    "StopReason",
    "Text",
    "Thinking",
    "ToolCall",
    "ToolResult",
    "Usage",
]


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]
"""Why a reply ended, in neutral terms; each codec maps it to its provider's words
(``end_turn`` → ``stop`` / ``completed``, ``tool_use`` → ``tool_calls``, ...)."""


class Frozen(BaseModel):
    """The base of every model type: immutable, and a typo in a field name is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(Frozen):
    """Token counts reported by the provider.

    The cache fields exist on Anthropic (``cache_creation_input_tokens``,
    ``cache_read_input_tokens``) and OpenAI (cached prompt tokens, reasoning
    tokens); a codec renders the ones its provider has and ignores the rest.
    ``input_tokens`` is the whole prompt (OpenAI's ``prompt_tokens``): cached tokens
    are counted inside it and reported again in ``cache_read_input_tokens``.
    """

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    cache_creation_input_tokens: NonNegativeInt | None = None
    cache_read_input_tokens: NonNegativeInt | None = None
    reasoning_tokens: NonNegativeInt | None = None


class Citation(Frozen):
    """A web source a text part cites: Anthropic's ``web_search_result_location``
    citations, OpenAI's ``url_citation`` annotations.

    ``cited_text`` is the passage quoted from the source (Anthropic sends it;
    OpenAI does not). ``start`` / ``end`` delimit the characters of the text part
    the source supports (OpenAI's ``start_index`` / ``end_index``); left out, the
    citation supports the whole part. Anthropic cites whole text blocks, so it sends
    no span: to cite one sentence there, make it a text part of its own, as the API
    does.
    """

    url: str = Field(min_length=1)
    title: str = ""
    cited_text: str = ""
    start: NonNegativeInt | None = None
    end: NonNegativeInt | None = None

    def span(self, text: str) -> tuple[int, int]:
        """``(start, end)`` in ``text``: the whole text when the citation names no span."""
        if self.start is None or self.end is None:
            return 0, len(text)
        return self.start, self.end


class Text(Frozen):
    """Assistant (or user) text, with the web sources it cites (if any)."""

    kind: Literal["text"] = "text"
    text: str
    # Left out of dumps when empty, so logs and snapshots of plain text stay as they were.
    citations: list[Citation] = Field(default_factory=list, exclude_if=lambda v: not v)

    @model_validator(mode="after")
    def _spans_fit(self) -> Text:
        for i, citation in enumerate(self.citations):
            if (citation.start is None) != (citation.end is None):
                raise ValueError(f"citations[{i}]: give both start and end, or neither")
            start, end = citation.span(self.text)
            if not start <= end <= len(self.text):
                raise ValueError(
                    f"citations[{i}]: span {start}..{end} is not within the text "
                    f"({len(self.text)} characters)"
                )
        return self


class ToolCall(Frozen):
    """A call the model asks the agent to make. ``id`` is generated when omitted."""

    kind: Literal["tool_call"] = "tool_call"
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class Thinking(Frozen):
    """Reasoning the model exposes (Anthropic thinking, OpenAI reasoning summaries)."""

    kind: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None


ServerToolName = Literal["web_search", "code_execution"]
"""The provider-side tools a :class:`ServerToolCall` can script."""


def _as_result(value: Any) -> Any:
    return {"url": value} if isinstance(value, str) else value


class SearchResult(Frozen):
    """One page a provider-side web search found (a plain URL string is accepted too)."""

    url: str = Field(min_length=1)
    title: str = ""
    page_age: str | None = None


class CodeOutput(Frozen):
    """What a provider-side code execution printed, and its exit status."""

    stdout: str = ""
    stderr: str = ""
    return_code: int = 0


_ARG = {"web_search": "query", "code_execution": "code"}


class ServerToolCall(Frozen):
    """A tool the provider runs itself, inside one model call: the agent runs nothing.

    Anthropic streams it as a ``server_tool_use`` block followed by its result block
    (``web_search_tool_result``, ``code_execution_tool_result``); OpenAI Responses as
    a ``web_search_call`` item. Build one with :meth:`web_search` or
    :meth:`code_execution`. ``error`` is the provider's error code when the tool
    failed (``"max_uses_exceeded"``, ``"unavailable"``...): a failed tool has no
    result. ``id`` is generated when omitted.
    """

    kind: Literal["server_tool_call"] = "server_tool_call"
    name: ServerToolName
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    results: list[Annotated[SearchResult, BeforeValidator(_as_result)]] = Field(
        default_factory=list, exclude_if=lambda v: not v
    )
    output: CodeOutput | None = None
    error: str | None = None

    @classmethod
    def web_search(
        cls,
        query: str,
        results: Sequence[SearchResult | str] = (),
        *,
        id: str | None = None,
        error: str | None = None,
    ) -> ServerToolCall:
        """A web search for ``query`` that found ``results`` (pages or URLs)."""
        return cls(
            name="web_search", args={"query": query}, results=list(results), id=id, error=error
        )

    @classmethod
    def code_execution(
        cls,
        code: str,
        *,
        stdout: str = "",
        stderr: str = "",
        return_code: int = 0,
        id: str | None = None,
        error: str | None = None,
    ) -> ServerToolCall:
        """Code the provider ran in its sandbox, and what it printed."""
        output = (
            None if error else CodeOutput(stdout=stdout, stderr=stderr, return_code=return_code)
        )
        return cls(name="code_execution", args={"code": code}, output=output, id=id, error=error)

    @property
    def query(self) -> str:
        """The search query or the code run: the tool's main argument."""
        return str(self.args.get(_ARG[self.name], ""))

    @staticmethod
    def check_ids(parts: Sequence[Any]) -> None:
        """Refuse parts where a provider-side tool call's id is used by another part:
        its result block names the call by id, so a shared id would pair it with the
        wrong result (a provider never reuses one)."""
        for i, part in enumerate(parts):
            if not isinstance(part, ServerToolCall) or part.id is None:
                continue
            for j, other in enumerate(parts):
                if j != i and getattr(other, "id", None) == part.id:
                    raise ValueError(
                        f"parts[{i}] and parts[{j}] share the id {part.id!r}: give each "
                        "provider-side tool call an id of its own (or none, to have one made)"
                    )

    @model_validator(mode="after")
    def _fits_its_tool(self) -> ServerToolCall:
        key = _ARG[self.name]
        if not isinstance(self.args.get(key), str):
            raise ValueError(f"a {self.name} call needs a string args[{key!r}]")
        if self.name == "web_search" and self.output is not None:
            raise ValueError("a web_search has results, not an output")
        if self.name == "code_execution" and self.results:
            raise ValueError("a code_execution has an output, not results")
        if self.error is not None and (self.results or self.output is not None):
            raise ValueError("a failed server tool (error=...) has no results or output")
        return self


class ToolResult(Frozen):
    """The agent's answer to a :class:`ToolCall`, as found in a request."""

    kind: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: str = ""
    is_error: bool = False


class Other(Frozen):
    """A request part this model does not interpret (images, documents, ...), kept raw."""

    kind: Literal["other"] = "other"
    type: str
    data: dict[str, Any] = Field(default_factory=dict)


Part = Annotated[Text | ToolCall | Thinking | ServerToolCall, Field(discriminator="kind")]
"""A part of a reply: what a model can say."""

MessagePart = Annotated[
    Text | ToolCall | Thinking | ServerToolCall | ToolResult | Other, Field(discriminator="kind")
]
"""A part of a request's message: what a model can say, plus tool results and the rest."""
