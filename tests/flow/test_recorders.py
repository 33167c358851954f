"""Recorders: hook order, isolation of raising recorders, no cost when absent."""

from __future__ import annotations

from typing import Any

from agentfootprint.flow import FlowChart, flow_chart


class Log:
    id = "log"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def on_run_start(self, run_id: str) -> None:
        self.calls.append("run_start")

    def on_stage_start(self, frame: Any) -> None:
        self.calls.append(f"start:{frame.runtime_stage_id}")

    def on_read(self, frame: Any, key: str, value: Any) -> None:
        self.calls.append(f"read:{key}")

    def on_write(self, frame: Any, key: str, verb: str, value: Any) -> None:
        self.calls.append(f"write:{key}:{verb}")

    def on_commit(self, commit: Any) -> None:
        self.calls.append(f"commit:{commit.runtime_stage_id}")

    def on_decision(self, rid: str, evidence: Any) -> None:
        self.calls.append(f"decision:{evidence['chosen'][0]}")

    def on_loop(self, path: str, visit: int) -> None:
        self.calls.append(f"loop:{path}:{visit}")

    def on_emit(self, frame: Any, name: str, payload: Any) -> None:
        self.calls.append(f"emit:{name}")

    def on_run_end(self, run_id: str, status: str) -> None:
        self.calls.append(f"end:{status}")


class Broken:
    id = "broken"

    def on_stage_start(self, frame: Any) -> None:
        raise RuntimeError("recorder bug")

    def on_commit(self, commit: Any) -> None:
        raise ValueError("also broken")


async def test_hook_order(loan: FlowChart) -> None:
    log = Log()
    await loan.run({"credit_score": 500}, recorders=[log])
    assert log.calls[:6] == [
        "run_start",
        "start:intake#0",
        "write:applicant:set",
        "commit:intake#0",
        "start:assess#1",
        "read:credit_score",
    ]
    assert "decision:reject" in log.calls and log.calls[-1] == "end:completed"


async def test_raising_recorder_never_breaks_run(loan: FlowChart) -> None:
    log = Log()
    r = await loan.run({"credit_score": 500}, recorders=[Broken(), log])
    assert r.state["decision"] == "rejected"
    assert {f.hook for f in r.recorder_failures} == {"on_stage_start", "on_commit"}
    assert all(f.recorder == "broken" for f in r.recorder_failures)
    assert "commit:notify#4" in log.calls  # the healthy recorder still saw everything


async def test_emit_and_loop_hooks() -> None:
    def body(s: Any) -> None:
        s.emit("tick", {"n": s.get("n", 0)})
        s["n"] = s.get("n", 0) + 1
        if s["n"] == 2:
            s.break_()

    log = Log()
    r = await flow_chart("Body", body, id="body").loop_to("body").build().run(recorders=[log])
    assert log.calls.count("emit:tick") == 2 and "loop:body:2" in log.calls
    assert r.commit_log[0].emits == [{"name": "tick", "payload": {"n": 0}}]
    assert "[emit] tick: {n}" in r.narrative_text()


async def test_failed_run_reports_end_failed() -> None:
    log = Log()

    def bad(s: Any) -> None:
        raise RuntimeError("x")

    try:
        await flow_chart("Bad", bad, id="bad").build().run(recorders=[log])
    except RuntimeError:
        pass
    assert log.calls[-1] == "end:failed"


class Reads:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, Any]] = []

    def on_read(self, frame: Any, key: str, value: Any) -> None:
        self.seen.append((frame.runtime_stage_id, key, value))


async def test_on_read_receives_the_committed_value_at_that_moment() -> None:
    """A recorder keeps what it was handed: later appends to the same list never change a value it already got."""

    def grow(s: Any) -> None:
        s.append("xs", len(s.get("xs") or []))
        s.get("missing", "default")
        s.get("d")

    chart = flow_chart("A", grow, id="a").then("B", grow, id="b").then("C", grow, id="c").build()
    reads = Reads()
    r = await chart.run({"d": {"k": 1}}, recorders=[reads])
    assert r.state["xs"] == [0, 1, 2]
    assert [(rid, key, value) for rid, key, value in reads.seen if key == "xs"] == [
        ("a#0", "xs", None),
        ("b#1", "xs", [0]),
        ("c#2", "xs", [0, 1]),
    ]
    assert ("a#0", "d", {"k": 1}) in reads.seen
    assert [(rid, value) for rid, key, value in reads.seen if key == "missing"] == [
        ("a#0", None),
        ("b#1", None),
        ("c#2", None),
    ]
