"""Issue 35 (time travel): a read-only cursor over a finished run — state at a step, what changed since, a key's
writes — that reads a pause and its resumes as one axis and refuses a leg from another run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, RunResult, ask_human, define_fact, define_tool
from agentfootprint.agent import NoRunRecordError
from agentfootprint.explain import (
    ForeignLegError,
    KeyChange,
    KeyWrite,
    RunTimeline,
    TimelineError,
    TimelineStep,
    WhatIfError,
    load_recording,
    recording_of,
    save_recording,
    timeline,
)
from agentfootprint.providers import mock
from tests.explain._backtrack_scenarios import SCENARIOS


def _look(result: str = "a view") -> Any:
    return define_tool(
        name="look", description="Look around", input_schema={"type": "object"}, execute=lambda a, c: result
    )


def _agent(replies: list[Any]) -> Agent:
    return (
        Agent.create(provider=mock(replies=replies), model="m")
        .tool(_look())
        .fact(define_fact(id="policy", data="Be brief."))
        .build()
    )


_ONE_TOOL = [{"tool_calls": [{"id": "c1", "name": "look", "args": {}}]}, "seen"]
_ASK = {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "which?"}}]}


def _asking(replies: list[Any]) -> Agent:
    return Agent.create(provider=mock(replies=replies), model="m").tool(ask_human).build()


async def test_steps_are_the_runs_commits_in_order_with_their_runtime_stage_ids() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    t = timeline(run)
    snap = run.last_snapshot()
    assert snap is not None and isinstance(t, RunTimeline)
    assert [s.runtime_stage_id for s in t] == [c.runtime_stage_id for c in snap.commit_log]
    assert len(t) == len(snap.commit_log) and t.legs == [run.run_id] and t.run_id == run.run_id
    assert t.step(0) == TimelineStep(index=0, runtime_stage_id="seed#0", stage_id="seed", kind="stage", leg=run.run_id)
    assert t.step("call-llm#5").index == 5 and t.step(-1).runtime_stage_id == "final#14"
    assert repr(t) == f"<RunTimeline {len(snap.commit_log)} steps over 1 leg(s)>"


async def test_state_at_a_step_is_the_state_right_after_it() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    t = timeline(run)
    assert "answer" not in t.state_at("call-llm#5")
    assert t.state_at("final#14")["answer"] == "seen" and t.state_at(-1) == t.state_at("final#14")
    assert t.state_at(0)["history"] == [{"role": "user", "content": "go"}]
    assert t.value_at("answer", "call-llm#5", default="none yet") == "none yet"
    assert t.value_at("answer", -1) == "seen"
    assert t.state_at("call-llm#5") == t.state_at(5)


async def test_changed_since_names_every_key_that_moved_and_the_steps_that_wrote_it() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    t = timeline(run)
    changes = t.changed_since("call-llm#5")
    assert changes["answer"] == KeyChange(
        key="answer", before=None, after="seen", existed_before=False, exists_after=True, writers=["final#14"]
    )
    assert changes["tool_results"].writers == ["tool-calls#7"]
    after = changes["tool_results"].after
    assert [(r["call_id"], r["name"], r["content"]) for r in after] == [("c1", "look", "a view")]
    assert changes["tool_results"].existed_before is False
    assert "system_prompt_injections" not in changes  # written before the step, never after
    assert t.changed_since(-1) == {}
    window = t.changed_since("call-llm#5", until="tool-calls#7")
    assert "answer" not in window and "tool_results" in window
    with pytest.raises(TimelineError) as err:
        t.changed_since("final#14", until="seed#0")
    assert err.value.code == "ERR_TIMELINE_STEP"


async def test_key_timeline_lists_each_write_with_its_step_and_the_value_after_it() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    writes = timeline(run).key_timeline("history")
    assert [w.runtime_stage_id for w in writes] == ["seed#0", "tool-calls#7", "final#14"] or [
        w.runtime_stage_id for w in writes
    ][:2] == ["seed#0", "tool-calls#7"]
    assert writes[0] == KeyWrite(
        runtime_stage_id="seed#0",
        index=0,
        leg=run.run_id,
        verb="set",
        written=[{"role": "user", "content": "go"}],
        value=[{"role": "user", "content": "go"}],
    )
    assert writes[1].verb == "append" and writes[1].value[:1] == [{"role": "user", "content": "go"}]
    assert [w.written for w in timeline(run).key_timeline("answer")] == ["seen"]
    assert timeline(run).key_timeline("never-written") == []


async def test_a_pause_and_its_resume_read_as_one_axis_with_each_step_on_its_leg() -> None:
    agent = _asking([_ASK, "done"])
    paused = await agent.run("go")
    assert paused.checkpoint is not None
    resumed = await agent.resume(paused.checkpoint, "left")
    t = timeline(paused, resumed)
    assert t.legs == [paused.run_id, resumed.run_id]
    paused_snap = paused.last_snapshot()
    assert paused_snap is not None
    n = len(paused_snap.commit_log)
    assert {s.leg for s in t.steps[:n]} == {paused.run_id} and {s.leg for s in t.steps[n:]} == {resumed.run_id}
    assert t.step(n - 1).paused and t.step(n - 1).stage_id == t.step(n).stage_id == "tool-calls"
    assert t.value_at("answer", -1) == "done"
    human = t.key_timeline("tool_results")
    assert [w.leg for w in human] == [resumed.run_id] and human[0].written[0]["content"] == "left"
    assert timeline(resumed).legs == t.legs  # the resumed leg names the one it continues
    assert [s.leg for s in timeline(resumed)] == [s.leg for s in t]


async def test_a_chain_of_two_pauses_reads_as_three_legs() -> None:
    agent = _asking([_ASK, {"tool_calls": [{"id": "h2", "name": "ask_human", "args": {"question": "and?"}}]}, "ok"])
    first = await agent.run("go")
    assert first.checkpoint is not None
    second = await agent.resume(first.checkpoint, "a")
    assert second.status == "paused" and second.checkpoint is not None
    third = await agent.resume(second.checkpoint, "b")
    t = timeline(first, second, third)
    assert t.legs == [first.run_id, second.run_id, third.run_id]
    assert [w.leg for w in t.key_timeline("tool_results")] == [second.run_id, third.run_id]
    assert t.value_at("answer", -1) == "ok"


async def test_a_leg_from_another_run_is_refused() -> None:
    one, other = _asking([_ASK, "done"]), _asking([_ASK, "done"])
    p1, p2 = await one.run("go"), await other.run("go")
    assert p1.checkpoint is not None and p2.checkpoint is not None
    r2 = await other.resume(p2.checkpoint, "x")
    with pytest.raises(ForeignLegError) as err:
        timeline(p1, r2)
    assert err.value.code == "ERR_TIMELINE_FOREIGN_LEG" and "leg 2 does not continue leg 1" in str(err.value)
    with pytest.raises(ForeignLegError):
        timeline(r2, p2)  # out of order
    finished = await _agent(_ONE_TOOL).run("go")
    with pytest.raises(ForeignLegError):
        timeline(p1, finished)  # not a resume at all


async def test_a_leg_naming_the_run_but_with_another_history_is_refused() -> None:
    agent = _asking([_ASK, "done"])
    paused = await agent.run("go")
    assert paused.checkpoint is not None
    resumed = recording_of(await agent.resume(paused.checkpoint, "left"))
    snap = resumed.snapshot
    forged = snap.model_copy(
        update={"commit_log": [snap.commit_log[0].model_copy(update={"writes": []}), *snap.commit_log[1:]]}
    )
    with pytest.raises(ForeignLegError):
        timeline(paused, resumed.model_copy(update={"snapshot": forged}))
    short = snap.model_copy(update={"resumed_from": {**(snap.resumed_from or {}), "commits": 3}})
    with pytest.raises(ForeignLegError):
        timeline(paused, resumed.model_copy(update={"snapshot": short}))
    assert timeline(paused, resumed).legs == [paused.run_id, snap.run_id]


async def test_results_and_recordings_read_alike(tmp_path: Path) -> None:
    agent = _asking([_ASK, "done"])
    paused = await agent.run("go")
    assert paused.checkpoint is not None
    resumed = await agent.resume(paused.checkpoint, "left")
    loaded = [load_recording(save_recording(r, tmp_path / f"{n}.json")) for n, r in enumerate((paused, resumed))]
    a, b = timeline(paused, resumed), timeline(*loaded)
    assert (
        a.steps == b.steps
        and a.state_at(-1) == b.state_at(-1)
        and a.key_timeline("history") == b.key_timeline("history")
    )


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_every_scenario_replays_to_its_final_state(name: str) -> None:
    target = await SCENARIOS[name][0]()
    t = timeline(target.last_snapshot())
    snap = target.last_snapshot()
    assert t.state_at(-1) == snap.replay()
    for ns in {c.namespace for c in snap.commit_log if c.namespace}:
        last = max(c.idx for c in snap.commit_log if c.namespace == ns)
        assert t.state_at(last, namespace=ns) == snap.state_at(last, ns)


# -------------------------------------------------------------------------------------------------- property


@settings(max_examples=30, deadline=None)
@given(calls=st.integers(min_value=0, max_value=4), data=st.data())
def test_key_timeline_and_changed_since_agree_with_state_at(calls: int, data: st.DataObject) -> None:
    """For any step, a key's last write at or before it gives its value there, and changed_since(step) holds
    exactly the keys whose value after the last step differs from their value at step."""
    replies: list[Any] = [{"tool_calls": [{"id": f"c{i}", "name": "look", "args": {"n": i}}]} for i in range(calls)]
    run = _agent([*replies, "final"]).run_sync("go")
    t = timeline(run)
    step = data.draw(st.integers(min_value=0, max_value=len(t) - 1))
    state, end = t.state_at(step), t.state_at(-1)
    for key in {*state, *end}:
        writes = [w for w in t.key_timeline(key) if w.index <= step]
        if writes:
            assert writes[-1].value == state[key]
    changed = t.changed_since(step)
    assert set(changed) == {k for k in {*state, *end} if state.get(k, "<absent>") != end.get(k, "<absent>")}
    for key, change in changed.items():
        assert change.after == end.get(key) and all(t.step(w).index > step for w in change.writers)


@settings(max_examples=15, deadline=None)
@given(pauses=st.integers(min_value=0, max_value=3), answers=st.lists(st.text("abc", min_size=1), min_size=3))
def test_a_generated_pause_chain_reads_as_one_axis_with_each_answer_on_its_leg(pauses: int, answers: list[str]) -> None:
    """Any chain of pauses: the legs given oldest first are one axis whose steps are the last leg's log, each human
    answer is written on the leg that resumed with it, and dropping a middle leg is refused."""
    asks = [
        {"tool_calls": [{"id": f"h{i}", "name": "ask_human", "args": {"question": f"q{i}?"}}]} for i in range(pauses)
    ]
    agent = _asking([*asks, "done"])
    legs = [agent.run_sync("go")]
    for i in range(pauses):
        checkpoint = legs[-1].checkpoint
        assert checkpoint is not None
        legs.append(agent.resume_sync(checkpoint, answers[i]))
    t = timeline(*legs)
    last = legs[-1].last_snapshot()
    assert last is not None and t.legs == [leg.run_id for leg in legs]
    assert [s.runtime_stage_id for s in t] == [c.runtime_stage_id for c in last.commit_log]
    assert t.state_at(-1) == last.replay() and t.value_at("answer", -1) == "done"
    writes = t.key_timeline("tool_results")
    assert [(w.leg, w.written[0]["content"]) for w in writes] == [
        (legs[i + 1].run_id, answers[i]) for i in range(pauses)
    ]
    if pauses >= 2:
        with pytest.raises(ForeignLegError):
            timeline(legs[0], *legs[2:])


# ---------------------------------------------------------------------------------------------------- hostile


async def test_hostile_steps_keys_namespaces_and_inputs_are_refused_by_code() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    t = timeline(run)
    for bad in ("call-llm#999", "", "<script>", 10_000, -10_000, True, 1.5, None, b"x"):
        with pytest.raises(TimelineError) as err:
            t.state_at(bad)  # type: ignore[arg-type]
        assert err.value.code == "ERR_TIMELINE_STEP" and "<script>" not in str(err.value)
    for bad_key in ("", 3, None):
        with pytest.raises(TimelineError) as err:
            t.key_timeline(bad_key)  # type: ignore[arg-type]
        assert err.value.code == "ERR_TIMELINE_KEY"
    with pytest.raises(TimelineError) as err:
        t.state_at(0, namespace="no-such-member")
    assert err.value.code == "ERR_TIMELINE_NAMESPACE" and "no-such-member" not in str(err.value)
    with pytest.raises(TimelineError) as err:
        timeline()
    assert err.value.code == "ERR_TIMELINE_NO_RUN"
    for junk in ({"commit_log": "nope"}, 42, "run.json", None):
        with pytest.raises(WhatIfError) as werr:
            timeline(junk)
        assert werr.value.code == "ERR_WHATIF_NOT_A_RUN"
    with pytest.raises(NoRunRecordError):
        timeline(RunResult.model_validate_json(run.model_dump_json()))
