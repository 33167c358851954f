"""What a run returns: final state (served, redacted) and the real state for the runtime, the log and narrative."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agentfootprint.flow import FlowResult, FlowSnapshot, RedactionPolicy, flow_chart

SECRET = "123-45-6789"


async def test_raw_state_keeps_real_values_the_served_state_redacts() -> None:
    chart = flow_chart("A", lambda s: s.set("ssn", SECRET) or s.set("n", 1), id="a").build()
    r = await chart.run(redaction=RedactionPolicy.of(keys=["ssn"]))
    assert r.state["ssn"] != SECRET and r.state["n"] == 1
    assert r.raw_state() == {"ssn": SECRET, "n": 1}


async def test_without_redaction_raw_state_equals_state() -> None:
    r = await flow_chart("A", lambda s: s.set("n", [1]), id="a").build().run()
    assert r.raw_state() == r.state == {"n": [1]}


async def test_a_result_built_by_hand_serves_its_state_as_raw() -> None:
    r = await flow_chart("A", lambda s: s.set("n", 1), id="a").build().run()
    copy: Any = FlowResult(run_id="x", state={"k": 2}, snapshot=r.snapshot)
    assert copy.raw_state() == {"k": 2} and copy.commit_log == r.commit_log
    assert copy.narrative_text() == r.narrative_text()


async def test_the_served_state_is_copied_when_first_read_then_kept() -> None:
    r = await flow_chart("A", lambda s: s.set("n", [1, {"m": 2}]), id="a").build().run()
    assert r._state is None  # nothing copied while the run ended
    state = r.state
    assert state == {"n": [1, {"m": 2}]} and type(state["n"]) is list and type(state["n"][1]) is dict
    assert r.state is state  # one copy, the caller's
    state["n"].append(3)
    assert r.committed_state()["n"] == [1, {"m": 2}] and r.snapshot.state["n"] == [1, {"m": 2}]
    assert r.model_dump()["state"] == {"n": [1, {"m": 2}, 3]}


async def test_a_redacted_run_serves_its_state_redacted_at_once() -> None:
    chart = flow_chart("A", lambda s: s.set("ssn", SECRET), id="a").build()
    r = await chart.run(redaction=RedactionPolicy.of(keys=["ssn"]))
    assert r._state is not None and r._state["ssn"] != SECRET


def test_a_hand_built_result_refuses_a_state_that_is_not_a_dict() -> None:
    snap = FlowSnapshot(run_id="x", chart_id="c", chart_name="c", state={}, commit_log=[])
    with pytest.raises(ValidationError):
        FlowResult(run_id="x", state=[1], snapshot=snap)  # type: ignore[arg-type]
    assert FlowResult(run_id="x", snapshot=snap).state == {}
