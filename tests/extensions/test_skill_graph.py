"""Skill graph: a cursor over declared skills, the read_skill menu rebuilt from the reachable set, the cursor carried
by continuity='conversation', and the declared map filed once per run."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentfootprint import Agent, define_skill
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.context import InvalidInjectionError
from agentfootprint.context.skill_graph import skill_graph
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock

TRIAGE = define_skill(id="triage", description="Work out what the customer needs", body="Ask what happened.")
REFUNDS = define_skill(id="refunds", description="Refund a purchase", body="Refunds within 30 days.")
BILLING = define_skill(id="billing", description="Explain a charge", body="Read the invoice.")
GRAPH = skill_graph(
    skills=[TRIAGE, REFUNDS, BILLING],
    edges={"triage": ["refunds", "billing"], "billing": ["refunds"]},
    rules=[("refunds", re.compile(r"refund|money back", re.I)), ("billing", ["charge", "invoice"])],
    start="triage",
)


def menu(request: LLMRequest) -> list[str]:
    spec = next((t for t in request.tools if t.name == "read_skill"), None)
    return list(spec.input_schema["properties"]["id"]["enum"]) if spec else []


def read(skill: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": f"r-{skill}", "name": "read_skill", "args": {"id": skill}}]}


def build(provider: Any, continuity: str = "turn") -> Agent:
    return Agent.create(provider=provider, model="m").skill_graph(GRAPH, continuity=continuity).build()  # type: ignore[arg-type]


async def test_R004_117_the_read_skill_menu_is_rebuilt_from_the_skills_reachable_from_the_cursor() -> None:
    """R004-117: the turn starts where the start rules say; the menu follows the cursor as it moves."""
    provider = mock(replies=[read("billing"), read("refunds"), "Refunded."])
    agent = build(provider)
    assert (await agent.run("Why is there a charge on my card?")).answer == "Refunded."
    assert [menu(r) for r in provider.requests] == [["refunds", "billing"], ["refunds", "billing"], ["refunds"]]
    state = agent.last_snapshot().state  # type: ignore[union-attr]
    assert state["skill_cursor"] == "refunds"
    assert [(m["from"], m["to"], m["by"]) for m in state["skill_moves"]] == [
        (None, "billing", "start-rule"),
        ("billing", "refunds", "model-pick"),
    ]
    assert state["skill_moves"][0]["witness"] == "charge"


async def test_R004_117_a_skill_not_reachable_from_the_cursor_is_refused() -> None:
    """R004-117: the gate and the menu agree: an off-menu pick is an error result, the cursor stays."""
    provider = mock(replies=[read("triage"), "ok"])
    agent = build(provider)
    await agent.run("I want my money back")
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert results[0]["is_error"] and results[0]["error_code"] == "ERR_SKILL_UNREACHABLE"
    assert "Available skills: refunds." in results[0]["content"]
    assert agent.last_snapshot().state["skill_cursor"] == "refunds"  # type: ignore[union-attr]


async def test_R004_117_continuity_conversation_carries_the_cursor_on_checkpoint() -> None:
    """R004-117: with continuity='conversation' the next turn starts where the last one ended; 'turn' restarts."""
    provider = mock(replies=[read("billing"), "Here is the invoice.", "ok", "ok"])
    agent = build(provider, continuity="conversation")
    await agent.run("Explain this invoice")
    conversation = agent.checkpoint()
    assert conversation is not None and conversation["extensions"]["skill_graph"] == {"cursor": "billing"}
    await agent.follow_up("And what about it?")
    assert menu(provider.requests[-1]) == ["refunds", "billing"]
    moves = agent.last_snapshot().state["skill_moves"]  # type: ignore[union-attr]
    assert moves == [{"iteration": 0, "from": None, "to": "billing", "by": "resume"}]
    per_turn = build(mock(replies=["ok", "ok"]))
    await per_turn.run("Explain this invoice")
    assert "extensions" not in (per_turn.checkpoint() or {}) or "skill_graph" not in per_turn.checkpoint()["extensions"]  # type: ignore[index]
    stale = {**(agent.checkpoint() or {}), "extensions": {"skill_graph": {"cursor": "retired-skill"}}}
    fresh = build(mock(reply="ok"), continuity="conversation")
    await fresh.run("hello", continue_from=stale)
    first = fresh.last_snapshot().state["skill_moves"][0]  # type: ignore[union-attr]
    assert (first["to"], first["by"], first["dropped_resume"]) == ("triage", "default", "retired-skill")


async def test_R004_13_graph_declared_is_filed_once_per_run_with_the_declared_map() -> None:
    """R004-13: agentfootprint.skill.graph_declared, once per run, the author's nodes and edges verbatim."""
    agent = build(mock(replies=["ok", "ok"]))
    seen: list[AgentEvent] = []
    agent.on("skill.graph_declared", seen.append)
    await agent.run("hi")
    await agent.run("hi again")
    assert len(seen) == 2 and seen[0].meta.run_id != seen[1].meta.run_id
    assert seen[0].payload["nodes"] == ["triage", "refunds", "billing"]
    assert seen[0].payload["edges"] == [
        {"from": "triage", "to": "refunds"},
        {"from": "triage", "to": "billing"},
        {"from": "billing", "to": "refunds"},
    ]
    assert seen[0].payload["start"] == "triage" and seen[0].payload["continuity"] == "turn"
    plain = Agent.create(provider=mock(reply="ok"), model="m").skill(TRIAGE).build()
    none: list[AgentEvent] = []
    plain.on("skill.graph_declared", none.append)
    await plain.run("hi")
    assert none == []


def test_the_graph_is_checked_at_build_and_draws_itself() -> None:
    with pytest.raises(InvalidInjectionError, match="does not have: nope"):
        skill_graph(skills=[TRIAGE], edges={"triage": ["nope"]})
    with pytest.raises(InvalidInjectionError, match="define_skill"):
        skill_graph(skills=["triage"])  # type: ignore[list-item]
    with pytest.raises(InvalidInjectionError, match="start rule"):
        skill_graph(skills=[TRIAGE], rules=[("triage", 42)])
    with pytest.raises(AgentBuildError, match="continuity"):
        Agent.create(provider=mock(reply="x")).skill_graph(GRAPH, continuity="forever")  # type: ignore[arg-type]
    assert GRAPH.to_mermaid().splitlines()[2:5] == [
        '  n_triage["triage"]',
        '  n_refunds["refunds"]',
        '  n_billing["billing"]',
    ]
    assert "__start__ -->|charge, invoice| n_billing" in GRAPH.to_mermaid()
