"""backtrack, pinned whole: for each recorded scenario the full JSON (every hop, slot, position and trigger) and the
printed chain equal the reviewed golden (tests/explain/golden_backtrack_scenarios.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.explain import Backtrack, BacktrackError, backtrack
from agentfootprint.explain.backtrack import Hop, SourceTrail, calls_behind

from ._backtrack_scenarios import SCENARIOS, fixed_run_ids

GOLDEN: dict[str, Any] = json.loads(Path(__file__).with_name("golden_backtrack_scenarios.json").read_text())


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_backtrack_of_each_scenario_equals_its_golden(name: str) -> None:
    make, at = SCENARIOS[name]
    with fixed_run_ids():
        target = await make()
    bt = backtrack(target, at=at)
    assert bt.to_json() == GOLDEN[name]["json"]
    assert str(bt) == GOLDEN[name]["text"]


async def test_a_recording_dict_and_its_snapshot_backtrack_alike() -> None:
    make, _ = SCENARIOS["flagship"]
    with fixed_run_ids():
        agent = await make()
    snap = agent.last_snapshot()
    as_dict = snap.model_dump(mode="json")
    assert backtrack(snap).to_json() == GOLDEN["flagship"]["json"]
    assert backtrack(as_dict).to_json() == GOLDEN["flagship"]["json"]
    assert backtrack({"snapshot": as_dict}).to_json() == GOLDEN["flagship"]["json"]

    class Holder:
        snapshot = snap

    assert backtrack(Holder()).to_json() == GOLDEN["flagship"]["json"]  # type: ignore[arg-type]


def test_what_cannot_be_backtracked_is_named() -> None:
    with pytest.raises(BacktrackError) as err:
        backtrack(42)  # type: ignore[arg-type]
    assert str(err.value) == "cannot backtrack a int: pass an Agent, a snapshot or a recording"
    assert err.value.code == "ERR_BACKTRACK" and err.value.steps == ()


async def test_an_unknown_step_lists_the_steps_after_the_first_model_call() -> None:
    make, _ = SCENARIOS["flagship"]
    agent = await make()
    with pytest.raises(BacktrackError) as err:
        backtrack(agent, at="nowhere#99")
    steps = "call-llm#5, route#6, tool-calls#7, injection-engine#8, system-prompt#9, messages#10, tools#11, " + (
        "call-llm#12, route#13, final#14"
    )
    assert err.value.steps == tuple(steps.split(", "))
    assert str(err.value) == f"no step with that id in this run; steps you can backtrack from: {steps}"
    with pytest.raises(BacktrackError) as err:
        backtrack(agent, at="seed#0")
    assert str(err.value) == f"that step comes before any model call; steps you can backtrack from: {steps}"


async def test_a_long_step_list_is_cut_at_thirty_and_counted() -> None:
    make, _ = SCENARIOS["a-fold-in-this-run"]
    agent = await make()
    with pytest.raises(BacktrackError) as err:
        backtrack(agent, at="nowhere")
    steps = err.value.steps
    assert len(steps) > 30
    shown = ", ".join(steps[:30])
    assert str(err.value) == (
        f"no step with that id in this run; steps you can backtrack from: {shown}, and {len(steps) - 30} more"
    )


def test_a_source_trail_prints_its_chain_one_hop_a_line() -> None:
    trail = SourceTrail(
        kind="message",
        id="assistant-1",
        text="",
        slot="messages",
        hops=[
            Hop(kind="answer", runtime_stage_id="final#3", detail='"ok"'),
            Hop(kind="born", runtime_stage_id=None, detail="user message", note="a note"),
        ],
    )
    assert str(trail) == (
        '[message] assistant-1: (no text: a tool request)\n  ANSWER   final#3 "ok"\n  BORN     user message (a note)'
    )
    fact = trail.model_copy(update={"kind": "fact", "id": "f", "text": ""})
    assert str(fact).split("\n")[0] == '[fact] f: ""' and fact.ablatable and not trail.ablatable
    bt = Backtrack(answer=None, trigger="call-llm#1", sources=[trail])
    assert str(bt) == 'ANSWER ""\nDecided at call-llm#1; 1 source(s) reached it:\n\n' + str(trail)
    assert bt.source("assistant-1") is trail and bt.source("nope") is None


async def test_calls_behind_a_value_are_the_model_calls_it_was_made_from() -> None:
    make, _ = SCENARIOS["a-parallel-merge"]
    with fixed_run_ids():
        par = await make()
    snap = par.last_snapshot()
    merge = snap.commit("merge#22")
    assert [c.runtime_stage_id for c in calls_behind(snap, merge.idx)] == ["a/call-llm#8", "b/call-llm#18"]
    assert calls_behind(snap, -1) == [] and calls_behind(snap, len(snap.commit_log)) == []


def test_tool_arguments_are_shown_cut_and_only_for_an_object() -> None:
    from agentfootprint.explain.backtrack import _args_text

    assert _args_text(["a"]) == "" and _args_text(None) == "" and _args_text({}) == ""
    assert _args_text({"q": "x" * 100, "n": 2, "s": "é"}) == f'q="{"x" * 59}, n=2, s="é"'


def test_a_backtrack_error_keeps_a_given_code_and_its_steps() -> None:
    err = BacktrackError("m", steps=("a#1",), code="ERR_OTHER")
    assert (str(err), err.code, err.steps) == ("m", "ERR_OTHER", ("a#1",))
    assert BacktrackError("m").code == "ERR_BACKTRACK"


def _commit(idx: int, stage: str, kind: str = "stage", namespace: str = "", **reads: int | None) -> Any:
    from agentfootprint.flow.commit import Commit

    rid = f"{namespace}/{stage}#{idx}" if namespace else f"{stage}#{idx}"
    return Commit(idx=idx, stage_id=stage, runtime_stage_id=rid, kind=kind, namespace=namespace, reads=reads)  # type: ignore[arg-type]


def test_a_mount_is_walked_through_not_credited_to_its_members_earlier_call() -> None:
    """A member mounted a second time on the run's input: its first pass's model call made nothing of it."""
    from agentfootprint.flow import FlowSnapshot

    log = [
        _commit(0, "seed"),
        _commit(1, "m", "subflow-enter", "m", input=0),
        _commit(2, "call-llm", namespace="m"),
        _commit(3, "final", namespace="m", x=2),
        _commit(4, "m", "subflow-exit", answer=3),
        _commit(5, "m", "subflow-enter", "m", input=0),
    ]
    snap = FlowSnapshot(run_id="r", chart_id="c", chart_name="c", state={}, commit_log=log)
    assert calls_behind(snap, 5) == []
    assert [c.runtime_stage_id for c in calls_behind(snap, 4)] == ["m/call-llm#2"]


async def test_a_recording_without_a_members_mount_names_the_member_by_its_namespace() -> None:
    make, _ = SCENARIOS["a-sequence"]
    with fixed_run_ids():
        seq = await make()
    snap = seq.last_snapshot()
    mount = snap.commit_log[1]
    assert (mount.kind, mount.namespace) == ("subflow-enter", "research")
    unmounted = [snap.commit_log[0], mount.model_copy(update={"kind": "stage"}), *snap.commit_log[2:]]
    cut = snap.model_copy(update={"commit_log": unmounted})
    vias = [h.detail for s in backtrack(cut).sources for h in s.hops if h.kind == "via"]
    assert vias == ["answer handed over from research's answer"] * 2
