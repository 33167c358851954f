"""Several parallel branches paused at once: one checkpoint, each question answered by its branch id."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import FlowChart, InvalidCheckpointError, PendingAnswersError, flow_chart, pause


def asking(question: str, ran: list[str], key: str) -> FlowChart:
    def ask(s: Any) -> None:
        ran.append(key)
        s["answer"] = pause({"question": question})

    return flow_chart(f"Ask {key}", ask, id="ask").build()


def fork_chart(ran: list[str], n: int = 2, quiet: bool = True) -> FlowChart:
    children: list[tuple[Any, ...]] = [
        (f"b{i}", f"B{i}", asking(f"q{i}?", ran, f"b{i}"), None, {f"a{i}": "answer"}) for i in range(n)
    ]
    if quiet:
        quick = flow_chart("Quick", lambda s: ran.append("quick") or s.set("q", 1), id="quick").build()
        children.append(("quick", "Quick", quick, None, ["q"]))
    return (
        flow_chart("Start", lambda s: None, id="start")
        .parallel(children, id="fork")
        .then("Done", lambda s: "+".join(str(s.get(f"a{i}")) for i in range(n)), id="done")
        .build()
    )


def roundtrip(value: Any) -> Any:
    return json.loads(json.dumps(value))


async def test_both_answered_at_once_resume_only_the_paused_branches() -> None:
    ran: list[str] = []
    r = await fork_chart(ran).run()
    assert r.paused and r.pause_data == {
        "kind": "parallel",
        "pending": {"b0": {"question": "q0?"}, "b1": {"question": "q1?"}},
    }
    frame = (r.checkpoint or {})["frames"][0]
    assert frame["node_id"] == "fork" and frame["done_branches"] == ["quick"]
    ran.clear()
    done = await fork_chart(ran).resume(roundtrip(r.checkpoint), {"b0": "x", "b1": "y"})
    assert not done.paused and done.output == "x+y"
    assert sorted(ran) == ["b0", "b1"]  # the finished sibling did not run again
    ids = [c.runtime_stage_id for c in done.commit_log]
    assert len(ids) == len(set(ids))


async def test_answering_some_keeps_the_rest_pending() -> None:
    ran: list[str] = []
    r = await fork_chart(ran, n=3).run()
    first = await fork_chart(ran, n=3).resume(roundtrip(r.checkpoint), {"b1": "y"})
    assert first.paused and first.pause_data == {
        "kind": "parallel",
        "pending": {"b0": {"question": "q0?"}, "b2": {"question": "q2?"}},
    }
    assert (first.checkpoint or {})["frames"][0]["done_branches"] == ["b1", "quick"]
    ran.clear()
    second = await fork_chart(ran, n=3).resume(roundtrip(first.checkpoint), {"b2": "z", "b0": "x"})
    assert second.output == "x+y+z" and sorted(ran) == ["b0", "b2"]


async def test_a_branch_that_asks_again_stays_pending_with_its_new_question() -> None:
    def twice(s: Any) -> None:
        s["first"] = pause({"question": "first?"})

    def again(s: Any) -> None:
        s["answer"] = f"{s['first']}/{pause({'question': 'second?'})}"

    double = flow_chart("One", twice, id="one").then("Two", again, id="two").build()
    chart = (
        flow_chart("S", lambda s: None, id="s")
        .parallel([("d", "D", double, None, {"d": "answer"}), ("e", "E", asking("e?", [], "e"), None, {"e": "answer"})])
        .then("Done", lambda s: f"{s['d']}|{s['e']}", id="done")
        .build()
    )
    r = await chart.run()
    r2 = await chart.resume(roundtrip(r.checkpoint), {"d": "1"})
    assert r2.pause_data == {"kind": "parallel", "pending": {"d": {"question": "second?"}, "e": {"question": "e?"}}}
    r3 = await chart.resume(roundtrip(r2.checkpoint), {"d": "2", "e": "3"})
    assert r3.output == "1/2|3"


async def test_nested_forks_take_nested_answers() -> None:
    ran: list[str] = []
    inner = (
        flow_chart("In", lambda s: None, id="in")
        .parallel(
            [
                ("x", "X", asking("x?", ran, "x"), None, {"x": "answer"}),
                ("y", "Y", asking("y?", ran, "y"), None, {"y": "answer"}),
            ],
            id="inner-fork",
        )
        .then("Join", lambda s: s.set("answer", f"{s['x']}{s['y']}"), id="join-in")
        .build()
    )
    chart = (
        flow_chart("Out", lambda s: None, id="out")
        .parallel(
            [("n", "N", inner, None, {"n": "answer"}), ("z", "Z", asking("z?", ran, "z"), None, {"z": "answer"})],
            id="outer-fork",
        )
        .then("Done", lambda s: f"{s['n']}-{s['z']}", id="done")
        .build()
    )
    r = await chart.run()
    assert r.pause_data == {
        "kind": "parallel",
        "pending": {
            "n": {"kind": "parallel", "pending": {"x": {"question": "x?"}, "y": {"question": "y?"}}},
            "z": {"question": "z?"},
        },
    }
    partial = await chart.resume(roundtrip(r.checkpoint), {"n": {"y": "2"}})
    assert partial.pause_data == {
        "kind": "parallel",
        "pending": {"n": {"kind": "parallel", "pending": {"x": {"question": "x?"}}}, "z": {"question": "z?"}},
    }
    done = await chart.resume(roundtrip(partial.checkpoint), {"n": {"x": "1"}, "z": "3"})
    assert done.output == "12-3"


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("just text", "several questions are pending: answer with a dict keyed by branch id, not a str"),
        ({}, "the answer dict names no pending branch"),
        ({"SECRET-BRANCH": "x"}, "the answer dict names a branch that is not pending"),
        ({"b0": "x", 3: "y"}, "the answer dict names a branch that is not pending"),
        ({"quick": "x"}, "the answer dict names a branch that is not pending"),
    ],
)
async def test_unusable_answers_are_refused_before_anything_runs(answer: Any, message: str) -> None:
    ran: list[str] = []
    r = await fork_chart(ran).run()
    ran.clear()
    with pytest.raises(PendingAnswersError, match=message) as info:
        await fork_chart(ran).resume(roundtrip(r.checkpoint), answer)
    assert info.value.code == "ERR_PENDING_ANSWERS" and info.value.pending == ["b0", "b1"]
    assert str(info.value) == f"{message}; pending branches: b0, b1"
    assert ran == []


async def test_hostile_pending_frames_are_refused_by_field() -> None:
    r = await fork_chart([]).run()
    cp = roundtrip(r.checkpoint)
    bad = copy.deepcopy(cp)
    bad["frames"][0]["pending"]["ghost"] = bad["frames"][0]["pending"].pop("b0")
    with pytest.raises(InvalidCheckpointError) as info:
        await fork_chart([]).resume(bad, {"b1": "y"})
    assert info.value.field == "frames.0"
    bad = copy.deepcopy(cp)
    bad["frames"][0]["pending"]["b0"]["frames"][0]["node_id"] = "b1"
    with pytest.raises(InvalidCheckpointError):
        await fork_chart([]).resume(bad, {"b1": "y"})
    bad = copy.deepcopy(cp)
    bad["frames"][0]["pending"]["b0"]["frames"][1]["node_id"] = "nope"
    with pytest.raises(InvalidCheckpointError) as info:
        await fork_chart([]).resume(bad, {"b0": "y"})
    assert info.value.field == "frames.0.pending.b0.frames.1.node_id"
    bad = copy.deepcopy(cp)
    bad["frames"][0]["pending"] = {}
    with pytest.raises(InvalidCheckpointError) as info:
        await fork_chart([]).resume(bad, {"b0": "y"})
    assert info.value.field.startswith("frames.0.pending")


@given(st.integers(min_value=2, max_value=5), st.randoms(use_true_random=False))
@settings(max_examples=25, deadline=None)
def test_any_answering_order_completes_with_every_answer(n: int, rnd: random.Random) -> None:
    """Property: answering pending branches in any grouping and order ends with each answer in its place."""
    import asyncio

    async def go() -> None:
        r = await fork_chart([], n=n, quiet=False).run()
        left = [f"b{i}" for i in range(n)]
        while r.paused:
            pick = rnd.sample(left, rnd.randint(1, len(left)))
            r = await fork_chart([], n=n, quiet=False).resume(roundtrip(r.checkpoint), {b: b.upper() for b in pick})
            left = [b for b in left if b not in pick]
        assert r.output == "+".join(f"B{i}" for i in range(n)) and left == []

    asyncio.run(go())
