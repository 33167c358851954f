"""One stage's run, exactly: the decision evidence a decider or selector leaves for each kind of return, the refusal
of a wrong one, and the commit and recorder events of a stage that fails, breaks, pauses or reads args."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import decide, flow_chart, pause

from .conftest import Events


def decider_chart(out: Any) -> Any:
    return (
        flow_chart("D", lambda s: out, id="d")
        .decider("Route", lambda s: out, id="route")
        .branch("a", "A", lambda s: None)
        .branch("b", "B", lambda s: None)
        .default("b")
        .end()
        .build()
    )


def selector_chart(out: Any) -> Any:
    return (
        flow_chart("S", lambda s: None, id="s")
        .selector("Pick", lambda s: out, id="pick")
        .branch("p", "P", lambda s: None)
        .branch("q", "Q", lambda s: None)
        .end()
        .build()
    )


async def test_a_plain_branch_id_leaves_decide_evidence() -> None:
    r = await decider_chart("a").run()
    assert r.commit_log[1].decision == {"kind": "decide", "rules": [], "chosen": ["a"]}


async def test_an_unknown_branch_id_falls_back_to_the_default_and_says_so() -> None:
    r = await decider_chart("zzz").run()
    assert r.commit_log[1].decision == {
        "kind": "decide",
        "rules": [],
        "chosen": ["b"],
        "fallback_from": "zzz",
        "default_used": True,
    }


async def test_a_selector_takes_one_id_or_a_list_without_repeats() -> None:
    one = await selector_chart("p").run()
    assert one.commit_log[1].decision == {"kind": "select", "rules": [], "chosen": ["p"]}
    many = await selector_chart(("q", "p", "q")).run()
    assert many.commit_log[1].decision == {"kind": "select", "rules": [], "chosen": ["q", "p"]}


@pytest.mark.parametrize(
    ("chart", "message"),
    [
        (lambda: decider_chart(["a"]), "decider 'route' must return a branch id or decide(...), got list"),
        (lambda: decider_chart(None), "decider 'route' must return a branch id or decide(...), got NoneType"),
        (lambda: selector_chart(3), "selector 'pick' must return branch ids or select(...), got int"),
        (lambda: selector_chart(["p", 1]), "selector 'pick' must return branch ids or select(...), got list"),
    ],
)
async def test_a_wrong_return_is_refused_naming_the_node_and_what_it_needs(chart: Any, message: str) -> None:
    with pytest.raises(TypeError) as ei:
        await chart().run()
    assert str(ei.value) == message


async def test_decide_evidence_is_stored_as_json() -> None:
    chart = (
        flow_chart("D", lambda s: None, id="d")
        .decider("Route", lambda s: decide(s, [{"when": {"n": {"in": (1, 2)}}, "then": "a"}], "b"), id="route")
        .branch("a", "A", lambda s: None)
        .branch("b", "B", lambda s: None)
        .end()
        .build()
    )
    r = await chart.run({"n": 2})
    condition = r.commit_log[1].decision["rules"][0]["conditions"][0]  # type: ignore[index]
    assert condition["threshold"] == [1, 2] and type(condition["threshold"]) is list


async def test_a_failing_stage_in_a_mount_is_recorded_under_its_parent(events: Events) -> None:
    def boom(s: Any) -> None:
        _ = s.args["who"]
        s["half"] = 1
        s.emit("before", 1)
        raise KeyError("gone")

    inner = flow_chart("Boom", boom, id="boom").build()
    chart = flow_chart("S", lambda s: s.set("k", 1), id="s").subflow("m", inner, input_map=["k"]).build()
    with pytest.raises(KeyError) as ei:
        await chart.run(args={"who": "x"}, recorders=[events])
    assert [e for e in events.log if e[0] == "on_error"] == [("on_error", "m/boom#2@m:1", "KeyError: 'gone'")]
    failed = ei.value.snapshot.commit_log[-1]  # type: ignore[attr-defined]
    assert failed.model_dump(exclude_defaults=True) == {
        "emits": [{"name": "before", "payload": 1}],
        "error": "KeyError: 'gone'",
        "failed": True,
        "idx": 2,
        "namespace": "m",
        "parent_runtime_stage_id": "m#1",
        "runtime_stage_id": "m/boom#2",
        "stage_id": "boom",
        "stage_name": "Boom",
        "used_args": True,
        "writes": [{"path": "half", "value": 1, "verb": "set"}],
    }


async def test_recorders_hear_breaks_and_pauses(events: Events) -> None:
    chart = flow_chart("Ask", lambda s: s.set("a", pause({"q": 1})), id="ask").build()
    await chart.run(recorders=[events])
    stop = flow_chart("Stop", lambda s: s.break_("done"), id="stop").build()
    await stop.run(recorders=[events])
    assert [e for e in events.log if e[0] in ("on_pause", "on_break")] == [
        ("on_pause", "ask#0@-:1", {"q": 1}),
        ("on_break", "stop#0@-:1", "done"),
    ]
