"""execute_tool, exactly: elapsed time from the clock it reads, the unserialisable value kept, unknown names cut."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentfootprint.tools import PermissionDecision, ToolContext, define_tool
from agentfootprint.tools import execute as execute_module
from agentfootprint.tools._codes import ERR_UNKNOWN_TOOL
from agentfootprint.tools.execute import execute_tool


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
