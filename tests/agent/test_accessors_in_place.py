"""The agent's accessors of the last run read its committed state in place: no copy of the whole final state is
made, and each hands out its own plain copy, equal to what the old path (a thawed copy of that state) gave."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint import Agent, define_tool
from agentfootprint.extensions import answer_check
from agentfootprint.flow._frozen import FrozenDict, FrozenList
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import absent

ACCESSORS = (
    "stopped_early",
    "findings",
    "answer_negatives",
    "answer_validation",
    "answer_coverage",
    "answer_standing",
    "claim_checks",
    "answer_script",
    "output_contract_unmet",
    "ablatable_ids",
)


def _tool(name: str, result: Any) -> Any:
    schema = {"type": "object", "properties": {"port": {"type": "string"}}}
    return define_tool(name=name, description=name, input_schema=schema, execute=lambda args, ctx: result)


def _call(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": cid, "name": name, "args": args}]}


def _frozen_inside(value: Any) -> bool:
    if isinstance(value, (FrozenDict, FrozenList)):
        return True
    if isinstance(value, BaseModel):
        return any(_frozen_inside(v) for v in value.__dict__.values())
    if isinstance(value, dict):
        return any(_frozen_inside(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_frozen_inside(v) for v in value)
    return False


def _read_all(agent: Agent) -> dict[str, Any]:
    return {name: getattr(agent, name)() for name in ACCESSORS}


def _check_in_place(agent: Agent) -> dict[str, Any]:
    """Every accessor: plain values only, no whole-state copy made, equal to the old path's answers."""
    flow = agent.last_flow()
    assert flow is not None
    new = _read_all(agent)
    assert flow._raw_state is None  # nothing thawed the whole final state
    assert [name for name, value in new.items() if _frozen_inside(value)] == []
    record = agent.last_record()
    assert record is not None
    record._raw = flow.raw_state  # the old path: every accessor reads a thawed copy of the whole state
    old = _read_all(agent)
    record._raw = flow.committed_state
    assert new == old
    return new


def _finding_model(req: LLMRequest) -> Any:
    calls = sum(1 for m in req.messages if m.role == "tool")
    if calls == 0:
        return _call("port_state", {"port": "7", "_basis": "is port 7 up?"}, "p1")
    if calls == 1:
        finding = {"tool_call_id": "p1", "standing": "fact", "assertions": [{"about": "port 7", "value": "down"}]}
        return _call("file_finding", finding, "f1")
    return "Port 7 is down."


async def test_findings_are_read_in_place_and_detached() -> None:
    agent = (
        Agent.create(provider=mock(respond=_finding_model), model="m", max_iterations=8)
        .tool(_tool("port_state", "down"))
        .findings()
        .build()
    )
    await agent.run("is port 7 up?")
    got = _check_in_place(agent)
    rows = got["findings"]
    assert [r["kind"] for r in rows] == ["basis", "standing"]
    tools = ("port_state", "file_finding")
    assert got["ablatable_ids"] == {**{t: "tool" for t in tools}, **{f"{t}#1": "tool" for t in tools}}
    rows[1]["assertions"][0]["value"] = "up"  # hostile: the caller edits what it received
    rows.clear()
    again = agent.findings()
    assert again is not None and again[1]["assertions"] == [{"about": "port 7", "value": "down"}]
    committed = agent.last_flow().committed_state()  # type: ignore[union-attr]
    assert committed["findings_ledger"][1]["assertions"][0]["value"] == "down"


async def test_negatives_validation_and_a_missing_contract_are_read_in_place() -> None:
    flogi = _tool("flogi", absent("FLOGI entries on port 7", checked=["the live fcns database"]))
    agent = (
        Agent.create(provider=mock(replies=[_call("flogi", {"port": "7"}, "c1"), "Nothing."]), model="m")
        .tool(flogi)
        .negative_claims()
        .answer_validation(answer_check("short", lambda v: len(v.answer) < 3))
        .build()
    )
    await agent.run("anything on port 7?")
    got = _check_in_place(agent)
    assert got["answer_negatives"] is not None and len(got["answer_negatives"].statements) == 1
    assert got["answer_validation"] is not None and got["answer_validation"].passed is False
    assert got["stopped_early"] is None and got["findings"] is None and got["output_contract_unmet"] is None


async def test_an_unmet_output_contract_is_read_in_place() -> None:
    class Answer(BaseModel):
        port: int

    agent = Agent.create(provider=mock(reply="not json"), model="m").output_schema(Answer).build()
    await agent.run("which port?")
    got = _check_in_place(agent)
    assert got["output_contract_unmet"] is not None


@settings(max_examples=15, deadline=None)
@given(max_iterations=st.integers(min_value=1, max_value=4), answer=st.sampled_from(["partial", "still checking"]))
def test_property_stopped_early_equals_the_old_path(max_iterations: int, answer: str) -> None:
    """A turn cut by max_iterations: stopped_early() read in place equals the thawed copy's, for any limit."""
    import asyncio

    def respond(req: LLMRequest) -> Any:
        done = sum(1 for m in req.messages if m.role == "tool")
        return {"content": answer, "tool_calls": [{"id": f"c{done}", "name": "look", "args": {"port": str(done)}}]}

    agent = (
        Agent.create(provider=mock(respond=respond), model="m", max_iterations=max_iterations)
        .tool(_tool("look", "RESULT"))
        .build()
    )
    asyncio.run(agent.run("go"))
    got = _check_in_place(agent)
    stopped = got["stopped_early"]
    assert stopped is not None and (stopped.reason, stopped.iteration) == ("max-iterations", max_iterations)
    assert got["ablatable_ids"] == {"look": "tool", **{f"look#{i}": "tool" for i in range(1, max_iterations)}}
