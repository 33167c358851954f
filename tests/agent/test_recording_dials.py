"""Recording dials on the agent (R004-135): Agent.create(read_tracking=, commit_values=, write_provenance=) reach
every commit of a run and of a resumed leg; explanation works in every setting; bad values are refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.explain import backtrack
from agentfootprint.flow import Commit
from agentfootprint.providers import LLMResponse, ToolCall, mock


def agent_with(**dials: Any) -> Agent:
    lookup = define_tool(
        name="lookup",
        description="Look up an order.",
        input_schema={"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
        execute=lambda args, ctx: f"order {args['order']}: paid",
    )
    replies = [
        LLMResponse(content="", tool_calls=[ToolCall(id="c1", name="lookup", args={"order": "A7"})]),
        LLMResponse(content="Order A7 is paid."),
    ]
    return (
        Agent.create(provider=mock(replies=replies), model="m", **dials)
        .system("You answer order questions.")
        .fact(define_fact(id="policy", data="Refunds take five days."))
        .tool(lookup)
        .build()
    )


def commits(agent: Agent) -> list[Commit]:
    snap = agent.last_snapshot()
    assert snap is not None
    return snap.commit_log


async def test_R004_135_agent_defaults_are_summary_reads_delta_values_and_no_provenance() -> None:
    """R004-135: readTracking 'summary', commitValues 'delta', writeProvenance 'off' by default on the agent."""
    agent = agent_with()
    await agent.run("Is order A7 paid?")
    log = commits(agent)
    assert all(c.read_values is None for c in log)
    assert all(w.read_keys is None for c in log for w in c.writes)
    assert any(w.path == "history" and w.verb == "append" for c in log for w in c.writes)


async def test_R004_135_agent_full_dials_reach_every_commit_and_backtrack_still_walks_to_the_sources() -> None:
    """R004-135: the three dials set on Agent.create change what each commit keeps, not what the run does."""
    plain, full = agent_with(), agent_with(read_tracking="full", commit_values="full", write_provenance="reads-prefix")
    a, b = await plain.run("Is order A7 paid?"), await full.run("Is order A7 paid?")
    assert a.answer == b.answer == "Order A7 is paid."
    log = commits(full)
    assert all(c.read_values is not None and set(c.read_values) <= set(c.reads) for c in log)
    assert all(w.verb in ("set", "delete") and w.read_keys is not None for c in log for w in c.writes)
    history = [w for c in log for w in c.writes if w.path == "history"]
    assert history and [m["role"] for m in history[-1].value] == ["user", "assistant", "tool"]
    assert [c.stage_id for c in log] == [c.stage_id for c in commits(plain)]

    def trails(agent: Agent) -> dict[str, list[tuple[str, str | None, str]]]:
        return {s.id: [(h.kind, h.runtime_stage_id, h.detail) for h in s.hops] for s in backtrack(agent).sources}

    sources = trails(full)
    assert sources == trails(plain)
    assert "policy" in sources and len(sources) >= 4


async def test_R004_135_write_provenance_names_what_the_model_call_read_before_it_wrote_the_reply() -> None:
    agent = agent_with(write_provenance="reads-prefix")
    await agent.run("Is order A7 paid?")
    call = next(c for c in commits(agent) if c.stage_id == "call-llm")
    written = {w.path: w.read_keys for w in call.writes}
    assert written and all(keys is not None and set(keys) <= set(call.reads) for keys in written.values())
    assert any("system_prompt" in (keys or ()) for keys in written.values())


@pytest.mark.parametrize(
    ("dial", "value"),
    [
        ("read_tracking", "off"),
        ("read_tracking", None),
        ("commit_values", "FULL"),
        ("write_provenance", True),
        ("write_provenance", "on\nsecret"),
    ],
)
def test_bad_dial_values_are_refused_by_name_without_quoting_the_value(dial: str, value: Any) -> None:
    with pytest.raises(AgentBuildError) as err:
        Agent.create(provider=mock(reply="x"), **{dial: value})
    assert str(err.value).startswith(f"{dial} must be one of ") and "secret" not in str(err.value)
    assert err.value.code == "ERR_AGENT_BUILD"
