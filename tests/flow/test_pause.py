"""Pause/resume: JSON checkpoints, fresh charts, id continuity, both legs in the log, hostile checkpoints."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agentfootprint.flow import (
    FlowChart,
    InvalidCheckpointError,
    NotSerializableError,
    ParallelBranchError,
    PauseNotAllowedError,
    flow_chart,
    pause,
    resume_answer,
)
from agentfootprint.flow._frame import Paused
from agentfootprint.flow.pause import PauseSignal


def approval_chart() -> FlowChart:
    def ask(s: Any) -> None:
        s["asked"] = s.get("asked", 0) + 1
        s["answer"] = pause({"question": "approve?"})

    return (
        flow_chart("Seed", lambda s: s.set("amount", 10), id="seed")
        .then("Ask", ask, id="ask")
        .then("Done", lambda s: f"{s['answer']}:{s['amount']}", id="done")
        .build()
    )


async def test_pause_then_resume_on_fresh_chart_after_json_roundtrip() -> None:
    r = await approval_chart().run()
    assert r.paused and r.pause_data == {"question": "approve?"} and r.output is None
    cp = json.loads(json.dumps(r.checkpoint))
    r2 = await approval_chart().resume(cp, "yes")
    assert not r2.paused and r2.output == "yes:10"
    ids = [c.runtime_stage_id for c in r2.commit_log]
    assert ids == ["seed#0", "ask#1", "ask#2", "done#3"]
    assert r2.commit_log[1].paused and not r2.commit_log[1].applied
    assert r2.state["asked"] == 1  # the paused leg's writes were not applied
    assert r2.run_id == r.run_id
    assert "Execution paused at Ask." in r2.narrative_text()


async def test_checkpoint_is_detached_from_engine() -> None:
    r = await approval_chart().run()
    assert r.checkpoint is not None
    original = copy.deepcopy(r.checkpoint)
    r.checkpoint["namespaces"][""]["state"]["amount"] = 999
    assert original["namespaces"][""]["state"]["amount"] == 10


async def test_pause_twice_then_resume_twice() -> None:
    def ask(s: Any) -> None:
        s["a"] = pause("first")

    def ask2(s: Any) -> None:
        s["b"] = pause("second")

    chart = flow_chart("A", ask, id="a").then("B", ask2, id="b").build()
    r1 = await chart.run()
    r2 = await chart.resume(r1.checkpoint or {}, 1)
    assert r2.paused and r2.pause_data == "second"
    r3 = await chart.resume(r2.checkpoint or {}, 2)
    assert r3.state == {"a": 1, "b": 2}
    ids = [c.runtime_stage_id for c in r3.commit_log]
    assert len(ids) == len(set(ids)) == 4


async def test_foreign_checkpoint_refused_naming_fingerprint() -> None:
    r = await approval_chart().run()
    other = flow_chart("X", lambda s: None, id="seed").build()
    with pytest.raises(InvalidCheckpointError) as ei:
        await other.resume(r.checkpoint or {}, "yes")
    assert ei.value.field == "chart_fingerprint" and ei.value.code == "ERR_INVALID_CHECKPOINT"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda cp: cp.pop("frames"), "frames"),
        (lambda cp: cp.__setitem__("version", 99), "version"),
        (lambda cp: cp.__setitem__("counter", "lots"), "counter"),
        (lambda cp: cp.__setitem__("surprise", 1), "surprise"),
        (lambda cp: cp["commit_log"][0].__setitem__("idx", 7), "commit_log.0.idx"),
        (lambda cp: cp["frames"][0].__setitem__("node_id", "nowhere"), "frames.0.node_id"),
        (
            lambda cp: cp["namespaces"][""]["last_writer"].__setitem__("amount", 10_000),
            "namespaces..last_writer",
        ),
    ],
)
async def test_malformed_checkpoints_refused_naming_field(mutate: Any, field: str) -> None:
    r = await approval_chart().run()
    cp = json.loads(json.dumps(r.checkpoint))
    mutate(cp)
    with pytest.raises(InvalidCheckpointError) as ei:
        await approval_chart().resume(cp, "x")
    assert ei.value.field == field


@pytest.mark.parametrize("junk", [None, 42, "checkpoint", [], {"format": "nope"}])
async def test_junk_checkpoint_refused(junk: Any) -> None:
    with pytest.raises(InvalidCheckpointError):
        await approval_chart().resume(junk, "x")


async def test_pause_inside_subflow_resumes_inside() -> None:
    def ask(s: Any) -> None:
        s["answer"] = pause("q")

    sub = flow_chart("Prep", lambda s: s.set("z", 1), id="prep").then("Ask", ask, id="ask").build()
    chart = (
        flow_chart("Seed", lambda s: None, id="seed")
        .subflow("sub", sub, output_map=["answer", "z"])
        .then("Done", lambda s: s["answer"], id="done")
        .build()
    )
    r = await chart.run()
    assert [f["node_id"] for f in (r.checkpoint or {})["frames"]] == ["sub", "ask"]
    r2 = await chart.resume(json.loads(json.dumps(r.checkpoint)), "ok")
    assert r2.output == "ok" and r2.state == {"answer": "ok", "z": 1}
    assert [c.runtime_stage_id for c in r2.commit_log] == [
        "seed#0",
        "sub#1",
        "sub/prep#2",
        "sub/ask#3",
        "sub/ask#4",
        "sub#5",
        "done#6",
    ]


async def test_pause_in_parallel_branch_refused() -> None:
    chart = flow_chart("S", lambda s: None, id="s").parallel([("a", "A", lambda s: pause("x"))]).build()
    with pytest.raises(ParallelBranchError) as ei:
        await chart.run()
    assert isinstance(ei.value.errors["a"], PauseNotAllowedError)


def test_pause_outside_stage_refused() -> None:
    with pytest.raises(PauseNotAllowedError):
        pause("x")


async def test_non_json_state_refused_at_pause_naming_key() -> None:
    def ask(s: Any) -> None:
        s["weird"] = object()
        s.set("ok", 1)

    chart = flow_chart("W", ask, id="w").then("Ask", lambda s: pause("q"), id="ask").build()
    with pytest.raises(NotSerializableError, match="'weird'"):
        await chart.run()


async def test_resumed_loop_keeps_counting_iterations() -> None:
    def body(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        if s["n"] == 3:
            s["got"] = pause("mid-loop")
        if s["n"] == 5:
            s.break_()

    chart = flow_chart("Body", body, id="body").loop_to("body").build()
    r = await chart.run()
    r2 = await chart.resume(r.checkpoint or {}, "a")
    assert r2.state == {"n": 5, "got": "a"}
    assert [c.visit for c in r2.commit_log if c.applied] == [1, 2, 3, 4, 5]


async def test_pause_inside_a_parallel_subflow_branch_resumes_only_that_branch() -> None:
    ran: list[str] = []

    def ask(s: Any) -> None:
        ran.append("ask")
        s["answer"] = pause("which?")

    asker = flow_chart("Ask", ask, id="ask").build()
    quick = flow_chart("Quick", lambda s: ran.append("quick") or s.set("q", 1), id="quick").build()
    chart = (
        flow_chart("Start", lambda s: None, id="start")
        .parallel([("a", "A", asker, None, ["answer"]), ("b", "B", quick, None, ["q"])], id="fork")
        .then("Done", lambda s: f"{s['answer']}+{s['q']}", id="done")
        .build()
    )
    r = await chart.run()
    assert r.paused and [f["node_id"] for f in (r.checkpoint or {})["frames"]] == ["fork", "a", "ask"]
    assert (r.checkpoint or {})["frames"][0]["done_branches"] == ["b"]
    ran.clear()
    r2 = await chart.resume(json.loads(json.dumps(r.checkpoint)), "left")
    assert r2.output == "left+1" and ran == ["ask"]  # the finished sibling did not run again
    ids = [c.runtime_stage_id for c in r2.commit_log]
    assert len(ids) == len(set(ids))


async def test_two_parallel_branches_pausing_at_once_share_one_checkpoint() -> None:
    """Both positions are kept (see test_pause_parallel.py for answering them by branch id)."""
    asker = flow_chart("Ask", lambda s: pause("q"), id="ask").build()
    chart = (
        flow_chart("S", lambda s: None, id="s")
        .parallel([("a", "A", asker, None, None), ("b", "B", asker, None, None)])
        .build()
    )
    r = await chart.run()
    assert r.paused and r.pause_data == {"kind": "parallel", "pending": {"a": "q", "b": "q"}}
    assert sorted((r.checkpoint or {})["frames"][0]["pending"]) == ["a", "b"]


async def test_refusal_texts_say_where_pause_cannot_run() -> None:
    with pytest.raises(PauseNotAllowedError) as outside:
        pause("x")
    assert str(outside.value) == "pause() must be called inside a running stage"
    chart = flow_chart("S", lambda s: None, id="s").parallel([("a", "A", lambda s: pause("x"))]).build()
    with pytest.raises(ParallelBranchError) as ei:
        await chart.run()
    assert str(ei.value.errors["a"]) == "pause() is not supported inside parallel branch 'a'"


async def test_resume_answer_is_seen_once_then_a_second_pause_asks_again() -> None:
    seen: list[Any] = []

    def ask(s: Any) -> None:
        seen.append(resume_answer())
        s["first"] = pause("first?")
        seen.append(resume_answer())  # consumed by pause(): this stage is no longer answering
        s["second"] = pause("second?")

    chart = flow_chart("Ask", ask, id="ask").build()
    r1 = await chart.run()
    assert (r1.paused, r1.pause_data, seen) == (True, "first?", [(False, None)])
    r2 = await chart.resume(r1.checkpoint or {}, "yes")
    assert (r2.paused, r2.pause_data) == (True, "second?")
    assert seen == [(False, None), (True, "yes"), (False, None)]


async def test_resume_answer_can_be_a_falsy_value() -> None:
    seen: list[Any] = []

    def ask(s: Any) -> None:
        seen.append(resume_answer())
        s["a"] = pause("q")

    chart = flow_chart("Ask", ask, id="ask").build()
    r1 = await chart.run()
    r2 = await chart.resume(r1.checkpoint or {}, None)
    assert r2.state == {"a": None} and seen == [(False, None), (True, None)]


def test_resume_answer_outside_a_stage_is_no_answer() -> None:
    assert resume_answer() == (False, None)


def test_pause_signal_and_paused_carry_their_data() -> None:
    signal = PauseSignal({"q": 1})
    assert (str(signal), signal.data) == ("flow paused", {"q": 1})
    assert isinstance(signal, BaseException) and not isinstance(signal, Exception)
    paused = Paused("d", [], "a#0")
    assert (str(paused), paused.data, paused.frames, paused.rid) == ("paused", "d", [], "a#0")
