"""backtrack: exactly the context that reached the call, each with ANSWER ← READ ← LANDED ← ALLOWED ← BORN."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Agent, define_fact, define_instruction, define_skill, define_tool
from agentfootprint._flagship import PLANTED, QUESTION, STYLE, SYSTEM, refunds_agent
from agentfootprint.explain import BacktrackError, backtrack, load_recording, save_recording
from agentfootprint.providers import LLMRequest, mock


async def flagship() -> Agent:
    agent = refunds_agent()
    await agent.run(QUESTION)
    return agent


async def test_flagship_sources_and_chains() -> None:
    agent = await flagship()
    bt = backtrack(agent)
    assert "APPROVED" in (bt.answer or "")
    assert bt.trigger == "call-llm#12"
    assert [(s.kind, s.id) for s in bt.sources] == [
        ("system", "system"),
        ("fact", "vip-override-fact"),
        ("fact", "style-fact"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "lookup_order"),
    ]
    vip = bt.source("vip-override-fact")
    assert vip is not None and vip.text == PLANTED
    assert [h.kind for h in vip.hops] == ["answer", "read", "landed", "allowed", "born"]
    read, landed, allowed, born = vip.hops[1:]
    assert read.runtime_stage_id == bt.trigger
    assert landed.runtime_stage_id == "system-prompt#2"
    assert allowed.detail == "always" and allowed.runtime_stage_id == "injection-engine#1"
    assert born.detail == "define_fact('vip-override-fact')" and born.runtime_stage_id is None
    tool = bt.source("lookup_order")
    assert tool is not None and tool.kind == "tool" and "47 days" in tool.text
    assert tool.hops[2].runtime_stage_id.startswith("tool-calls#")  # type: ignore[union-attr]
    assert 'orderId="A-1001"' in tool.hops[-1].detail and "call t1" in tool.hops[-1].detail


async def test_landed_is_the_commit_that_wrote_the_slot_value_read() -> None:
    agent = await flagship()
    bt = backtrack(agent)
    snap = agent.last_snapshot()
    assert snap is not None
    call = snap.commit(bt.trigger)
    assert call is not None
    landed_rid = bt.source("style-fact").hops[2].runtime_stage_id  # type: ignore[union-attr]
    assert snap.commit_log[call.reads["system_prompt"]].runtime_stage_id == landed_rid


async def test_nothing_missing_nothing_extra() -> None:
    """The system-prompt sources reassemble exactly the prompt the model saw."""
    seen: list[LLMRequest] = []
    from agentfootprint._flagship import scripted_model

    def spy(req: LLMRequest) -> Any:
        seen.append(req)
        return scripted_model(req)

    agent = refunds_agent(mock(respond=spy))
    await agent.run(QUESTION)
    bt = backtrack(agent)
    prompt = "\n\n".join(s.text for s in bt.sources if s.slot == "system_prompt")
    assert prompt == seen[-1].system_prompt == f"{SYSTEM}\n\n{PLANTED}\n\n{STYLE}"
    history = [s for s in bt.sources if s.slot == "messages"]
    assert len(history) == len(seen[-1].messages)


async def test_on_tool_return_instruction_shows_its_trigger() -> None:
    search = define_tool(
        name="search_docs",
        description="Search",
        input_schema={"type": "object"},
        execute=lambda a, c: "doc: refunds need a receipt",
    )
    provider = mock(replies=[{"tool_calls": [{"id": "s1", "name": "search_docs", "args": {}}]}, "Need a receipt."])
    agent = (
        Agent.create(provider=provider, model="m")
        .tool(search)
        .instruction(
            define_instruction(id="cite-docs", prompt="Cite the document you used.", on_tool_return="search_docs")
        )
        .build()
    )
    await agent.run("Do refunds need a receipt?")
    assert "Cite the document" not in provider.requests[0].system_prompt
    assert "Cite the document" in provider.requests[1].system_prompt
    trail = backtrack(agent).source("cite-docs")
    assert trail is not None
    allowed = trail.hops[3]
    assert allowed.kind == "allowed" and allowed.detail == "on-tool-return search_docs"


async def test_rule_and_skill_triggers_in_allowed_hop() -> None:
    provider = mock(
        replies=[
            {"tool_calls": [{"id": "r1", "name": "read_skill", "args": {"id": "returns"}}]},
            "Use the returns form.",
        ]
    )
    agent = (
        Agent.create(provider=provider, model="m")
        .fact(define_fact(id="vip-rule", data="VIP customer.", active_when=lambda ctx: "vip" in ctx.user_message))
        .skill(define_skill(id="returns", description="How to process returns", body="Use the returns form."))
        .build()
    )
    await agent.run("vip asks about returns")
    bt = backtrack(agent)
    assert bt.source("vip-rule").hops[3].detail == "rule"  # type: ignore[union-attr]
    assert bt.source("returns").hops[3].detail == "llm-activated"  # type: ignore[union-attr]


async def test_backtrack_at_a_mid_run_step() -> None:
    agent = await flagship()
    bt = backtrack(agent, at="route#6")
    assert bt.trigger == "call-llm#5"
    assert not any(s.kind == "tool" and s.slot == "messages" for s in bt.sources)
    with pytest.raises(BacktrackError):
        backtrack(agent, at="nowhere#99")


async def test_sources_are_a_pure_function_of_the_recording(tmp_path: Any) -> None:
    a1, a2 = await flagship(), await flagship()
    ids1 = [(s.kind, s.id, s.text) for s in backtrack(a1).sources]
    ids2 = [(s.kind, s.id, s.text) for s in backtrack(a2).sources]
    assert ids1 == ids2
    for suffix in ("json", "sqlite"):
        path = save_recording(a1, tmp_path / f"run.{suffix}")
        rec = load_recording(path)
        again = backtrack(rec)
        assert [(s.kind, s.id, s.text) for s in again.sources] == ids1
        assert again.to_json() == backtrack(a1).to_json()


async def test_str_and_json() -> None:
    bt = backtrack(await flagship())
    text = str(bt)
    for word in ("ANSWER", "READ", "LANDED", "ALLOWED", "BORN", "vip-override-fact"):
        assert word in text
    assert json.loads(json.dumps(bt.to_json()))["trigger"] == bt.trigger


def test_backtrack_refuses_nothing_to_explain() -> None:
    agent = refunds_agent()
    with pytest.raises(BacktrackError, match="run it first"):
        backtrack(agent)
    with pytest.raises(BacktrackError):
        backtrack(42)
