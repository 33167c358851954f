"""What a run returns: final state (served, redacted) and the real state for the runtime, the log and narrative."""

from __future__ import annotations

from typing import Any

from agentfootprint.flow import FlowResult, RedactionPolicy, flow_chart

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
