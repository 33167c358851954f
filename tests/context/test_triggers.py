"""Each trigger kind fires exactly when it should; read_skill refusals; scoped skill tools; without(); records."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, UnknownSourceError, define_fact, define_instruction, define_skill, define_steering
from agentfootprint.context import InjectionContext, ToolReturn
from agentfootprint.context.evaluate import evaluate_injections
from agentfootprint.providers import LLMRequest, mock

from ._support import call, records_per_call, text_tool

STEER = "Steering: answer in English."
LATE = "Fact: this is a later iteration."
AFTER_LOOKUP = "Instruction: quote the order you just looked up."
SKILL_BODY = "Skill body: refunds go through issue_refund."

lookup = text_tool("lookup", "Order A-1: 47 days old.")
issue_refund = text_tool("issue_refund", "refunded")


def is_late(ctx: InjectionContext) -> bool:
    return ctx.iteration >= 2


def scenario_agent(replies: list[Any]) -> tuple[Agent, Any]:
    provider = mock(replies=replies)
    agent = (
        Agent.create(provider=provider, model="m", max_iterations=6)
        .system("You are a refunds assistant.")
        .tool(lookup)
        .steering(define_steering(id="steer", prompt=STEER))
        .fact(define_fact(id="late", data=LATE, active_when=is_late))
        .instruction(define_instruction(id="after-lookup", prompt=AFTER_LOOKUP, on_tool_return="lookup"))
        .skill(define_skill(id="refunds", description="How to refund", body=SKILL_BODY, tools=[issue_refund]))
        .build()
    )
    return agent, provider


# ------------------------------------------------------------------------------------------ scenario


async def test_each_trigger_kind_fires_exactly_on_its_iterations() -> None:
    agent, provider = scenario_agent([call("lookup"), call("read_skill", {"id": "refunds"}), "done"])
    result = await agent.run("Refund A-1?")
    assert result.answer == "done"
    prompts = [r.system_prompt for r in provider.requests]
    assert len(prompts) == 3
    assert all(STEER in p for p in prompts)  # always
    assert [LATE in p for p in prompts] == [False, True, True]  # rule: iteration >= 2
    assert [AFTER_LOOKUP in p for p in prompts] == [False, True, False]  # right after lookup returned only
    assert [SKILL_BODY in p for p in prompts] == [False, False, True]  # llm-activated, from the next call on
    triggers = {
        r["source_id"]: r["trigger"] for recs in records_per_call(agent, "system_prompt_injections") for r in recs
    }
    assert triggers == {
        "system": "always",
        "steer": "always",
        "late": "rule is_late",
        "after-lookup": "on-tool-return lookup",
        "refunds": "llm-activated",
    }


async def test_scoped_skill_tools_are_offered_only_while_the_skill_is_active() -> None:
    agent, provider = scenario_agent([call("read_skill", {"id": "refunds"}), "done", "again"])
    await agent.run("Refund A-1?")
    offered = [[t.name for t in r.tools] for r in provider.requests]
    assert "issue_refund" not in offered[0]
    assert "read_skill" in offered[0]
    assert "issue_refund" in offered[1]
    await agent.run("A new conversation")  # activation does not outlive its turn
    assert "issue_refund" not in [t.name for t in provider.requests[2].tools]


async def test_read_skill_of_an_unknown_skill_is_refused_and_recorded() -> None:
    agent, provider = scenario_agent([call("read_skill", {"id": "no-such-skill"}), "done"])
    await agent.run("Refund A-1?")
    tool_message = provider.requests[1].messages[-1]
    assert tool_message.role == "tool"
    assert tool_message.content.startswith("Error: unknown skill")
    assert SKILL_BODY not in provider.requests[1].system_prompt
    assert "issue_refund" not in [t.name for t in provider.requests[1].tools]
    snap = agent.last_snapshot()
    assert snap is not None
    results = [r for w in (c.writes for c in snap.commit_log) for x in w if x.path == "tool_results" for r in x.value]
    refused = [r for r in results if r["name"] == "read_skill"]
    assert refused and refused[0]["is_error"] is True
    assert refused[0]["error_code"] == "ERR_UNKNOWN_SKILL"
    assert snap.state["activated_skills"] == []


# ------------------------------------------------------------------------------------------ property

tool_names = st.sampled_from(["lookup", "lookup_v2", "search", "issue_refund"])


@settings(max_examples=200, deadline=None)
@given(
    message=st.text(max_size=30),
    iteration=st.integers(min_value=1, max_value=12),
    returned=st.lists(tool_names, max_size=3),
    activated=st.lists(st.sampled_from(["refunds", "shipping"]), max_size=2, unique=True),
)
def test_property_each_trigger_is_active_exactly_when_its_condition_holds(
    message: str, iteration: int, returned: list[str], activated: list[str]
) -> None:
    injections = [
        define_steering(id="always", prompt="A"),
        define_fact(id="rule", data="R", active_when=lambda ctx: "refund" in ctx.user_message and ctx.iteration > 3),
        define_instruction(id="tool-exact", prompt="T", on_tool_return="lookup"),
        define_instruction(id="tool-regex", prompt="X", on_tool_return=re.compile(r"lookup.*")),
        define_skill(id="refunds", description="d", body="S"),
        define_skill(id="shipping", description="d", body="H"),
    ]
    ctx = InjectionContext(
        user_message=message,
        iteration=iteration,
        last_tool_results=tuple(ToolReturn(name=n, call_id=f"c{i}", content="") for i, n in enumerate(returned)),
        activated_skills=tuple(activated),
    )
    result = evaluate_injections(injections, ctx, "base", {})
    expected = ["always"]
    if "refund" in message and iteration > 3:
        expected.append("rule")
    if "lookup" in returned:
        expected.append("tool-exact")
    if any(n.startswith("lookup") for n in returned):
        expected.append("tool-regex")
    expected += [s for s in ("refunds", "shipping") if s in activated]
    assert result["summary"]["active_ids"] == expected  # exactly these, in declaration order
    landed = [r["source_id"] for r in result["system_prompt"]]
    assert landed == ["system", *expected]
    for record in result["system_prompt"]:
        assert record["since_iteration"] == iteration
        assert record["trigger"] and record["reason"]


# ------------------------------------------------------------------------------------------ records and without()


async def test_commit_log_names_source_and_trigger_for_every_injected_text() -> None:
    agent, provider = scenario_agent([call("lookup"), call("read_skill", {"id": "refunds"}), "done"])
    await agent.run("Refund A-1?")
    per_call = records_per_call(agent, "system_prompt_injections")
    assert len(per_call) == len(provider.requests)
    for records, request in zip(per_call, provider.requests, strict=True):
        assert all(r.get("source_id") and r.get("trigger") and r.get("source") for r in records)
        # the request's system prompt is exactly the recorded texts: nothing landed without a record
        assert request.system_prompt == "\n\n".join(r["text"] for r in records)


async def test_messages_slot_injections_are_recorded_with_role_and_kept_out_of_history() -> None:
    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m")
        .fact(define_fact(id="note", data="Injected note.", slot="messages", role="assistant"))
        .build()
    )
    await agent.run("hi")
    request: LLMRequest = provider.requests[0]
    assert [(m.role, m.content) for m in request.messages] == [("assistant", "Injected note."), ("user", "hi")]
    records = records_per_call(agent, "message_injections")[0]
    assert records[0]["source_id"] == "note" and records[0]["role"] == "assistant"
    snap = agent.last_snapshot()
    assert snap is not None
    assert all(m["content"] != "Injected note." for m in snap.state["history"])


async def test_without_leaves_the_original_agent_unchanged() -> None:
    agent, provider = scenario_agent(["a", "b", "c"])
    before = agent.config
    clone = agent.without("steer", "issue_refund")
    assert agent.config is before
    assert [i.id for i in agent.config.injections] == ["steer", "late", "after-lookup", "refunds"]
    assert [t.name for t in agent.config.skills[0].tools] == ["issue_refund"]
    assert [i.id for i in clone.config.injections] == ["late", "after-lookup", "refunds"]
    assert clone.config.skills[0].tools == ()
    assert clone.config.provider is agent.config.provider and clone.config.model == agent.config.model
    await agent.run("x")
    assert STEER in provider.requests[-1].system_prompt
    await clone.run("x")
    assert STEER not in provider.requests[-1].system_prompt
    await agent.run("x")
    assert STEER in provider.requests[-1].system_prompt
    with pytest.raises(UnknownSourceError, match="ghost"):
        agent.without("ghost")
