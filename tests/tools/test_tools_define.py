"""define_tool: names, schemas, execute shapes, hooks; Tool.to_spec; ToolContext."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from agentfootprint.errors import AgentFootprintError
from agentfootprint.identity import Identity
from agentfootprint.tools import (
    InvalidToolDefinitionError,
    PauseOutsideAgentError,
    Tool,
    ToolContext,
    ask_human,
    define_tool,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
}


def lookup(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"id": args["order_id"], "call": ctx.tool_call_id}


def make(**overrides: Any) -> Tool:
    kwargs: dict[str, Any] = {
        "name": "lookup_order",
        "description": "Look up an order.",
        "input_schema": SCHEMA,
        "execute": lookup,
    }
    kwargs.update(overrides)
    return define_tool(**kwargs)


def test_define_tool_builds_a_tool() -> None:
    t = make()
    assert isinstance(t, Tool)
    assert t.name == "lookup_order"
    assert t.description == "Look up an order."
    assert t.input_schema == SCHEMA
    assert t.check_in is False and t.permission is None and t.pauses is False


def test_to_spec() -> None:
    assert make().to_spec() == {"name": "lookup_order", "description": "Look up an order.", "input_schema": SCHEMA}


def test_schema_is_copied_at_definition() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    t = make(input_schema=schema)
    schema["properties"]["a"]["type"] = "integer"
    assert t.input_schema["properties"]["a"]["type"] == "string"


def test_tool_is_frozen_and_hashable_by_identity() -> None:
    t = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "other"  # type: ignore[misc]
    assert len({t, make()}) == 2


@pytest.mark.parametrize("name", ["a", "_x", "lookup.order", "a-b_c.d", "A" * 64])
def test_valid_names(name: str) -> None:
    assert make(name=name).name == name


@pytest.mark.parametrize(
    "name", ["", "1abc", "has space", "a/b", "A" * 65, "émoji", "-lead", ".dot", "new\nline", "tab\t"]
)
def test_invalid_names_are_refused_naming_the_problem(name: str) -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        make(name=name)
    assert "invalid tool name" in str(info.value)
    assert info.value.code == "ERR_INVALID_TOOL_DEFINITION"
    assert isinstance(info.value, AgentFootprintError)


def test_non_str_name_refused() -> None:
    with pytest.raises(InvalidToolDefinitionError, match="must be a str"):
        make(name=42)


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ("not a dict", "must be a JSON Schema dict"),
        ({"type": "string"}, '"type": "object"'),
        ({}, '"type": "object"'),
        ({"type": "object", "properties": []}, "properties must be a dict"),
        ({"type": "object", "required": "a"}, "required must be a list"),
    ],
)
def test_bad_schemas_are_refused(schema: Any, words: str) -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        make(input_schema=schema)
    assert words in str(info.value)
    assert "lookup_order" in str(info.value)


def test_bad_description_execute_and_hooks_are_refused() -> None:
    with pytest.raises(InvalidToolDefinitionError, match="description"):
        make(description=None)
    with pytest.raises(InvalidToolDefinitionError, match="execute must be callable"):
        make(execute="nope")
    with pytest.raises(InvalidToolDefinitionError, match="check_in"):
        make(check_in="always")
    with pytest.raises(InvalidToolDefinitionError, match="permission"):
        make(permission=3)
    with pytest.raises(InvalidToolDefinitionError, match="accept"):
        make(execute=lambda: None)


def test_execute_with_only_args_is_adapted() -> None:
    t = make(execute=lambda args: args["order_id"].upper())
    assert t.execute({"order_id": "a"}, ToolContext()) == "A"


def test_execute_with_varargs_gets_both() -> None:
    seen: list[Any] = []
    t = make(execute=lambda *a: seen.extend(a))
    ctx = ToolContext(tool_call_id="c")
    t.execute({"order_id": "x"}, ctx)
    assert seen == [{"order_id": "x"}, ctx]


def test_calling_a_defined_tool_calls_execute() -> None:
    t = make()
    assert t({"order_id": "A-1"}, ToolContext(tool_call_id="t1")) == {"id": "A-1", "call": "t1"}


def test_needs_check_in() -> None:
    assert make().needs_check_in({}) is False
    assert make(check_in=True).needs_check_in({}) is True
    big = make(check_in=lambda a: a.get("amount", 0) > 100)
    assert big.needs_check_in({"amount": 500}) is True
    assert big.needs_check_in({"amount": 5}) is False

    def boom(args: dict[str, Any]) -> bool:
        raise RuntimeError("x")

    assert make(check_in=boom).needs_check_in({}) is True  # fail closed


def test_tool_context_defaults_and_cancel() -> None:
    ctx = ToolContext()
    assert ctx.tool_call_id == "" and ctx.identity is None and ctx.iteration == 0
    assert ctx.is_cancelled is False
    event = asyncio.Event()
    ctx2 = ToolContext(
        tool_call_id="c", run_id="r", identity=Identity(tenant="t"), iteration=2, tool_name="x", cancelled=event
    )
    assert not ctx2.is_cancelled
    event.set()
    assert ctx2.is_cancelled
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx2.run_id = "other"  # type: ignore[misc]


def test_ask_human_is_a_pausing_tool() -> None:
    assert ask_human.name == "ask_human"
    assert ask_human.pauses is True
    assert ask_human.input_schema["required"] == ["question"]
    with pytest.raises(PauseOutsideAgentError):
        ask_human.execute({"question": "?"}, ToolContext())
