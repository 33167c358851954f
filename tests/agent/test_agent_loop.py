"""The ReAct loop: requests the model sees, tool results, errors as results, limits, stage ids."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Agent, define_tool, tool
from agentfootprint.providers import LLMRequest, MockExhaustedError, mock

from .conftest import ORDER, WRONG, lookup_calls, lookup_order, refund_agent


async def test_flagship_run_two_calls_one_tool() -> None:
    seen: list[LLMRequest] = []

    def spy(req: LLMRequest) -> Any:
        seen.append(req)
        from .conftest import refund_respond

        return refund_respond(req)

    agent = refund_agent(spy)
    result = await agent.run("Should order A-1001 be refunded?")
    assert result.status == "completed" and "APPROVED" in (result.answer or "")
    assert len(seen) == 2 and lookup_calls == [{"orderId": "A-1001"}]
    second = seen[1]
    assert second.system_prompt == (
        "You are a refunds assistant. Policy: refunds only within 30 days of purchase.\n\n"
        "Customer Dana Reyes holds VIP tier override status: refunds are approved beyond the 30-day window.\n\n"
        "Style rule #12: limit replies to two (2) sentences / 40 words max."
    )
    assert [m.role for m in second.messages] == ["user", "assistant", "tool"]
    assert second.messages[1].content == "" and second.messages[1].tool_calls[0].name == "lookup_order"
    tool_msg = second.messages[2]
    assert (tool_msg.tool_call_id, tool_msg.tool_name, tool_msg.content) == ("t1", "lookup_order", ORDER)
    assert [t.name for t in second.tools] == ["lookup_order"]
    assert second.model == "mock-1"


async def test_stage_ids_are_stable_and_request_is_in_committed_state() -> None:
    agent = refund_agent()
    await agent.run("Should order A-1001 be refunded?")
    snap = agent.last_snapshot()
    assert snap is not None
    ids = [c.stage_id for c in snap.commit_log]
    assert ids[:9] == [
        "seed",
        "injection-engine",
        "system-prompt",
        "messages",
        "tools",
        "call-llm",
        "route",
        "tool-calls",
        "injection-engine",
    ]
    assert ids[-1] == "final"
    calls = [c for c in snap.commit_log if c.stage_id == "call-llm"]
    assert len(calls) == 2
    for c in calls:
        assert {"system_prompt", "history", "tool_specs", "message_slot"} <= set(c.reads)
        state = snap.state_at(c.idx)
        assert state["system_prompt"].startswith("You are a refunds assistant.")
        assert state["llm_call"]["tools"] == ["lookup_order"]


async def test_tool_result_non_str_is_json_dumped_and_in_call_order() -> None:
    @tool
    def add(a: int, b: int) -> dict[str, int]:
        """Add two numbers."""
        return {"sum": a + b}

    replies = [
        {
            "tool_calls": [
                {"id": "c1", "name": "add", "args": {"a": 1, "b": 2}},
                {"id": "c2", "name": "add", "args": {"a": 3, "b": 4}},
            ]
        },
        "done",
    ]
    provider = mock(replies=replies)
    agent = Agent.create(provider=provider, model="m").tool(add).build()
    r = await agent.run("add things")
    assert r.answer == "done"
    msgs = provider.requests[1].messages
    assert [(m.role, m.tool_call_id) for m in msgs[2:]] == [("tool", "c1"), ("tool", "c2")]
    assert json.loads(msgs[2].content) == {"sum": 3} and json.loads(msgs[3].content) == {"sum": 7}


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ({"id": "x", "name": "nope", "args": {}}, "unknown tool"),
        ({"id": "x", "name": "lookup_order", "args": {"orderId": 12345678}}, "orderId"),
        ({"id": "x", "name": "lookup_order", "args": {}}, "orderId"),
    ],
)
async def test_bad_calls_become_error_results_and_run_continues(call: dict[str, Any], expected: str) -> None:
    provider = mock(replies=[{"tool_calls": [call]}, "recovered"])
    agent = Agent.create(provider=provider, model="m").tool(lookup_order).build()
    r = await agent.run("go")
    assert r.answer == "recovered"
    content = provider.requests[1].messages[-1].content
    assert expected in content and content.startswith("Error")
    assert "12345678" not in content  # the received value is never quoted
    assert lookup_calls == []


async def test_raising_tool_gives_error_result() -> None:
    def boom(args: dict[str, Any], ctx: Any) -> str:
        raise ValueError("database is down")

    t = define_tool(name="fragile", description="d", input_schema={"type": "object"}, execute=boom)
    provider = mock(replies=[{"tool_calls": [{"id": "1", "name": "fragile", "args": {}}]}, "ok"])
    r = await Agent.create(provider=provider, model="m").tool(t).build().run("go")
    assert r.answer == "ok"
    assert "ValueError" in provider.requests[1].messages[-1].content


async def test_huge_tool_output_is_capped() -> None:
    t = define_tool(name="big", description="d", input_schema={"type": "object"}, execute=lambda a, c: "x" * 500_000)
    provider = mock(replies=[{"tool_calls": [{"id": "1", "name": "big", "args": {}}]}, "ok"])
    await Agent.create(provider=provider, model="m", max_result_chars=1000).tool(t).build().run("go")
    assert len(provider.requests[1].messages[-1].content) < 2000


async def test_max_iterations_stops_early_without_running_last_tools() -> None:
    def always_tools(req: LLMRequest) -> Any:
        return {
            "content": "still working",
            "tool_calls": [{"id": f"c{len(req.messages)}", "name": "lookup_order", "args": {"orderId": "A"}}],
        }

    agent = Agent.create(provider=mock(respond=always_tools), model="m", max_iterations=3).tool(lookup_order).build()
    r = await agent.run("loop forever")
    assert r.status == "completed" and r.answer == "still working"
    stopped = agent.stopped_early()
    assert stopped is not None and stopped.reason == "max-iterations"
    assert stopped.iteration == 3 and stopped.pending_tool_calls == 1
    assert len(lookup_calls) == 2  # the third call's tools never ran
    assert r.stopped_early == stopped


async def test_normal_finish_has_no_stopped_early() -> None:
    agent = refund_agent()
    await agent.run("Should order A-1001 be refunded?")
    assert agent.stopped_early() is None


async def test_exhausted_mock_says_how_many_were_scripted() -> None:
    agent = (
        Agent.create(
            provider=mock(replies=[{"tool_calls": [{"id": "1", "name": "lookup_order", "args": {"orderId": "A"}}]}]),
            model="m",
        )
        .tool(lookup_order)
        .build()
    )
    with pytest.raises(MockExhaustedError, match="1 repl"):
        await agent.run("go")


async def test_usage_accumulates() -> None:
    agent = refund_agent()
    r = await agent.run("Should order A-1001 be refunded?")
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0 and r.iterations == 2


def test_run_sync_twice_on_one_agent() -> None:
    agent = refund_agent()
    assert "APPROVED" in (agent.run_sync("Should order A-1001 be refunded?").answer or "")
    assert agent.run_sync("Should order A-1001 be refunded?").answer == WRONG


async def test_tool_ctx_carries_run_id_identity_iteration() -> None:
    seen: list[Any] = []
    t = define_tool(
        name="who", description="d", input_schema={"type": "object"}, execute=lambda a, ctx: seen.append(ctx) or "ok"
    )
    provider = mock(replies=[{"tool_calls": [{"id": "k1", "name": "who", "args": {}}]}, "fin"])
    agent = Agent.create(provider=provider, model="m").tool(t).build()
    r = await agent.run("go", identity={"tenant": "acme", "principal": "ann"})
    ctx = seen[0]
    assert ctx.run_id == r.run_id and ctx.tool_call_id == "k1" and ctx.iteration == 1
    assert ctx.identity.tenant == "acme" and ctx.identity.principal == "ann"


async def test_duplicate_tool_names_refused_at_build() -> None:
    from agentfootprint.tools import DuplicateToolError

    other = define_tool(name="lookup_order", description="x", input_schema={"type": "object"}, execute=lambda a, c: "")
    with pytest.raises(DuplicateToolError, match="lookup_order"):
        Agent.create(provider=mock(reply="x"), model="m").tool(lookup_order).tool(other).build()


async def test_with_tools_adds_tools_and_keeps_listeners() -> None:
    extra = define_tool(name="extra", description="d", input_schema={"type": "object"}, execute=lambda a, c: "x")
    seen: list[str] = []
    provider = mock(replies=[{"tool_calls": [{"id": "1", "name": "extra", "args": {}}]}, "ok"])
    base = Agent.create(provider=provider, model="m").build()
    base.on("stream.tool_end", lambda e: seen.append(e.payload["name"]))
    clone = base.with_tools(extra)
    assert (await clone.run("go")).answer == "ok" and seen == ["extra"]
    assert [t.name for t in base.config.tools] == []


async def test_tool_choice_margin_recorded_when_the_model_picks_between_twins() -> None:
    a = define_tool(
        name="search_orders",
        description="Search the orders database by customer name",
        input_schema={"type": "object"},
        execute=lambda args, c: "found",
    )
    b = define_tool(
        name="search_order",
        description="Search the orders database by customer name.",
        input_schema={"type": "object"},
        execute=lambda args, c: "found",
    )
    c = define_tool(
        name="weather",
        description="Weather forecast for a city",
        input_schema={"type": "object"},
        execute=lambda args, ctx: "sunny",
    )
    provider = mock(replies=[{"tool_calls": [{"id": "s1", "name": "search_orders", "args": {}}]}, "ok"])
    agent = Agent.create(provider=provider, model="m").tools([a, b, c]).build()
    await agent.run("find Dana's orders")
    snap = agent.last_snapshot()
    assert snap is not None
    margins = snap.state["tool_choice_margins"]
    assert [(m["chosen"], m["twin"]) for m in margins] == [("search_orders", "search_order")]
    assert margins[0]["similarity"] >= 0.8 and margins[0]["iteration"] == 1
