"""The served snapshot under a redaction policy, exactly: state, initial and mounted states by key, and every commit's
reads, read values, writes, emits, decision and error text; what recorders are handed."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import RecordingDials, RedactionPolicy, decide, flow_chart

from .conftest import Events

R = "[REDACTED]"


def secret_chart() -> Any:
    def a(s: Any) -> None:
        s["card"] = {"n": s["ssn"] + 1}
        s.emit("seen", {"ssn": s["ssn"]})

    def bad(s: Any) -> None:
        raise ValueError(f"bad {s['token']}")

    inner = flow_chart("In", lambda s: s.set("ssn", s["ssn"] * 2), id="in").build()
    return (
        flow_chart("A", a, id="a")
        .decider("Route", lambda s: decide(s, [{"when": {"ssn": {"gt": 5}}, "then": "hi"}], "lo"), id="route")
        .branch("hi", "Hi", lambda s: s.set("token", "tok-XYZ"))
        .branch("lo", "Lo", lambda s: None)
        .end()
        .subflow("sub", inner, input_map=["ssn"])
        .then("Bad", bad, id="bad")
        .build()
    )


async def test_every_served_surface_hides_the_redacted_keys(events: Events) -> None:
    with pytest.raises(ValueError) as ei:
        await secret_chart().run(
            {"ssn": 111},
            recorders=[events],
            redaction=RedactionPolicy.of(keys=["ssn", "card", "token"]),
            recording=RecordingDials(read_tracking="full"),
        )
    snap: Any = ei.value.snapshot  # type: ignore[attr-defined]
    assert snap.model_dump(exclude={"commit_log", "run_id"}) == {
        "chart_id": "a",
        "chart_name": "A",
        "initial_state": {"ssn": R},
        "redacted": True,
        "resumed_from": None,
        "state": {"card": R, "ssn": R, "token": R},
        "subflow_states": {"sub": {"ssn": R}},
    }
    condition = {"actual": R, "key": "ssn", "op": "gt", "redacted": True, "result": True, "threshold": R}
    assert [c.model_dump(exclude_defaults=True, exclude={"stage_name"}) for c in snap.commit_log] == [
        {
            "emits": [{"name": "seen", "payload": {"ssn": R}}],
            "idx": 0,
            "read_values": {"ssn": R},
            "reads": {"ssn": None},
            "redacted_paths": ["card"],
            "runtime_stage_id": "a#0",
            "stage_id": "a",
            "writes": [{"path": "card", "value": R, "verb": "set"}],
        },
        {
            "decision": {
                "chosen": ["hi"],
                "default": "lo",
                "default_used": False,
                "kind": "decide",
                "rules": [
                    {
                        "branch": "hi",
                        "conditions": [condition],
                        "error": None,
                        "index": 0,
                        "inputs": [],
                        "label": "Rule 0",
                        "matched": True,
                        "type": "filter",
                    }
                ],
            },
            "idx": 1,
            "kind": "decider",
            "read_values": {"ssn": R},
            "reads": {"ssn": None},
            "runtime_stage_id": "route#1",
            "stage_id": "route",
        },
        {
            "control_idx": 1,
            "idx": 2,
            "read_values": {},
            "redacted_paths": ["token"],
            "runtime_stage_id": "hi#2",
            "stage_id": "hi",
            "writes": [{"path": "token", "value": R, "verb": "set"}],
        },
        {
            "idx": 3,
            "kind": "subflow-enter",
            "namespace": "sub",
            "read_values": {"ssn": R},
            "reads": {"ssn": None},
            "redacted_paths": ["ssn"],
            "runtime_stage_id": "sub#3",
            "stage_id": "sub",
            "writes": [{"path": "ssn", "value": R, "verb": "set"}],
        },
        {
            "idx": 4,
            "namespace": "sub",
            "parent_runtime_stage_id": "sub#3",
            "read_values": {"ssn": R},
            "reads": {"ssn": 3},
            "redacted_paths": ["ssn"],
            "runtime_stage_id": "sub/in#4",
            "stage_id": "in",
            "writes": [{"path": "ssn", "value": R, "verb": "set"}],
        },
        {
            "idx": 5,
            "kind": "subflow-exit",
            "parent_runtime_stage_id": "sub#3",
            "read_values": {},
            "runtime_stage_id": "sub#5",
            "stage_id": "sub",
        },
        {
            "error": f"ValueError: bad {R}",
            "failed": True,
            "idx": 6,
            "read_values": {"token": R},
            "reads": {"token": 2},
            "runtime_stage_id": "bad#6",
            "stage_id": "bad",
        },
    ]
    served = [e for e in events.log if e[0] in ("on_emit", "on_decision")]
    assert served[0] == ("on_emit", "a#0@-:1", "seen", {"ssn": R})
    assert served[1][:2] == ("on_decision", "route#1") and served[1][2]["rules"][0]["conditions"] == [condition]
    errors = [e for e in events.log if e[0] == "on_error"]
    assert [(e[1], e[2].split(":")[0]) for e in errors] == [("bad#6@-:1", "ValueError")]


async def test_a_resumed_leg_names_the_run_it_continues() -> None:
    from agentfootprint.flow import pause

    chart = flow_chart("Ask", lambda s: s.set("a", pause("q")), id="ask").build()
    r = await chart.run(run_id="first")
    resumed = await chart.resume(r.checkpoint or {}, 1, run_id="second")
    assert (resumed.run_id, resumed.snapshot.resumed_from) == ("second", {"run_id": "first", "commits": 1})
    assert (await chart.resume(r.checkpoint or {}, 1)).snapshot.resumed_from is None
