"""execute_tool: every outcome — unknown, invalid args, permission, pause/check-in, raise, serialise, cap."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint.tools import (
    PermissionDecision,
    Tool,
    ToolContext,
    ToolOutcome,
    ask_human,
    define_tool,
)
from agentfootprint.tools._codes import (
    ERR_CHECK_IN_DECLINED,
    ERR_INVALID_TOOL_ARGS,
    ERR_PERMISSION_DENIED,
    ERR_PERMISSION_HALT,
    ERR_TOOL_RAISED,
    ERR_TOOL_RESULT_UNSERIALISABLE,
    ERR_UNKNOWN_TOOL,
)
from agentfootprint.tools.execute import execute_tool, serialise_result

SECRET = "tok-SECRET-9f8e7d"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
}
CTX = ToolContext(tool_call_id="t1", run_id="run-1", iteration=1, tool_name="lookup")


class Counter:
    def __init__(self, result: Any = "ok") -> None:
        self.calls: list[tuple[dict[str, Any], ToolContext]] = []
        self.result = result

    def __call__(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        self.calls.append((args, ctx))
        return self.result


def make(execute: Any, **kw: Any) -> Tool:
    return define_tool(name="lookup", description="Look up.", input_schema=SCHEMA, execute=execute, **kw)


async def run(t: Tool | None, args: Any, **kw: Any) -> ToolOutcome:
    return await execute_tool(t, "lookup" if t is None else t.name, args, CTX, **kw)


# ---------------------------------------------------------------- success and serialisation


async def test_str_result_is_the_content_as_is() -> None:
    counter = Counter("plain text")
    out = await run(make(counter), {"order_id": "A"})
    assert out == ToolOutcome(
        content="plain text", elapsed_ms=out.elapsed_ms, args={"order_id": "A"}, value="plain text"
    )
    assert not out.is_error and out.error_code is None and not out.truncated
    assert counter.calls == [({"order_id": "A"}, CTX)]
    assert out.elapsed_ms >= 0


@pytest.mark.parametrize(
    "value", [{"a": 1, "b": [1, 2]}, [1, "x"], 3, 2.5, True, None, {"nested": {"x": None}}, "", math.inf]
)
async def test_non_str_result_is_json_dumps(value: Any) -> None:
    out = await run(make(Counter(value)), {"order_id": "A"})
    assert out.content == (value if isinstance(value, str) else json.dumps(value))
    assert out.value == value


class Receipt(BaseModel):
    id: str
    amount: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


async def test_models_and_dataclasses_are_dumped() -> None:
    out = await run(make(Counter(Receipt(id="r", amount=1.5))), {"order_id": "A"})
    assert json.loads(out.content) == {"id": "r", "amount": 1.5}
    out = await run(make(Counter({"r": Receipt(id="r", amount=2), "p": Point(1, 2)})), {"order_id": "A"})
    assert json.loads(out.content) == {"r": {"id": "r", "amount": 2.0}, "p": {"x": 1, "y": 2}}


async def test_async_execute() -> None:
    async def execute(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"id": args["order_id"], "run": ctx.run_id}

    out = await run(make(execute), {"order_id": "A"})
    assert json.loads(out.content) == {"id": "A", "run": "run-1"}


class Opaque:
    pass


@pytest.mark.parametrize("value", [Opaque(), {"x": Opaque()}, b"bytes", {(1, 2): "tuple key"}])
async def test_unserialisable_result_is_an_error_naming_the_type(value: Any) -> None:
    out = await run(make(Counter(value)), {"order_id": "A"})
    assert out.is_error and out.error_code == ERR_TOOL_RESULT_UNSERIALISABLE
    assert type(value).__name__ in out.content
    assert out.content.startswith("Error: tool lookup returned a ")


async def test_circular_result_is_unserialisable() -> None:
    loop: list[Any] = []
    loop.append(loop)
    out = await run(make(Counter(loop)), {"order_id": "A"})
    assert out.error_code == ERR_TOOL_RESULT_UNSERIALISABLE


def test_serialise_result_helper() -> None:
    assert serialise_result("x") == "x"
    assert serialise_result({"a": {1, 2}}) in ('{"a": [1, 2]}', '{"a": [2, 1]}')
    assert serialise_result(Receipt(id="r", amount=1)) == '{"id": "r", "amount": 1.0}'


async def test_huge_result_is_capped_and_flagged() -> None:
    whole = await run(make(Counter("x" * 250_000)), {"order_id": "A"})  # R004-93: no ceiling, never cut
    assert whole.content == "x" * 250_000 and not whole.truncated
    out = await run(make(Counter("x" * 250_000)), {"order_id": "A"}, max_result_chars=100_000)
    assert out.truncated and not out.is_error
    assert out.content.startswith("x" * 100_000)
    assert out.content.endswith("…[truncated: 150000 more characters]")
    small = await run(make(Counter("y" * 50)), {"order_id": "A"}, max_result_chars=10)
    assert small.content == "y" * 10 + "\n…[truncated: 40 more characters]"
    exact = await run(make(Counter("z" * 10)), {"order_id": "A"}, max_result_chars=10)
    assert exact.content == "z" * 10 and not exact.truncated


# ---------------------------------------------------------------- unknown / invalid


async def test_unknown_tool_lists_available_names() -> None:
    out = await execute_tool(None, "lokup", {}, CTX, available=["lookup", "refund"])
    assert out.is_error and out.error_code == ERR_UNKNOWN_TOOL
    assert out.content == "Error: unknown tool 'lokup'. Available tools: lookup, refund."


async def test_unknown_tool_list_is_capped_and_name_cleaned() -> None:
    names = [f"tool_{i}" for i in range(50)]
    out = await execute_tool(None, "evil\n" + "x" * 500, {}, CTX, available=names)
    assert "tool_19" in out.content and "tool_20" not in out.content
    assert "… and 30 more" in out.content
    assert "\n" not in out.content and len(out.content) < 700
    none = await execute_tool(None, "x", {}, CTX)
    assert none.content == "Error: unknown tool 'x'. No tools are available."


async def test_invalid_args_never_reach_execute_and_never_quote_values() -> None:
    counter = Counter()
    out = await run(make(counter), {"order_id": 12345, "extra": SECRET})
    assert counter.calls == []
    assert out.is_error and out.error_code == ERR_INVALID_TOOL_ARGS
    assert out.content == (
        "Error: invalid arguments for tool lookup:\n"
        "- order_id: expected string, got integer\n"
        "Fix the arguments and call the tool again."
    )
    assert [i.path for i in out.issues] == ["order_id"]
    assert "12345" not in out.content


@pytest.mark.parametrize("args", [None, [], "order_id", 5, b"x"])
async def test_non_dict_args_are_invalid(args: Any) -> None:
    counter = Counter()
    out = await run(make(counter), args)
    assert out.error_code == ERR_INVALID_TOOL_ARGS and counter.calls == []
    assert "(arguments): expected object" in out.content


async def test_validation_can_be_switched_off() -> None:
    counter = Counter()
    out = await run(make(counter), {"order_id": 1}, validate=False)
    assert not out.is_error and counter.calls[0][0] == {"order_id": 1}
    out = await run(make(counter), None, validate=False)
    assert counter.calls[-1][0] == {}


# ---------------------------------------------------------------- raising tools


async def test_raising_tool_is_an_error_outcome() -> None:
    def boom(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise ValueError("order not found")

    out = await run(make(boom), {"order_id": "A"})
    assert out.is_error and out.error_code == ERR_TOOL_RAISED
    assert out.content == "Error: tool lookup raised ValueError: order not found"


async def test_raised_message_is_truncated_to_500() -> None:
    def boom(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise RuntimeError("m" * 5000)

    out = await run(make(boom), {"order_id": "A"})
    assert len(out.content) < len("Error: tool lookup raised RuntimeError: ") + 501


async def test_raising_without_message_and_unprintable_exception() -> None:
    class Nasty(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    def bare(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise KeyError

    def nasty(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise Nasty()

    assert (await run(make(bare), {"order_id": "A"})).content == "Error: tool lookup raised KeyError"
    assert (await run(make(nasty), {"order_id": "A"})).content == "Error: tool lookup raised Nasty"


async def test_async_raising_tool() -> None:
    async def boom(args: dict[str, Any], ctx: ToolContext) -> Any:
        await asyncio.sleep(0)
        raise LookupError("gone")

    out = await run(make(boom), {"order_id": "A"})
    assert out.content == "Error: tool lookup raised LookupError: gone"


async def test_cancelled_error_propagates() -> None:
    async def cancel(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise asyncio.CancelledError()

    with pytest.raises(asyncio.CancelledError):
        await run(make(cancel), {"order_id": "A"})


async def test_cancelling_a_running_tool_propagates() -> None:
    started = asyncio.Event()

    async def slow(args: dict[str, Any], ctx: ToolContext) -> Any:
        started.set()
        await asyncio.sleep(10)

    task = asyncio.create_task(run(make(slow), {"order_id": "A"}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_passthrough_exceptions_propagate() -> None:
    class PauseSignal(Exception):
        pass

    def pausing(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise PauseSignal()

    with pytest.raises(PauseSignal):
        await run(make(pausing), {"order_id": "A"}, passthrough=(PauseSignal,))


# ---------------------------------------------------------------- permission


@pytest.mark.parametrize("verdict", ["allow", True, PermissionDecision.allow()])
async def test_permission_allow(verdict: Any) -> None:
    counter = Counter()
    out = await run(make(counter), {"order_id": "A"}, permission=lambda n, a, c: verdict)
    assert not out.is_error and len(counter.calls) == 1


@pytest.mark.parametrize("verdict", ["deny", False, PermissionDecision.deny(), "maybe", None, 1])
async def test_permission_deny_skips_execute(verdict: Any) -> None:
    counter = Counter()
    out = await run(make(counter), {"order_id": "A"}, permission=lambda n, a, c: verdict)
    assert out.is_error and out.error_code == ERR_PERMISSION_DENIED and not out.halted
    assert out.content.startswith("Error: permission denied for tool lookup")
    assert counter.calls == []


async def test_permission_deny_reason_is_shown() -> None:
    out = await run(
        make(Counter()), {"order_id": "A"}, permission=lambda n, a, c: PermissionDecision.deny("no refunds")
    )
    assert out.content == "Error: permission denied for tool lookup: no refunds"


@pytest.mark.parametrize("verdict", ["halt", PermissionDecision.halt("policy stop")])
async def test_permission_halt(verdict: Any) -> None:
    counter = Counter()
    out = await run(make(counter), {"order_id": "A"}, permission=lambda n, a, c: verdict)
    assert out.halted and out.is_error and out.error_code == ERR_PERMISSION_HALT
    assert counter.calls == []
    assert out.content.startswith("Run halted by the permission policy at tool lookup")


async def test_raising_checker_denies_without_its_message() -> None:
    def checker(name: str, args: dict[str, Any], ctx: ToolContext) -> str:
        raise RuntimeError(SECRET)

    counter = Counter()
    out = await run(make(counter), {"order_id": "A"}, permission=checker)
    assert out.error_code == ERR_PERMISSION_DENIED and counter.calls == []
    assert SECRET not in out.content and "RuntimeError" in out.content


async def test_async_checker_and_its_arguments() -> None:
    seen: list[Any] = []

    async def checker(name: str, args: dict[str, Any], ctx: ToolContext) -> str:
        seen.append((name, args, ctx))
        return "deny" if args["order_id"] == "B" else "allow"

    assert not (await run(make(Counter()), {"order_id": "A"}, permission=checker)).is_error
    assert (await run(make(Counter()), {"order_id": "B"}, permission=checker)).error_code == ERR_PERMISSION_DENIED
    assert seen[0] == ("lookup", {"order_id": "A"}, CTX)


async def test_run_level_then_tool_level_permission() -> None:
    order: list[str] = []

    def run_level(n: str, a: dict[str, Any], c: ToolContext) -> str:
        order.append("run")
        return "allow"

    def tool_level(n: str, a: dict[str, Any], c: ToolContext) -> str:
        order.append("tool")
        return "deny"

    counter = Counter()
    out = await run(make(counter, permission=tool_level), {"order_id": "A"}, permission=run_level)
    assert order == ["run", "tool"] and out.error_code == ERR_PERMISSION_DENIED and counter.calls == []


async def test_permission_is_checked_after_validation() -> None:
    calls: list[Any] = []
    out = await run(make(Counter()), {"order_id": 1}, permission=lambda *a: calls.append(a) or "allow")
    assert out.error_code == ERR_INVALID_TOOL_ARGS and calls == []


# ---------------------------------------------------------------- pause and check-in


async def test_pausing_tool_is_not_executed() -> None:
    out = await execute_tool(ask_human, "ask_human", {"question": "Which order?"}, CTX)
    assert out.paused and not out.is_error and out.content == ""
    assert out.args == {"question": "Which order?"}


async def test_pausing_tool_args_are_validated_first() -> None:
    out = await execute_tool(ask_human, "ask_human", {"q": "x"}, CTX)
    assert out.error_code == ERR_INVALID_TOOL_ARGS and not out.paused


async def test_check_in_gate() -> None:
    counter = Counter()
    t = make(counter, check_in=True)
    first = await run(t, {"order_id": "A"})
    assert first.needs_check_in and counter.calls == [] and first.args == {"order_id": "A"}
    declined = await run(t, {"order_id": "A"}, check_in="declined", check_in_note="not today")
    assert declined.error_code == ERR_CHECK_IN_DECLINED and declined.content == "Declined by human: not today"
    assert counter.calls == []
    approved = await run(t, {"order_id": "A"}, check_in="approved")
    assert approved.content == "ok" and len(counter.calls) == 1


async def test_check_in_predicate_and_permission_first() -> None:
    counter = Counter()
    t = make(counter, check_in=lambda a: a["order_id"].startswith("BIG"))
    assert (await run(t, {"order_id": "small"})).content == "ok"
    assert (await run(t, {"order_id": "BIG-1"})).needs_check_in
    denied = await run(t, {"order_id": "BIG-1"}, permission=lambda *a: "deny")
    assert denied.error_code == ERR_PERMISSION_DENIED and not denied.needs_check_in


def test_outcome_is_json_serialisable_without_the_raw_value() -> None:
    out = ToolOutcome(content="x", value=Opaque())
    dumped = out.model_dump(mode="json")
    assert "value" not in dumped and dumped["content"] == "x"
    json.dumps(dumped)


async def test_provider_args_error_is_an_invalid_args_outcome() -> None:
    counter = Counter()
    out = await run(make(counter), {}, args_error="arguments are not valid JSON (Expecting value at position 0)")
    assert out.error_code == ERR_INVALID_TOOL_ARGS and counter.calls == []
    assert out.content.splitlines()[1] == "- (arguments): arguments are not valid JSON (Expecting value at position 0)"
