"""R004-129: ``.maps()`` declares what the agent may conclude from what; recorded and checked like the other
declared structure (names checked at build, the maps and each check recorded, a violation is a finding)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, AgentBuildError, define_tool
from agentfootprint.explain import find_context_errors
from agentfootprint.extensions import Integrity
from agentfootprint.providers import mock

MAPS = {"refund_due": {"from": ["get_order", "refund_policy"], "says": ["refund is due", "you will be refunded"]}}


def _tool(name: str, result: str = "ok") -> Any:
    return define_tool(
        name=name, description=name, input_schema={"type": "object", "properties": {}}, execute=lambda a: result
    )


def _agent(replies: list[Any], maps: Any = MAPS) -> Agent:
    return (
        Agent.create(provider=mock(replies=replies))
        .tool(_tool("get_order", "order A-17 late"))
        .tool(_tool("refund_policy", "late orders are refunded"))
        .maps(maps)
        .build()
    )


def _call(*names: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": f"c{i}", "name": n, "args": {}} for i, n in enumerate(names)]}


async def test_R004_129_a_conclusion_drawn_without_its_evidence_is_a_finding() -> None:
    """R004-129 (.maps): the answer concludes 'refund is due' having read only the order: unmapped-conclusion."""
    agent = _agent([_call("get_order"), "Your order is late, so a refund is due."])
    result = await agent.run("refund?")
    found = find_context_errors(result)
    assert [(e.kind, e.source_id) for e in found] == [("unmapped-conclusion", "refund_due")]
    state = result.record.snapshot.state
    assert state["maps"] == {
        "refund_due": {"from": ["get_order", "refund_policy"], "says": list(MAPS["refund_due"]["says"])}
    }
    assert state["map_checks"] == [{"conclusion": "refund_due", "verdict": "unmapped", "missing": ["refund_policy"]}]


async def test_R004_129_a_conclusion_drawn_from_its_evidence_is_clean() -> None:
    """R004-129 (.maps): clean control: both mapped tools answered, the conclusion is mapped."""
    result = await _agent([_call("get_order", "refund_policy"), "You will be refunded."]).run("refund?")
    assert find_context_errors(result) == []
    assert result.record.snapshot.state["map_checks"][0]["verdict"] == "mapped"
    rows = {r["check"]: r for r in result.extensions["integrity"]["disposition"]}
    assert (rows["unmapped-conclusion"]["checked"], rows["unmapped-conclusion"]["findings"]) == (1, 0)


async def test_R004_129_an_answer_drawing_no_conclusion_is_not_applicable() -> None:
    """R004-129 (.maps): nothing concluded, nothing checked (not-applicable row)."""
    result = await _agent(["Let me look into it."]).run("refund?")
    assert find_context_errors(result) == []
    row = {r["check"]: r for r in result.extensions["integrity"]["disposition"]}["unmapped-conclusion"]
    assert row["disposition"] == "not-applicable"


def test_R004_129_maps_naming_a_tool_the_agent_lacks_is_refused_at_build() -> None:
    """R004-129 (.maps): a map drawn from a tool the agent does not have is refused by code at build."""
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x")).tool(_tool("get_order")).maps(MAPS).build()
    assert info.value.code == "ERR_MAPS" and "refund_due" in str(info.value)


@pytest.mark.parametrize(
    "spec",
    [
        {},
        "refund",
        {"refund due!": {"from": ["get_order"], "says": ["x"]}},
        {"r": {"from": "get_order", "says": ["x"]}},
        {"r": {"from": ["get_order"], "says": []}},
        {"r": {"from": ["get_order"], "says": ["x"], "extra": 1}},
        {"r": {"from": ["bad name!"], "says": ["x"]}},
        {"r": ["get_order"]},
    ],
)
def test_R004_129_malformed_maps_are_refused_without_quoting_them(spec: Any) -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x")).maps(spec)
    assert info.value.code == "ERR_MAPS" and "bad name" not in str(info.value) and "refund due" not in str(info.value)


async def test_R004_129_maps_then_integrity_keeps_both() -> None:
    agent = (
        Agent.create(provider=mock(replies=[_call("get_order"), "A refund is due."]))
        .tool(_tool("get_order"))
        .tool(_tool("refund_policy"))
        .maps(MAPS)
        .integrity(notice_empty_lookups=True)
        .build()
    )
    ledger = agent.extension(Integrity)
    assert ledger is not None and ledger.notice_empty is True and ledger.maps is not None
    assert find_context_errors(await agent.run("refund?")).kinds() == ["unmapped-conclusion"]


@settings(max_examples=25, deadline=None)
@given(st.sets(st.sampled_from(["get_order", "refund_policy"])), st.booleans())
async def test_R004_129_found_exactly_when_a_drawn_conclusion_lacks_a_tool(called: set[str], concludes: bool) -> None:
    replies: list[Any] = [_call(*sorted(called))] if called else []
    replies.append("A refund is due." if concludes else "Looking.")
    found = find_context_errors(await _agent(replies).run("refund?"))
    expected = ["unmapped-conclusion"] if concludes and called != {"get_order", "refund_policy"} else []
    assert found.kinds() == expected
