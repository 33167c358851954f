"""Contract (API.md §2 "Where context lands"): facts, steering, instructions, skills, without(), output_schema."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint import (
    Agent,
    OutputSchemaError,
    UnknownSourceError,
    define_fact,
    define_instruction,
    define_skill,
    define_steering,
    define_tool,
)
from agentfootprint.errors import AgentFootprintError
from agentfootprint.providers import LLMRequest, mock

from .conftest import lookup_calls, lookup_order

SYSTEM = "You are a refunds assistant."
FACT = "Fact: order A-1001 was bought 47 days ago."
STEER = "Steering: always answer in English."
INSTR = "Instruction: cite the order id."
SKILL_BODY = "Skill body: to refund, call issue_refund with the order id."

refunds_issued: list[dict[str, Any]] = []


def _issue(args: dict[str, Any], ctx: Any) -> str:
    refunds_issued.append(dict(args))
    return "refund issued"


issue_refund = define_tool(
    name="issue_refund",
    description="Issue a refund",
    input_schema={"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]},
    execute=_issue,
)
noop = define_tool(name="noop", description="Does nothing", input_schema={"type": "object"}, execute=lambda a, c: "ok")


@pytest.fixture(autouse=True)
def _reset() -> None:
    refunds_issued.clear()


def call(name: str, args: dict[str, Any] | None = None, call_id: str = "c1") -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "args": args or {}}]}


def names(req: LLMRequest) -> list[str]:
    return [t.name for t in req.tools]


# ------------------------------------------------------------------------------------------ landing order


async def test_context_is_appended_after_system_in_declaration_order_separated_by_blank_lines() -> None:
    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m")
        .system(SYSTEM)
        .steering(define_steering(id="steer", prompt=STEER))
        .fact(define_fact(id="fact", data=FACT))
        .instruction(define_instruction(id="instr", prompt=INSTR, active_when=lambda ctx: True))
        .build()
    )
    await agent.run("go")
    req = provider.requests[0]
    assert req.system_prompt == f"{SYSTEM}\n\n{STEER}\n\n{FACT}\n\n{INSTR}"
    assert [m.role for m in req.messages] == ["user"]  # context never lands in messages by default
    assert all(FACT not in m.content for m in req.messages)


async def test_fact_active_when_gates_landing_per_call() -> None:
    provider = mock(replies=[call("noop"), "done"])
    agent = (
        Agent.create(provider=provider, model="m")
        .system(SYSTEM)
        .tool(noop)
        .fact(define_fact(id="late", data=FACT, active_when=lambda ctx: ctx.iteration >= 2))
        .fact(
            define_fact(
                id="refund-only", data="Refund policy: 30 days.", active_when=lambda ctx: "refund" in ctx.user_message
            )
        )
        .build()
    )
    await agent.run("hello")
    first, second = provider.requests
    assert first.system_prompt == SYSTEM
    assert second.system_prompt == f"{SYSTEM}\n\n{FACT}"
    assert "Refund policy" not in second.system_prompt


async def test_fact_active_when_on_user_message() -> None:
    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m")
        .system(SYSTEM)
        .fact(
            define_fact(
                id="refund-only", data="Refund policy: 30 days.", active_when=lambda ctx: "refund" in ctx.user_message
            )
        )
        .build()
    )
    await agent.run("I want a refund")
    await agent.run("hello")
    assert "Refund policy: 30 days." in provider.requests[0].system_prompt
    assert provider.requests[1].system_prompt == SYSTEM


async def test_raising_active_when_does_not_break_the_run() -> None:
    def broken(ctx: Any) -> bool:
        raise RuntimeError("rule bug")

    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m")
        .system(SYSTEM)
        .fact(define_fact(id="f", data=FACT, active_when=broken))
        .build()
    )
    r = await agent.run("go")
    assert r.answer == "ok" and provider.requests[0].system_prompt == SYSTEM


async def test_instruction_on_tool_return_lands_only_on_the_call_after_that_tool_returned() -> None:
    provider = mock(
        replies=[call("noop"), call("lookup_order", {"orderId": "A-1"}), call("noop", call_id="c3"), "done"]
    )
    agent = (
        Agent.create(provider=provider, model="m")
        .system(SYSTEM)
        .tool(noop)
        .tool(lookup_order)
        .instruction(define_instruction(id="after-lookup", prompt=INSTR, on_tool_return="lookup_order"))
        .build()
    )
    r = await agent.run("go")
    assert r.answer == "done"
    prompts = [req.system_prompt for req in provider.requests]
    assert len(prompts) == 4
    assert INSTR not in prompts[0]  # before any tool
    assert INSTR not in prompts[1]  # after noop returned
    assert prompts[2] == f"{SYSTEM}\n\n{INSTR}"  # right after lookup_order returned
    assert INSTR not in prompts[3]  # after noop returned again
    assert lookup_calls == [{"orderId": "A-1"}]


async def test_instruction_on_tool_return_fires_when_the_tool_errored_too() -> None:
    provider = mock(replies=[call("lookup_order", {}), "done"])  # missing orderId: error result
    agent = (
        Agent.create(provider=provider, model="m")
        .tool(lookup_order)
        .instruction(define_instruction(id="after-lookup", prompt=INSTR, on_tool_return="lookup_order"))
        .build()
    )
    await agent.run("go")
    assert INSTR in provider.requests[1].system_prompt


# ------------------------------------------------------------------------------------------ skills


async def test_skill_body_and_tools_arrive_from_the_next_call_on_not_before() -> None:
    provider = mock(
        replies=[
            call("read_skill", {"id": "refunds"}, "s1"),
            call("issue_refund", {"orderId": "A-1"}, "r1"),
            "refunded",
        ]
    )
    skill = define_skill(id="refunds", description="How to issue refunds", body=SKILL_BODY, tools=[issue_refund])
    agent = Agent.create(provider=provider, model="m").system(SYSTEM).tool(noop).skill(skill).build()
    r = await agent.run("refund A-1")
    assert r.answer == "refunded"
    first, second, third = provider.requests
    assert "read_skill" in names(first)
    assert "issue_refund" not in names(first)
    assert SKILL_BODY not in first.system_prompt
    read_skill_spec = next(t for t in first.tools if t.name == "read_skill")
    assert "id" in read_skill_spec.input_schema.get("properties", {})
    assert second.system_prompt == f"{SYSTEM}\n\n{SKILL_BODY}"
    assert "issue_refund" in names(second) and "noop" in names(second)
    assert SKILL_BODY in third.system_prompt and "issue_refund" in names(third)
    assert refunds_issued == [{"orderId": "A-1"}]
    tool_msg = second.messages[-1]
    assert tool_msg.role == "tool" and tool_msg.tool_call_id == "s1" and tool_msg.tool_name == "read_skill"


async def test_skill_tool_called_before_activation_is_not_run() -> None:
    provider = mock(replies=[call("issue_refund", {"orderId": "A-1"}), "gave up"])
    skill = define_skill(id="refunds", description="How to issue refunds", body=SKILL_BODY, tools=[issue_refund])
    agent = Agent.create(provider=provider, model="m").skill(skill).build()
    r = await agent.run("refund")
    assert r.answer == "gave up"
    content = provider.requests[1].messages[-1].content
    assert content.lower().startswith("error")
    assert refunds_issued == [], "a skill's tool ran before the skill was activated"


async def test_read_skill_with_unknown_id_is_an_error_result() -> None:
    provider = mock(replies=[call("read_skill", {"id": "nope"}), "ok"])
    skill = define_skill(id="refunds", description="How to issue refunds", body=SKILL_BODY, tools=[issue_refund])
    agent = Agent.create(provider=provider, model="m").system(SYSTEM).skill(skill).build()
    assert (await agent.run("go")).answer == "ok"
    assert SKILL_BODY not in provider.requests[1].system_prompt
    assert "issue_refund" not in names(provider.requests[1])


async def test_agent_without_skills_offers_no_read_skill() -> None:
    provider = mock(reply="ok")
    await Agent.create(provider=provider, model="m").tool(noop).build().run("go")
    assert names(provider.requests[0]) == ["noop"]


async def test_skill_activation_does_not_leak_into_the_next_run() -> None:
    provider = mock(replies=[call("read_skill", {"id": "refunds"}), "a", "b"])
    skill = define_skill(id="refunds", description="How to issue refunds", body=SKILL_BODY, tools=[issue_refund])
    agent = Agent.create(provider=provider, model="m").system(SYSTEM).skill(skill).build()
    await agent.run("one")
    await agent.run("two")
    assert SKILL_BODY not in provider.requests[2].system_prompt
    assert "issue_refund" not in names(provider.requests[2])


# ------------------------------------------------------------------------------------------ without()


def _ablatable(provider: Any) -> Agent:
    return (
        Agent.create(provider=provider, model="m")
        .system(SYSTEM)
        .tool(lookup_order)
        .tool(noop)
        .fact(define_fact(id="vip-fact", data=FACT))
        .steering(define_steering(id="steer", prompt=STEER))
        .build()
    )


async def test_without_fact_removes_it_from_the_system_prompt_only() -> None:
    provider = mock(reply="ok")
    full = _ablatable(provider)
    ablated = full.without("vip-fact")
    assert isinstance(ablated, Agent) and ablated is not full
    await ablated.run("go")
    await full.run("go")
    assert provider.requests[0].system_prompt == f"{SYSTEM}\n\n{STEER}"
    assert provider.requests[1].system_prompt == f"{SYSTEM}\n\n{FACT}\n\n{STEER}"  # the original is untouched
    assert names(provider.requests[0]) == names(provider.requests[1]) == ["lookup_order", "noop"]


async def test_without_tool_removes_it_from_llm_request_tools() -> None:
    provider = mock(reply="ok")
    ablated = _ablatable(provider).without("lookup_order")
    await ablated.run("go")
    assert names(provider.requests[0]) == ["noop"]
    assert FACT in provider.requests[0].system_prompt


async def test_ablated_tool_called_anyway_is_an_unknown_tool_error_and_never_runs() -> None:
    provider = mock(replies=[call("lookup_order", {"orderId": "A-1"}), "ok"])
    r = await _ablatable(provider).without("lookup_order").run("go")
    assert r.answer == "ok"
    assert provider.requests[1].messages[-1].content.lower().startswith("error")
    assert lookup_calls == []


async def test_without_several_ids_at_once() -> None:
    provider = mock(reply="ok")
    await _ablatable(provider).without("lookup_order", "vip-fact", "steer").run("go")
    assert provider.requests[0].system_prompt == SYSTEM
    assert names(provider.requests[0]) == ["noop"]


async def test_without_skill_removes_read_skill_and_body() -> None:
    provider = mock(reply="ok")
    skill = define_skill(id="refunds", description="How to issue refunds", body=SKILL_BODY, tools=[issue_refund])
    agent = Agent.create(provider=provider, model="m").system(SYSTEM).tool(noop).skill(skill).build()
    await agent.without("refunds").run("go")
    assert "read_skill" not in names(provider.requests[0])


def test_without_unknown_id_is_a_typed_error_naming_it() -> None:
    agent = _ablatable(mock(reply="ok"))
    with pytest.raises(UnknownSourceError) as info:
        agent.without("no-such-fact")
    assert isinstance(info.value, AgentFootprintError)
    assert "no-such-fact" in str(info.value)
    with pytest.raises(UnknownSourceError):
        agent.without("vip-fact", "typo")


# ------------------------------------------------------------------------------------------ output_schema


class Line(BaseModel):
    sku: str
    qty: int


class Verdict(BaseModel):
    approved: bool
    reason: str
    lines: list[Line] = []


def _typed(provider: Any, retries: int = 0) -> Agent:
    return Agent.create(provider=provider, model="m").system(SYSTEM).output_schema(Verdict, retries=retries).build()


async def test_run_typed_returns_the_model_instance() -> None:
    provider = mock(reply='{"approved": false, "reason": "47 days", "lines": [{"sku": "L-1", "qty": 1}]}')
    got = await _typed(provider).run_typed("Refund A-1001?")
    assert isinstance(got, Verdict)
    assert got == Verdict(approved=False, reason="47 days", lines=[Line(sku="L-1", qty=1)])


def test_run_typed_sync_twin() -> None:
    got = _typed(mock(reply='{"approved": true, "reason": "ok"}')).run_typed_sync("go")
    assert isinstance(got, Verdict) and got.approved is True


@pytest.mark.parametrize(
    ("reply", "path"),
    [
        ('{"approved": "perhaps", "reason": "x"}', "approved"),
        ('{"approved": true}', "reason"),
        ('{"approved": true, "reason": "x", "lines": [{"sku": "a", "qty": "many"}]}', "lines.0.qty"),
    ],
)
async def test_run_typed_failure_names_the_path(reply: str, path: str) -> None:
    with pytest.raises(OutputSchemaError) as info:
        await _typed(mock(reply=reply)).run_typed("go")
    err = info.value
    assert path in str(err)
    assert any(i["path"] == path for i in err.issues)
    assert "perhaps" not in str(err) and "many" not in str(err)  # never quotes the rejected value


async def test_run_typed_not_json_is_a_schema_error() -> None:
    with pytest.raises(OutputSchemaError):
        await _typed(mock(reply="I think yes")).run_typed("go")


async def test_run_typed_retry_gets_a_second_chance() -> None:
    provider = mock(replies=['{"approved": "perhaps"}', '{"approved": true, "reason": "fine"}'])
    got = await _typed(provider, retries=1).run_typed("go")
    assert got == Verdict(approved=True, reason="fine")
    assert provider.calls == 2
    retry_msg = provider.requests[1].messages[-1].content
    assert "approved" in retry_msg and "reason" in retry_msg


async def test_run_typed_without_schema_is_refused_before_any_call() -> None:
    provider = mock(reply="{}")
    with pytest.raises(AgentFootprintError):
        await Agent.create(provider=provider, model="m").build().run_typed("go")
    assert provider.calls == 0
