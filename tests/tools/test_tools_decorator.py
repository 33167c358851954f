"""@tool: schema from the typed signature, description from the docstring, ctx injected."""

from __future__ import annotations

import asyncio
import enum
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from agentfootprint.tools import (
    InvalidToolDefinitionError,
    Tool,
    ToolArgumentsError,
    ToolContext,
    tool,
    validate_tool_args,
)
from agentfootprint.tools.execute import execute_tool


class Item(BaseModel):
    sku: str
    qty: int = Field(ge=1)


class Order(BaseModel):
    id: str
    items: list[Item]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look up an order by id.

    Returns the order status.
    """
    return {"id": order_id, "status": "shipped"}


def test_bare_decorator_builds_a_tool() -> None:
    assert isinstance(lookup_order, Tool)
    assert lookup_order.name == "lookup_order"
    assert lookup_order.description == "Look up an order by id."
    assert lookup_order.input_schema == {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
        "additionalProperties": False,
    }


def test_decorated_object_still_calls_the_function() -> None:
    assert lookup_order(order_id="A") == {"id": "A", "status": "shipped"}


def test_decorator_with_arguments() -> None:
    @tool(name="find.order", description="Find it.", check_in=True)
    def find(order_id: str) -> str:
        """Ignored docstring."""
        return order_id

    assert find.name == "find.order"
    assert find.description == "Find it."
    assert find.check_in is True


def test_types_defaults_optional_list_dict_literal() -> None:
    @tool
    def search(
        query: str,
        limit: int = 10,
        ratio: float = 0.5,
        exact: bool = False,
        tags: list[str] | None = None,
        weights: dict[str, float] | None = None,
        mode: Literal["fast", "slow"] = "fast",
        color: Color = Color.RED,
        note: Optional[str] = None,  # noqa: UP045
    ) -> list[str]:
        """Search."""
        return []

    schema = search.input_schema
    props = schema["properties"]
    assert schema["required"] == ["query"]
    assert props["query"] == {"type": "string"}
    assert props["limit"] == {"type": "integer", "default": 10}
    assert props["ratio"]["type"] == "number"
    assert props["exact"]["type"] == "boolean"
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    assert props["weights"]["anyOf"][0] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert "$defs" in schema and "Color" in schema["$defs"]
    assert {"type": "null"} in props["note"]["anyOf"]
    assert validate_tool_args(schema, {"query": "x", "mode": "slow", "tags": ["a"], "color": "blue"}) == []
    issues = validate_tool_args(schema, {"query": "x", "mode": "medium", "color": "green"})
    assert [i.path for i in issues] == ["mode", "color"]


def test_pydantic_model_params_are_instances_at_call_time() -> None:
    seen: list[Any] = []

    @tool
    def place(order: Order, ctx: ToolContext) -> int:
        """Place an order."""
        seen.append((order, ctx))
        return len(order.items)

    assert "ctx" not in place.input_schema["properties"]
    ctx = ToolContext(tool_call_id="c1")
    out = asyncio.run(execute_tool(place, "place", {"order": {"id": "o", "items": [{"sku": "s", "qty": 2}]}}, ctx))
    assert out.content == "1" and not out.is_error
    order, got_ctx = seen[0]
    assert isinstance(order, Order) and order.items[0].qty == 2
    assert got_ctx is ctx


def test_nested_model_errors_name_the_path() -> None:
    @tool
    def place(order: Order) -> str:
        """Place."""
        return "ok"

    issues = validate_tool_args(place.input_schema, {"order": {"id": "o", "items": [{"sku": "s", "qty": "two"}]}})
    assert [(i.path, i.expected) for i in issues] == [("order.items[0].qty", "integer")]
    issues = validate_tool_args(place.input_schema, {"order": {"id": "o", "items": [{"sku": "s", "qty": 0}]}})
    assert issues[0].path == "order.items[0].qty" and "minimum" in issues[0].problem


def test_context_injected_by_annotation_under_any_name() -> None:
    @tool
    def who(x: int, context: ToolContext) -> str:
        """Who."""
        return context.run_id

    assert list(who.input_schema["properties"]) == ["x"]
    out = asyncio.run(execute_tool(who, "who", {"x": 1}, ToolContext(run_id="run-9")))
    assert out.content == "run-9"


def test_optional_context_annotation_is_injected() -> None:
    @tool
    def who(x: int, ctx: ToolContext | None = None) -> str:
        """Who."""
        return ctx.tool_call_id if ctx else "none"

    assert "ctx" not in who.input_schema["properties"]
    assert asyncio.run(execute_tool(who, "who", {"x": 1}, ToolContext(tool_call_id="t"))).content == "t"


async def test_async_function_tool() -> None:
    @tool
    async def slow(n: int) -> dict[str, int]:
        """Slow."""
        await asyncio.sleep(0)
        return {"n": n * 2}

    out = await execute_tool(slow, "slow", {"n": 4}, ToolContext())
    assert out.content == '{"n": 8}'


def test_docstring_args_section_becomes_param_descriptions() -> None:
    @tool
    def refund(order_id: str, amount: float, reason: str = "") -> str:
        """Refund an order.

        Only within 30 days.

        Args:
            order_id: The order to refund.
            amount: How much, in dollars,
                never more than paid.
            reason (str): Why.

        Returns:
            A receipt id.
        """
        return "r"

    props = refund.input_schema["properties"]
    assert refund.description == "Refund an order."
    assert props["order_id"]["description"] == "The order to refund."
    assert props["amount"]["description"] == "How much, in dollars, never more than paid."
    assert props["reason"]["description"] == "Why."


def test_annotated_field_descriptions_win() -> None:
    @tool
    def f(x: Annotated[int, Field(description="The x.", ge=0)]) -> int:
        """F.

        Args:
            x: docstring text
        """
        return x

    assert f.input_schema["properties"]["x"]["description"] == "The x."
    assert f.input_schema["properties"]["x"]["minimum"] == 0


def test_no_docstring_no_description() -> None:
    @tool
    def bare(x: int) -> int:
        return x

    assert bare.description == ""


def test_no_annotation_means_any() -> None:
    @tool
    def loose(x, y: int = 1):  # type: ignore[no-untyped-def]
        """Loose."""
        return x

    assert validate_tool_args(loose.input_schema, {"x": [1, {"a": None}]}) == []


def test_property_named_title_survives_title_stripping() -> None:
    @tool
    def post(title: str, body: str) -> str:
        """Post."""
        return title

    assert set(post.input_schema["properties"]) == {"title", "body"}
    assert "title" not in post.input_schema["properties"]["title"]


def test_varargs_are_refused() -> None:
    with pytest.raises(InvalidToolDefinitionError, match=r"\*args"):

        @tool
        def bad(*items: str) -> None:
            """Bad."""


def test_bad_name_is_refused() -> None:
    with pytest.raises(InvalidToolDefinitionError):

        @tool(name="has space")
        def f(x: int) -> int:
            return x


def test_conversion_errors_raise_tool_arguments_error_without_values() -> None:
    @tool
    def f(n: int) -> int:
        return n

    with pytest.raises(ToolArgumentsError) as info:
        f.execute({"n": "SECRET-not-a-number"}, ToolContext())
    assert "SECRET" not in str(info.value)
    assert info.value.issues[0].path == "n"


def test_extra_arguments_are_refused_by_generated_schema() -> None:
    issues = validate_tool_args(lookup_order.input_schema, {"order_id": "A", "other": 1})
    assert [(i.path, i.problem) for i in issues] == [("other", "unexpected property (not in the schema)")]
