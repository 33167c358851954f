"""execute_tool, exactly: elapsed time from the clock it reads, the unserialisable value kept, unknown names cut."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint.tools import PermissionDecision, ToolArgumentsError, ToolContext, define_tool
from agentfootprint.tools import execute as execute_module
from agentfootprint.tools._codes import ERR_UNKNOWN_TOOL
from agentfootprint.tools.execute import execute_tool, serialise_result
from agentfootprint.tools.validation import ArgIssue


class Clock:
    def __init__(self, *ticks: float) -> None:
        self._ticks: Iterator[float] = iter(ticks)

    def perf_counter(self) -> float:
        return next(self._ticks)


def make(result: Any) -> Any:
    return define_tool(name="t", description="d", input_schema={"type": "object"}, execute=lambda a, c: result)


async def test_elapsed_is_measured_from_start_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute_module, "time", Clock(10.0, 10.25))
    out = await execute_tool(make("ok"), "t", {}, ToolContext())
    assert (out.content, out.elapsed_ms) == ("ok", 250.0)
    marker = object()
    monkeypatch.setattr(execute_module, "time", Clock(1.0, 1.5))
    bad = await execute_tool(make(marker), "t", {}, ToolContext())
    assert bad.content == "Error: tool t returned a object that cannot be serialised to JSON"
    assert (bad.elapsed_ms, bad.value is marker, bad.is_error) == (500.0, True, True)


async def test_unknown_name_is_cut_at_64_characters() -> None:
    out = await execute_tool(None, "n" * 80, {}, ToolContext(), available=["a"])
    assert out.error_code == ERR_UNKNOWN_TOOL
    assert out.content.startswith(f"Error: unknown tool '{'n' * 63}…'.")


def test_permission_decisions() -> None:
    assert PermissionDecision.halt("stop").model_dump() == {"decision": "halt", "reason": "stop"}
    assert PermissionDecision.deny().model_dump() == {"decision": "deny", "reason": None}
    assert PermissionDecision.allow().model_dump() == {"decision": "allow", "reason": None}


async def test_an_unknown_name_that_is_not_text_is_named_by_type() -> None:
    out = await execute_tool(None, 5, {}, ToolContext(), available=["a", "b"])  # type: ignore[arg-type]
    assert out.content == "Error: unknown tool '<int>'. Available tools: a, b."
    none = await execute_tool(None, "x\n", {}, ToolContext())
    assert none.content == "Error: unknown tool 'x?'. No tools are available."


async def test_at_most_20_available_tools_are_listed() -> None:
    twenty = [f"t{i}" for i in range(20)]
    out = await execute_tool(None, "x", {}, ToolContext(), available=twenty)
    assert out.content == f"Error: unknown tool 'x'. Available tools: {', '.join(twenty)}."
    more = await execute_tool(None, "x", {}, ToolContext(), available=[*twenty, "t20", "t21"])
    assert more.content == f"Error: unknown tool 'x'. Available tools: {', '.join(twenty)}, … and 2 more."


async def test_an_unsupported_permission_verdict_denies_naming_its_type() -> None:
    out = await execute_tool(make("ok"), "t", {}, ToolContext(), permission=lambda n, a, c: 42)
    assert out.content == "Error: permission denied for tool t: the permission check returned an unsupported int"
    assert out.error_code == "ERR_PERMISSION_DENIED"


async def test_the_tools_own_permission_is_asked_without_a_run_level_one() -> None:
    guarded = define_tool(
        name="t",
        description="d",
        input_schema={"type": "object"},
        execute=lambda a, c: "ran",
        permission=lambda n, a, c: PermissionDecision.deny("not today"),
    )
    out = await execute_tool(guarded, "t", {}, ToolContext())
    assert (out.content, out.error_code) == ("Error: permission denied for tool t: not today", "ERR_PERMISSION_DENIED")


async def test_a_ceiling_of_one_character_still_cuts() -> None:
    out = await execute_tool(make("abc"), "t", {}, ToolContext(), max_result_chars=1)
    assert (out.content, out.truncated) == ("a\n…[truncated: 2 more characters]", True)
    kept = await execute_tool(make("a"), "t", {}, ToolContext(), max_result_chars=1)
    assert (kept.content, kept.truncated) == ("a", False)


async def test_arguments_a_tool_refuses_become_issues_with_the_time_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    issues = [ArgIssue(path="when", expected="date", problem="not a date")]

    def refuse(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise ToolArgumentsError(issues)

    refusing = define_tool(name="t", description="d", input_schema={"type": "object"}, execute=refuse)
    monkeypatch.setattr(execute_module, "time", Clock(2.0, 2.125))
    out = await execute_tool(refusing, "t", {}, ToolContext())
    assert (
        out.content
        == "Error: invalid arguments for tool t:\n- when: not a date\nFix the arguments and call the tool again."
    )
    assert (out.error_code, out.issues, out.elapsed_ms) == ("ERR_INVALID_TOOL_ARGS", issues, 125.0)


async def test_arguments_the_provider_could_not_parse_are_one_issue() -> None:
    out = await execute_tool(make("ok"), "t", {}, ToolContext(), args_error="unterminated string at 14")
    issue = ArgIssue(path="", expected="object", problem="unterminated string at 14")
    assert out.issues == [issue]
    assert out.content == (
        "Error: invalid arguments for tool t:\n- (arguments): unterminated string at 14\n"
        "Fix the arguments and call the tool again."
    )


def test_a_model_result_is_dumped_in_json_mode() -> None:
    class Slot(BaseModel):
        when: datetime.date
        tags: set[str]

    assert serialise_result(Slot(when=datetime.date(2026, 1, 2), tags={"a"})) == '{"when": "2026-01-02", "tags": ["a"]}'
