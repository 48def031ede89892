"""replies(tools=...): tool-call arguments valid under the tool's JSON schema.

Validity is judged by the real ``jsonschema`` validator and, for schemas pydantic
wrote, by the pydantic model itself (what pydantic-ai and openai-agents run on the
arguments before calling the tool).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import jsonschema
import pydantic
import pytest
from agents import function_tool
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai import Tool

from pytest_agentreplay import Reply
from pytest_agentreplay.strategies import replies
from pytest_agentreplay.strategies.schema import arguments_for
from tests.strategies._minimal import minimal

QUICK = settings(max_examples=60, derandomize=True, database=None, deadline=None)


class Stay(pydantic.BaseModel):
    city: Annotated[str, pydantic.Field(min_length=2, max_length=30)]
    nights: Annotated[int, pydantic.Field(ge=1, le=14)]
    budget: Annotated[float, pydantic.Field(gt=0, le=5000)] | None = None
    room: Literal["single", "double", "suite"] = "double"
    guests: Annotated[list[str], pydantic.Field(min_length=1, max_length=4)]
    code: Annotated[str, pydantic.Field(pattern=r"^[A-Z]{3}-\d{2}$")]
    step: Annotated[int, pydantic.Field(multiple_of=5, ge=0, le=100)] = 0


class Node(pydantic.BaseModel):
    """A recursive model: ``$ref`` into ``$defs`` pointing at itself."""

    label: str
    children: list[Node] = []


class Trip(pydantic.BaseModel):
    stays: Annotated[list[Stay], pydantic.Field(max_length=2)]
    pair: tuple[int, bool]
    tree: Node | None = None
    tags: Annotated[set[str], pydantic.Field(max_length=3)] = set()
    scores: dict[str, int] = {}


SCHEMAS = {
    "stay": Stay.model_json_schema(),
    "trip": Trip.model_json_schema(),
    "hand-written": {
        "type": "object",
        "properties": {
            "unit": {"enum": ["c", "f"]},
            "when": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "id": {"type": "string", "format": "uuid"},
            "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
            "limit": {"type": ["integer", "null"], "exclusiveMinimum": 0, "maximum": 9},
            "any": {},
            "fixed": {"const": {"v": 1}},
        },
        "required": ["unit", "ids", "limit", "fixed"],
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize("name", SCHEMAS)
def test_drawn_arguments_validate_against_the_schema(name: str) -> None:
    schema = SCHEMAS[name]
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )

    @QUICK
    @given(arguments_for(schema))
    def check(args: dict[str, Any]) -> None:
        validator.validate(args)
        model = {"stay": Stay, "trip": Trip}.get(name)
        if model is not None:
            model.model_validate(args)

    check()


def test_arguments_shrink_to_the_required_properties() -> None:
    assert minimal(arguments_for(SCHEMAS["stay"])) == {
        "city": "00",
        "nights": 1,
        "guests": [""],
        "code": "AAA-00",
    }


def weather(city: str, days: Annotated[int, pydantic.Field(ge=1, le=7)] = 1) -> str:
    """Weather for a city."""
    return f"sunny in {city} for {days} days"


WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city"],
}


@pytest.mark.parametrize(
    "tools",
    [
        pytest.param({"weather": WEATHER}, id="mapping"),
        pytest.param([{"name": "weather", "input_schema": WEATHER}], id="anthropic"),
        pytest.param(
            [{"type": "function", "function": {"name": "weather", "parameters": WEATHER}}],
            id="openai-chat",
        ),
        pytest.param(
            [{"type": "function", "name": "weather", "parameters": WEATHER}],
            id="openai-responses",
        ),
        pytest.param([Tool(weather)], id="pydantic-ai"),
        pytest.param([function_tool(weather)], id="openai-agents"),
    ],
)
def test_tools_in_every_form_give_calls_to_that_tool(tools: Any) -> None:
    @QUICK
    @given(replies(tools=tools, min_tool_calls=1))
    def check(reply: Reply) -> None:
        assert reply.tool_calls
        for call in reply.tool_calls:
            assert call.name == "weather"
            assert isinstance(call.args["city"], str)
            assert 1 <= call.args.get("days", 1) <= 7

    check()


def test_several_tools_are_all_drawn() -> None:
    tools = {"weather": WEATHER, "clock": {"type": "object", "properties": {}}}
    names = st.lists(replies(tools=tools, min_tool_calls=1), min_size=1)
    found = minimal(names, lambda rs: {c.name for r in rs for c in r.tool_calls} == set(tools))
    assert {c.name for r in found for c in r.tool_calls} == set(tools)


def test_without_min_tool_calls_a_reply_may_be_plain_text() -> None:
    assert minimal(replies(tools={"weather": WEATHER})).tool_calls == []


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        pytest.param(
            {"type": "object", "properties": {"a": {"not": {"type": "string"}}}},
            "tool schema at #/properties/a: keyword 'not' is not supported",
            id="unsupported-keyword",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}},
            "tool schema at #/properties/a: $ref '#/$defs/Missing' points nowhere",
            id="dangling-ref",
        ),
        pytest.param(
            {"type": "object", "properties": {}, "required": ["city"]},
            "required property 'city' has no schema",
            id="required-without-schema",
        ),
        pytest.param(
            {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.1}}},
            "multipleOf 0.1 is not supported",
            id="fractional-multiple",
        ),
        pytest.param({"type": "array"}, "must be of type 'object'", id="not-an-object"),
    ],
)
def test_schemas_it_cannot_honour_are_refused_by_name(schema: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        arguments_for(schema)


@pytest.mark.parametrize(
    ("tools", "error", "message"),
    [
        pytest.param("weather", TypeError, "got str", id="a-string"),
        pytest.param([{"name": "weather"}], TypeError, r"tools\[0\] is not a tool", id="no-schema"),
        pytest.param({}, ValueError, "tools= is empty", id="empty"),
        pytest.param({"weather": "object"}, TypeError, "schema must be a dict", id="bad-schema"),
    ],
)
def test_bad_tools_are_refused(tools: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        replies(tools=tools)


def test_min_tool_calls_needs_tool_calls() -> None:
    with pytest.raises(ValueError, match="need tool_calls=True"):
        replies(tool_calls=False, min_tool_calls=1)
    with pytest.raises(ValueError, match="min_tool_calls <= max_tool_calls"):
        replies(min_tool_calls=3, max_tool_calls=2)


def test_a_free_mapping_gets_entries_of_its_value_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"scores": {"type": "object", "additionalProperties": {"type": "integer"}}},
        "required": ["scores"],
    }
    assert minimal(arguments_for(schema), lambda a: a["scores"]) == {"scores": {"": 0}}
