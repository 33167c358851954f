"""Tool definitions that cannot work are refused at definition time, each with a message naming what is wrong."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from agentfootprint.tools import InvalidToolDefinitionError, define_tool, tool


def refused(make: Any) -> str:
    with pytest.raises(InvalidToolDefinitionError) as info:
        make()
    return str(info.value)


def test_schema_problems_are_named() -> None:
    def define(schema: Any, execute: Any = lambda a, c: "ok") -> Any:
        return lambda: define_tool(name="t", description="d", input_schema=schema, execute=execute)

    assert refused(define({"type": "object", "required": "a"})) == "tool t: input_schema.required must be a list of str"
    assert refused(define({"type": "object", "required": ["a", 1]})) == (
        "tool t: input_schema.required must be a list of str"
    )

    class Uncopyable:
        def __deepcopy__(self, memo: Any) -> Any:
            raise RuntimeError("no")

    assert refused(define({"type": "object", "default": Uncopyable()})) == (
        "tool t: input_schema cannot be copied (RuntimeError)"
    )
    assert refused(define({"type": "object"}, execute=42)) == "tool t: execute must be callable"


def test_execute_without_a_readable_signature_is_called_as_given() -> None:
    class NoSignature:
        __signature__ = "not a signature"

        def __call__(self, args: Any, ctx: Any) -> str:
            return "ran"

    with pytest.raises(TypeError):
        inspect.signature(NoSignature())
    t = define_tool(name="t", description="d", input_schema={"type": "object"}, execute=NoSignature())
    assert t.name == "t"


def test_decorator_refusals() -> None:
    assert refused(lambda: tool()(42)) == "@tool must decorate a function"  # type: ignore[arg-type]

    def star(*items: int) -> str:
        return ""

    assert refused(lambda: tool()(star)) == "tool star: *args/**kwargs cannot become a schema"

    def positional(a: int, /) -> str:
        return ""

    assert refused(lambda: tool()(positional)) == "tool positional: positional-only parameter a"

    def unresolved(a: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    assert refused(lambda: tool()(unresolved)).startswith(
        "tool unresolved: cannot resolve the type annotations (NameError); "
    )

    def weird(a: Callable[[int], int]) -> str:
        return ""

    assert refused(lambda: tool()(weird)).startswith("tool weird: cannot build an input schema from the signature (")


def test_docstring_args_become_descriptions_and_summary() -> None:
    def lookup(order_id: str, verbose: bool = False) -> str:
        """Look an order up.

        Second paragraph is not the summary.

        Args:
            order_id: The order's id,
                as printed on the receipt.
            verbose: Say more.
        """
        return ""

    t = tool()(lookup)
    assert t.description == "Look an order up."
    assert t.input_schema["properties"]["order_id"]["description"] == "The order's id, as printed on the receipt."
    assert t.input_schema["properties"]["verbose"]["description"] == "Say more."
    assert t.input_schema["required"] == ["order_id"]

    def only_args(x: int) -> str:
        """Args:
        x: a number
        """
        return ""

    assert tool(description="given")(only_args).description == "given"
