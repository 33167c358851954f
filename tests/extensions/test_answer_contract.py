"""Seed 004's answer family: findings() (R004-109), answer_negatives() (R004-110), answer_validation() (R004-111),
answer_coverage() with .limits_travel_with_the_answer() (R004-112) and the honesty layers (R004-128)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint import Agent, AgentBuildError
from agentfootprint.agent import AnswerCoverage, AnswerValidationError
from agentfootprint.extensions import answer_check, ask, assume
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import CoverageDeclarationError, absent, coverage, define_tool, period

SECRET = "kestrel-991-secret"


def _tool(name: str, result: Any, schema: dict[str, Any] | None = None) -> Any:
    return define_tool(
        name=name,
        description=name,
        input_schema=schema or {"type": "object", "properties": {"port": {"type": "string"}}},
        execute=lambda args, ctx: result(args) if callable(result) else result,
    )


def _script(*steps: Any) -> Any:
    """A model that calls the tools of ``steps`` one per call (a dict), then answers (a str)."""
    return mock(replies=list(steps))


def _call(name: str, args: dict[str, Any], cid: str = "c1") -> dict[str, Any]:
    return {"tool_calls": [{"id": cid, "name": name, "args": args}]}


HEALTH = _tool(
    "replication_health",
    coverage(
        {"healthy": True},
        checked=["SRDF pair state on all 4 arrays"],
        not_checked=[{"what": "NDM migration sessions", "why": "the API timed out"}],
        cannot_cover=[{"what": "host-side multipathing", "why": "no collector on the ESX hosts"}],
    ),
)
FLOGI = _tool(
    "flogi",
    absent(
        "FLOGI entries on port 7",
        checked=["the live fcns database"],
        cannot_cover=[{"what": "the peer fabric", "why": "this collector sees one fabric"}],
        try_instead="query the peer fabric by name",
    ),
)


# -- R004-112: limits travel with the answer --------------------------------------------------------------------
async def test_r004_112_prose_answer_gets_the_block_appended() -> None:
    agent = (
        Agent.create(provider=_script(_call("replication_health", {}), "Replication is healthy."), model="m")
        .tool(HEALTH)
        .limits_travel_with_the_answer()
        .build()
    )
    result = await agent.run("is replication healthy?")
    assert result.answer == (
        "Replication is healthy.\n\n---\n\n"
        "Coverage of this answer — declared by the tools that produced it, not by the model:\n\n"
        "Checked:\n- SRDF pair state on all 4 arrays\n\n"
        "Not checked:\n- NDM migration sessions — the API timed out\n\n"
        "Cannot cover:\n- host-side multipathing — no collector on the ESX hosts"
    )
    assert agent.answer_coverage() is None  # prose: the limits are in the answer string


class Verdict(BaseModel):
    healthy: bool


async def test_r004_112_typed_answer_gets_the_limits_as_data_and_stays_json() -> None:
    agent = (
        Agent.create(provider=_script(_call("replication_health", {}), '{"healthy": true}'), model="m")
        .tool(HEALTH)
        .tool(FLOGI)
        .output_schema(Verdict)
        .limits_travel_with_the_answer()
        .build()
    )
    assert await agent.run_typed("healthy?") == Verdict(healthy=True)
    limits = agent.answer_coverage()
    assert isinstance(limits, AnswerCoverage)
    assert [i.what for i in limits.cannot_cover] == ["host-side multipathing"]
    assert [i.why for i in limits.not_checked] == ["the API timed out"]
    limits.checked.clear()  # detached: the caller may mutate it
    assert [i.what for i in agent.answer_coverage().checked] == ["SRDF pair state on all 4 arrays"]  # type: ignore[union-attr]
    assert agent.last_snapshot().state["answer_coverage"]["cannot_cover"][0]["what"] == "host-side multipathing"  # type: ignore[union-attr]


async def test_r004_112_none_before_a_run_and_when_nothing_was_declared() -> None:
    agent = Agent.create(provider=mock(reply='{"healthy": true}'), model="m").output_schema(Verdict)
    built = agent.limits_travel_with_the_answer().build()
    assert built.answer_coverage() is None
    await built.run("x")
    assert built.answer_coverage() is None


async def test_r004_112_without_the_option_nothing_is_appended() -> None:
    agent = Agent.create(provider=_script(_call("replication_health", {}), "fine"), model="m").tool(HEALTH).build()
    assert (await agent.run("x")).answer == "fine"


def test_r004_112_declarations_that_say_nothing_are_refused_by_field() -> None:
    with pytest.raises(CoverageDeclarationError) as info:
        coverage(1)
    assert info.value.code == "ERR_COVERAGE_DECLARATION"
    with pytest.raises(CoverageDeclarationError) as info2:
        coverage(1, not_checked=[{"what": "x"}])
    assert info2.value.field == "not_checked"
    with pytest.raises(CoverageDeclarationError):
        absent("")
    with pytest.raises(CoverageDeclarationError):
        period(1, queried=("2024-02-01", "2024-01-01"), held=None)


@settings(max_examples=40, deadline=None)
@given(items=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=8))
def test_r004_112_property_duplicates_are_said_once_in_order(items: list[str]) -> None:
    from agentfootprint.extensions.answer_contract import coverage_block

    block = coverage_block([{"checked": [{"what": w}]} for w in items])
    assert block is not None
    listed = [line[2:] for line in block.split("Checked:\n")[1].splitlines()]
    assert listed == list(dict.fromkeys(items))


# -- R004-110: answer negatives ---------------------------------------------------------------------------------
async def test_r004_110_absent_becomes_a_negative_statement_with_its_limits() -> None:
    agent = (
        Agent.create(provider=_script(_call("flogi", {"port": "7"}), "Nothing logged in."), model="m")
        .tool(FLOGI)
        .negative_claims(append=True)
        .build()
    )
    result = await agent.run("anything on port 7?")
    negatives = agent.answer_negatives()
    assert negatives is not None and len(negatives.statements) == 1
    s = negatives.statements[0]
    assert s.statement == "Looked for FLOGI entries on port 7 in the live fcns database: none found."
    assert (s.tool_name, s.tool_call_id, s.try_instead) == ("flogi", "c1", "query the peer fabric by name")
    assert [i.what for i in s.cannot_cover] == ["the peer fabric"]
    assert result.answer is not None and result.answer.endswith(
        "Not found:\n- Looked for FLOGI entries on port 7 in the live fcns database: none found. "
        "(not covered: the peer fabric)"
    )


async def test_r004_110_none_without_an_absence_and_not_appended_by_default() -> None:
    agent = Agent.create(provider=_script(_call("flogi", {}), "none"), model="m").tool(FLOGI).negative_claims().build()
    assert agent.answer_negatives() is None
    assert (await agent.run("x")).answer == "none"
    assert agent.answer_negatives() is not None
    plain = Agent.create(provider=mock(reply="x"), model="m").negative_claims().build()
    await plain.run("x")
    assert plain.answer_negatives() is None


# -- R004-111: answer validation --------------------------------------------------------------------------------
def _cites_a_tool(view: Any) -> Any:
    return True if view.tool_results else "no tool result backs the answer"


async def test_r004_111_flag_posture_records_every_check_and_keeps_the_answer() -> None:
    agent = (
        Agent.create(provider=mock(reply="All good."), model="m")
        .answer_validation(answer_check("non_empty", lambda v: bool(v.answer.strip())), _cites_a_tool)
        .build()
    )
    assert agent.answer_validation() is None
    result = await agent.run("x")
    report = agent.answer_validation()
    assert result.answer == "All good."
    assert report is not None and report.passed is False and report.blocked is False
    assert [(c.id, c.passed, c.reason) for c in report.checks] == [
        ("non_empty", True, None),
        ("_cites_a_tool", False, "no tool result backs the answer"),
    ]


async def test_r004_111_block_posture_refuses_and_the_report_is_readable_in_the_catch() -> None:
    def raises(view: Any) -> bool:
        raise RuntimeError(SECRET)

    agent = Agent.create(provider=mock(reply="x"), model="m").answer_validation(raises, posture="block").build()
    with pytest.raises(AnswerValidationError) as info:
        await agent.run("x")
    assert info.value.code == "ERR_ANSWER_VALIDATION" and info.value.failed == ["raises"]
    assert SECRET not in str(info.value)
    report = agent.answer_validation()
    assert report is not None and report.blocked and report.checks[0].reason == "check raised RuntimeError"


async def test_r004_111_none_on_an_agent_without_checks() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    await agent.run("x")
    assert agent.answer_validation() is None


@pytest.mark.parametrize(
    "checks",
    [(), ("not a check",), (answer_check("a", bool), answer_check("a", bool))],
)
def test_r004_111_bad_checks_are_refused_at_build(checks: tuple[Any, ...]) -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").answer_validation(*checks)
    assert info.value.code == "ERR_ANSWER_CHECK"


# -- R004-109: findings -----------------------------------------------------------------------------------------
def _finding_model(req: LLMRequest) -> Any:
    calls = sum(1 for m in req.messages if m.role == "tool")
    if calls == 0:
        assert "_basis" in next(t for t in req.tools if t.name == "port_state").input_schema["properties"]
        return _call("port_state", {"port": "7", "_basis": "is port 7 up?"}, "p1")
    if calls == 1:
        return _call("port_state", {"port": "7"}, "p2")
    if calls == 2:
        return _call(
            "file_finding",
            {"tool_call_id": "p1", "standing": "fact", "assertions": [{"about": "port 7", "value": "down"}]},
            "f1",
        )
    if calls == 3:
        return _call(
            "file_finding",
            {"tool_call_id": "p2", "standing": "fact", "assertions": [{"about": "port 7", "value": "up"}]},
            "f2",
        )
    return "Port 7 is down."


async def test_r004_109_findings_ledger_basis_standing_and_conflict_rows() -> None:
    seen: list[dict[str, Any]] = []
    port = _tool("port_state", lambda args: seen.append(dict(args)) or "down")
    agent = (
        Agent.create(provider=mock(respond=_finding_model), model="m", max_iterations=8).tool(port).findings().build()
    )
    assert agent.findings() is None
    await agent.run("is port 7 up?")
    assert seen == [{"port": "7"}, {"port": "7"}]  # _basis never reaches the tool
    rows = agent.findings()
    assert rows is not None
    assert [r["kind"] for r in rows] == ["basis", "standing", "standing", "conflict"]
    assert rows[0] == {
        "kind": "basis",
        "tool_call_id": "p1",
        "tool_name": "port_state",
        "basis": "is port 7 up?",
        "turn": 1,
    }
    assert rows[3]["witnesses"] == ["p1", "p2"] and rows[3]["about"] == "port 7"
    rows.clear()
    assert len(agent.findings() or []) == 4  # detached


async def test_r004_109_the_ledger_crosses_turns_on_the_conversation() -> None:
    agent = (
        Agent.create(provider=mock(respond=_finding_model), model="m", max_iterations=8)
        .tool(_tool("port_state", "down"))
        .findings()
        .build()
    )
    await agent.run("is port 7 up?")
    other = (
        Agent.create(provider=mock(reply="still down"), model="m").tool(_tool("port_state", "down")).findings().build()
    )
    await other.run("and now?", continue_from=agent.checkpoint())
    assert [r["kind"] for r in other.findings() or []] == ["basis", "standing", "standing", "conflict"]


async def test_r004_109_a_bad_finding_is_an_error_result_not_a_row() -> None:
    agent = (
        Agent.create(
            provider=_script(_call("file_finding", {"tool_call_id": "x", "standing": "certain"}), "ok"), model="m"
        )
        .findings()
        .build()
    )
    await agent.run("x")
    assert agent.findings() is None
    record = agent.last_snapshot().state["tool_results"][0]  # type: ignore[union-attr]
    assert record["error_code"] == "ERR_FINDING"


# -- R004-128: inputs / results / answer layers ------------------------------------------------------------------
LOGS = define_tool(
    name="read_logs",
    description="read logs",
    input_schema={
        "type": "object",
        "properties": {"host": {"type": "string"}, "since": {"type": "string"}, "until": {"type": "string"}},
        "required": ["host", "since", "until"],
    },
    execute=lambda args, ctx: period(
        {"lines": 3}, queried=(args["since"], args["until"]), held=("2024-01-05", "2024-01-31")
    ),
)


async def test_r004_128_inputs_layer_assumes_asks_and_flags_untraced_values() -> None:
    got: list[dict[str, Any]] = []
    logs = define_tool(
        name="read_logs",
        description="read logs",
        input_schema=LOGS.input_schema,
        execute=lambda args, ctx: got.append(dict(args)) or "ok",
    )
    model = _script(
        _call("read_logs", {"host": "db-9", "since": "2024-01-01"}, "a1"),
        _call("read_logs", {"since": "2024-01-01", "until": "2024-01-02"}, "a2"),
        "done",
    )
    agent = (
        Agent.create(provider=model, model="m")
        .tool(logs)
        .inputs_layer({"read_logs": {"until": assume("2024-01-31"), "host": ask()}})
        .output_schema(Verdict)
        .limits_travel_with_the_answer()
        .build()
    )
    await agent.run("read the logs of db-1")
    assert got == [{"host": "db-9", "since": "2024-01-01", "until": "2024-01-31"}]
    rows = agent.findings() or []
    assert [(r["tool_call_id"], r["argument"], r["source"]) for r in rows] == [
        ("a1", "until", "default"),
        ("a1", "host", "model"),  # db-9 is nowhere in the record
        ("a2", "until", "model"),
        ("a2", "host", "asked"),
    ]
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert results[1]["error_code"] == "ERR_ARGUMENT_ASK"
    assumed = agent.answer_coverage()
    assert assumed is not None and [(a.argument, a.value) for a in assumed.assumed] == [("until", "2024-01-31")]


async def test_r004_128_results_layer_files_period_rows() -> None:
    silent = _tool("metrics", "42", {"type": "object", "properties": {"start": {}, "end": {}}})
    model = _script(
        _call("read_logs", {"host": "h", "since": "2024-01-01", "until": "2024-01-10"}, "r1"),
        _call("read_logs", {"host": "h", "since": "2024-01-06", "until": "2024-01-09"}, "r2"),
        _call("metrics", {"start": "a", "end": "b"}, "r3"),
        "done",
    )
    agent = (
        Agent.create(provider=model, model="m", max_iterations=6)
        .tools([LOGS, silent])
        .results_layer({"metrics": ("start", "end")})
        .answer_layer(standing_line=True)
        .build()
    )
    result = await agent.run("logs?")
    states = [(r["tool_call_id"], r["state"]) for r in agent.findings() or []]
    assert states == [("r1", "partly-held"), ("r2", "covered"), ("r3", "undeclared")]
    standing = agent.answer_standing()
    assert standing is not None and standing.standing == "not-sure"
    assert standing.reasons == ["period partly-held for read_logs", "period undeclared for metrics"]
    assert result.answer is not None and result.answer.endswith(
        "Standing: not-sure (period partly-held for read_logs; period undeclared for metrics)"
    )


async def test_r004_128_layers_are_none_when_nothing_ran() -> None:
    agent = Agent.create(provider=mock(reply="hi"), model="m").answer_layer().inputs_layer().results_layer().build()
    assert agent.findings() is None and agent.answer_standing() is None
    result = await agent.run("x")
    assert result.answer == "hi" and agent.findings() is None
    standing = agent.answer_standing()
    assert standing is not None and standing.standing == "not-assessed"


def test_r004_128_rules_on_unknown_tools_are_refused_at_build() -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").inputs_layer({"nope": {"a": assume(1)}}).build()
    assert info.value.code == "ERR_ANSWER_CONTRACT"
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), model="m").inputs_layer({"t": {"a": 1}})
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), model="m").answer_layer(standing_line="loud")  # type: ignore[arg-type]


async def test_r004_128_redacted_values_stay_off_the_record() -> None:
    agent = (
        Agent.create(
            provider=_script(_call("read_logs", {"host": SECRET, "since": "a", "until": "b"}), "done"), model="m"
        )
        .tool(LOGS)
        .inputs_layer({"read_logs": {"until": assume("x")}})
        .redact(patterns=[SECRET])
        .build()
    )
    await agent.run("x")
    assert SECRET not in json.dumps(agent.last_snapshot().model_dump(mode="json"))  # type: ignore[union-attr]


async def test_r004_112_limits_ride_on_turn_end_and_declarations_are_events() -> None:
    agent = (
        Agent.create(provider=_script(_call("replication_health", {}), '{"healthy": true}'), model="m")
        .tool(HEALTH)
        .output_schema(Verdict)
        .limits_travel_with_the_answer()
        .build()
    )
    ends: list[dict[str, Any]] = []
    declared: list[str] = []
    agent.on("agentfootprint.agent.turn_end", lambda e: ends.append(dict(e.payload)))
    agent.on("agentfootprint.tools.*", lambda e: declared.append(e.type))
    await agent.run("healthy?")
    limits = agent.answer_coverage()
    assert limits is not None and ends[0]["answer_coverage"] == limits.model_dump(mode="json")
    assert "agentfootprint.tools.coverage_declared" in declared
