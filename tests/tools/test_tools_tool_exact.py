"""``tools.tool`` exactly: the one question schema, ``ask_human``'s refusal text and argument-conversion issues."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from agentfootprint.tools import PauseOutsideAgentError, ToolArgumentsError, ToolContext, ask_human, tool
from agentfootprint.tools.tool import question_schema


def test_the_question_schema_is_exact_and_fresh() -> None:
    expected = {
        "type": "object",
        "properties": {"question": {"type": "string", "minLength": 1, "description": "The question to ask."}},
        "required": ["question"],
        "additionalProperties": False,
    }
    first = question_schema()
    assert first == expected
    first["properties"]["question"]["minLength"] = 5
    assert question_schema() == expected
    assert ask_human.input_schema == expected


def test_ask_human_refuses_to_run_outside_an_agent_by_name() -> None:
    with pytest.raises(PauseOutsideAgentError) as info:
        ask_human.execute({"question": "?"}, ToolContext())
    assert str(info.value) == "ask_human pauses the run; it only runs inside an agent loop"
    assert ask_human.description == (
        "Ask the human user a question and wait for the answer. Use it when you need information "
        "or a decision only the user can give."
    )


def test_conversion_issues_name_the_path_and_the_pydantic_error() -> None:
    @tool
    def order(count: int, tags: list[int]) -> int:
        """Order."""
        return count

    with pytest.raises(ToolArgumentsError) as info:
        order.execute({"count": "many", "tags": [1, "x"]}, ToolContext())
    problem = "int_parsing: Input should be a valid integer, unable to parse string as an integer"
    assert [(i.path, i.expected, i.problem) for i in info.value.issues] == [
        ("count", "int_parsing", problem),
        ("tags[1]", "int_parsing", problem),
    ]


def test_defaults_and_constants_keep_a_title_key() -> None:
    """Only pydantic's schema titles are dropped: a default value holding a "title" key is shown as it is."""

    @tool
    def greet(
        person: dict[str, Any] = {"title": "Dr", "name": "Ada"},  # noqa: B006
        mode: Literal["title"] = "title",
    ) -> str:
        """Greet someone."""
        return "hi"

    props = greet.input_schema["properties"]
    assert props["person"]["default"] == {"title": "Dr", "name": "Ada"}
    assert props["mode"] == {"const": "title", "default": "title", "type": "string"}
    assert "title" not in greet.input_schema


def test_properties_named_like_keywords_still_lose_their_titles() -> None:
    @tool
    def odd(title: str, default: int = 1, const: bool = False) -> str:
        """Odd names."""
        return title

    assert odd.input_schema["properties"] == {
        "title": {"type": "string"},
        "default": {"default": 1, "type": "integer"},
        "const": {"default": False, "type": "boolean"},
    }


def test_the_decorator_passes_permission_and_pauses_through() -> None:
    def checker(name: str, args: dict[str, Any], ctx: ToolContext) -> bool:
        return True

    @tool(permission=checker, pauses=True, check_in=True)
    def wait(question: str) -> str:
        """Wait for a person."""
        return question

    assert wait.permission is checker and wait.pauses is True and wait.check_in is True


def test_an_invalid_name_is_shown_only_when_short_and_printable() -> None:
    from agentfootprint.tools import InvalidToolDefinitionError, define_tool

    rules = "use 1-64 characters, letters, digits, '_', '.', '-', starting with a letter or '_'"

    def refusal(name: str) -> str:
        with pytest.raises(InvalidToolDefinitionError) as info:
            define_tool(name=name, description="d", input_schema={"type": "object"}, execute=lambda a: 1)
        return str(info.value)

    assert refusal("n" * 80) == f"invalid tool name {'n' * 80!r}: {rules}"
    assert refusal("n" * 81) == f"invalid tool name '<name>': {rules}"
    assert refusal("bad\nname") == f"invalid tool name '<name>': {rules}"
    assert refusal("has space") == f"invalid tool name 'has space': {rules}"


def test_a_deeper_indented_line_continues_the_parameter_above() -> None:
    @tool
    def search(query: str, limit: int = 5) -> str:
        """Search the catalog.

        Args:
            query: The search text.
                Example: red shoes
            limit: How many results.
        """
        return query

    props = search.input_schema["properties"]
    assert props["query"]["description"] == "The search text. Example: red shoes"
    assert props["limit"]["description"] == "How many results."
    assert set(props) == {"query", "limit"}


async def test_an_async_tool_hands_its_context_through_and_stays_a_coroutine_function() -> None:
    import inspect

    @tool
    async def whoami(ctx: ToolContext) -> str:
        """Who calls."""
        return ctx.run_id

    @tool
    def plain(x: int) -> int:
        """Plain."""
        return x

    assert inspect.iscoroutinefunction(whoami.execute) and not inspect.iscoroutinefunction(plain.execute)
    assert await whoami.execute({}, ToolContext(run_id="r-7")) == "r-7"


def test_the_decorator_refuses_bad_hooks_naming_the_tool() -> None:
    from agentfootprint.tools import InvalidToolDefinitionError

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(InvalidToolDefinitionError) as info:
        tool(check_in="yes")(f)  # type: ignore[arg-type]
    assert str(info.value) == "tool f: check_in must be a bool or a callable(args) -> bool"
    with pytest.raises(InvalidToolDefinitionError) as info:
        tool(permission="allow")(f)  # type: ignore[arg-type]
    assert str(info.value) == "tool f: permission must be a callable(name, args, ctx)"


def test_a_callable_without_a_name_needs_one() -> None:
    from agentfootprint.tools import InvalidToolDefinitionError

    class Nameless:
        def __call__(self, x: int) -> int:
            return x

    with pytest.raises(InvalidToolDefinitionError) as info:
        tool(Nameless())
    assert str(info.value).startswith("invalid tool name '': use 1-64 characters")


def test_a_decorated_schema_is_exact() -> None:
    @tool
    def book(room: str, nights: int = 1) -> str:
        """Book a room."""
        return room

    assert book.input_schema == {
        "additionalProperties": False,
        "properties": {"room": {"type": "string"}, "nights": {"default": 1, "type": "integer"}},
        "required": ["room"],
        "type": "object",
    }
    assert book.description == "Book a room."


def test_docstring_summaries() -> None:
    def summary_of(doc: str | None) -> str:
        def f(x: int) -> int:
            return x

        f.__doc__ = doc
        return tool(f).description

    assert summary_of(None) == ""
    assert summary_of("   ") == ""
    assert summary_of("  One line\n  wrapped.\n\n  Second paragraph.") == "One line wrapped."
    assert summary_of("Args:\n    x: a number.") == ""
