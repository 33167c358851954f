"""Message and tool-dispatch middleware: decisions in order, refusals fail closed, every decision on the record."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import AgentBuildError, ToolCallRequest
from agentfootprint.extensions import MessageDeniedError, allow, deny
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import ToolOutcome

CALLS: list[dict[str, Any]] = []


def lookup_tool() -> Any:
    def execute(args: dict[str, Any]) -> str:
        CALLS.append(dict(args))
        return f"order {args['order_id']}: shipped"

    return define_tool(
        name="lookup_order",
        description="Look up an order.",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        execute=execute,
    )


def calling(*ids: str) -> list[Any]:
    return [
        {"tool_calls": [{"id": f"c{i}", "name": "lookup_order", "args": {"order_id": o}} for i, o in enumerate(ids)]},
        "done",
    ]


def scrub(message: str, ctx: Any) -> Any:
    return allow(message.replace("123-45-6789", "[ssn]"), "masked an SSN") if "123-45-6789" in message else None


async def test_R004_47_a_continued_turn_s_user_entry_is_what_the_input_chain_let_through() -> None:
    """R004-47: Message middleware ('input' chain): a continued turn's user entry is the message the chain let
    through."""
    seen: list[LLMRequest] = []

    def respond(req: LLMRequest) -> str:
        seen.append(req)
        return "ok"

    agent = Agent.create(provider=mock(respond=respond)).message_middleware(scrub, name="scrub-ssn").build()
    await agent.run("hello")
    await agent.follow_up("my ssn is 123-45-6789")
    users = [m.content for m in seen[-1].messages if m.role == "user"]
    assert users == ["hello", "my ssn is [ssn]"]
    cp = agent.checkpoint()
    assert cp is not None and [m["content"] for m in cp["history"] if m["role"] == "user"] == users
    rows = agent.last_snapshot().state["middleware_decisions"]  # type: ignore[union-attr]
    assert rows == [
        {"middleware": "scrub-ssn", "moment": "input", "outcome": "allow", "changed": True, "why": "masked an SSN"}
    ]
    # the continue_from door admits the turn through the chain too
    fresh = Agent.create(provider=mock(respond=respond)).message_middleware(scrub).build()
    await fresh.run("again 123-45-6789", continue_from=cp)
    assert [m.content for m in seen[-1].messages if m.role == "user"][-1] == "again [ssn]"


async def test_R004_48_checkpoint_is_none_after_a_refused_input() -> None:
    """R004-48: checkpoint() is undefined (None) after a run whose input middleware refused the message (a
    refused input is no conversation) — even after an earlier accepted turn."""
    agent = (
        Agent.create(provider=mock(reply="fine"))
        .message_middleware(lambda m, ctx: deny("no secrets here") if "secret" in m else None, name="guard")
        .build()
    )
    await agent.run("hello")
    assert agent.checkpoint() is not None
    with pytest.raises(MessageDeniedError) as info:
        await agent.run("the secret is 42")
    assert info.value.code == "ERR_MESSAGE_DENIED" and info.value.middleware == "guard" and info.value.phase == "input"
    assert "42" not in str(info.value)
    assert agent.checkpoint() is None


async def test_a_raising_message_middleware_refuses_the_message() -> None:
    def broken(message: str, ctx: Any) -> str:
        raise RuntimeError("boom")

    agent = Agent.create(provider=mock(reply="x")).message_middleware(broken).build()
    with pytest.raises(MessageDeniedError):
        await agent.run("hi")
    assert agent.checkpoint() is None


async def test_output_phase_denial_raises_without_the_answer() -> None:
    agent = (
        Agent.create(provider=mock(reply="codename BLUEBIRD"))
        .message_middleware(lambda a, ctx: deny("codename") if "BLUEBIRD" in a else None, phase="output", name="nc")
        .build()
    )
    with pytest.raises(MessageDeniedError) as info:
        await agent.run("hi")
    assert info.value.phase == "output" and "BLUEBIRD" not in str(info.value)


async def test_R004_122_tool_middleware_runs_in_declaration_order_around_every_call() -> None:
    """R004-122: Tool-dispatch middleware chain (.tool_middleware()), in declaration order: permission, argument
    rewriting, caching and audit, each decision recorded."""
    CALLS.clear()
    order: list[str] = []
    cache: dict[str, ToolOutcome] = {}

    async def audit(call: ToolCallRequest, call_next: Any) -> ToolOutcome:
        order.append(f"audit:{call.args['order_id']}")
        return await call_next(call)

    async def permission(call: ToolCallRequest, call_next: Any) -> Any:
        order.append("permission")
        return deny("order B-9 is off limits") if call.args["order_id"] == "B-9" else await call_next(call)

    async def normalise(call: ToolCallRequest, call_next: Any) -> ToolOutcome:
        order.append("normalise")
        return await call_next(call.with_args({"order_id": call.args["order_id"].upper()}))

    async def caching(call: ToolCallRequest, call_next: Any) -> ToolOutcome:
        key = call.args["order_id"]
        if key not in cache:
            cache[key] = await call_next(call)
        return cache[key]

    agent = (
        Agent.create(provider=mock(replies=calling("a-1", "B-9", "a-1")))
        .tool(lookup_tool())
        .tool_middleware(audit)
        .tool_middleware(permission)
        .tool_middleware(normalise)
        .tool_middleware(caching)
        .build()
    )
    await agent.run("check")
    assert order == [
        "audit:a-1",
        "permission",
        "normalise",
        "audit:B-9",
        "permission",
        "audit:a-1",
        "permission",
        "normalise",
    ]
    assert CALLS == [{"order_id": "A-1"}]  # the third call was answered from the cache
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [(r["content"].split("\n\n[identical call:")[0], r["is_error"]) for r in results] == [
        ("order A-1: shipped", False),
        ("order B-9 is off limits", True),
        ("order A-1: shipped", False),
    ]
    # R004-94: the third call repeated the first exactly (same arguments, same result): the model is told so
    assert "[identical call: 'lookup_order'" in results[2]["content"] and "identical" not in results[0]["content"]
    rows = agent.last_snapshot().state["middleware_decisions"]  # type: ignore[union-attr]
    assert [(r["middleware"], r["tool_call_id"], r["outcome"]) for r in rows] == [
        ("caching", "c0", "passed"),
        ("normalise", "c0", "rewrote"),
        ("permission", "c0", "passed"),
        ("audit", "c0", "passed"),
        ("permission", "c1", "denied"),
        ("audit", "c1", "passed"),
        ("caching", "c2", "answered"),
        ("normalise", "c2", "rewrote"),
        ("permission", "c2", "passed"),
        ("audit", "c2", "passed"),
    ]


async def test_R004_122_a_raising_tool_middleware_fails_closed_and_is_recorded() -> None:
    """R004-122: a raising middleware fails closed (the tool does not run) and the decision is recorded."""
    CALLS.clear()

    def broken(call: ToolCallRequest, call_next: Any) -> Any:
        raise KeyError("policy store down")

    agent = Agent.create(provider=mock(replies=calling("a-1"))).tool(lookup_tool()).tool_middleware(broken).build()
    result = await agent.run("check")
    assert result.answer == "done" and CALLS == []
    record = agent.last_snapshot().state["tool_results"][0]  # type: ignore[union-attr]
    assert record["is_error"] is True and record["error_code"] == "ERR_TOOL_MIDDLEWARE"
    assert record["content"] == "Error: tool call refused: middleware 'broken' failed (KeyError)"
    assert agent.last_snapshot().state["middleware_decisions"][0]["outcome"] == "failed"  # type: ignore[union-attr]


def test_bad_middleware_is_refused_at_build() -> None:
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).tool_middleware("nope")  # type: ignore[arg-type]
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).message_middleware(scrub, phase="later")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must say why"):
        allow("changed")


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
def test_property_an_identity_chain_records_the_message_unchanged(message: str) -> None:
    agent = Agent.create(provider=mock(reply="ok")).message_middleware(lambda m, ctx: m, name="same").build()
    agent.run_sync(message)
    cp = agent.checkpoint()
    assert cp is not None and cp["history"][0]["content"] == message
    assert agent.last_snapshot().state["middleware_decisions"][0]["changed"] is False  # type: ignore[union-attr]
