"""A run's entry points, exactly: run start/end events, the paused result (redacted pause data, recorder failures),
what a resume carries over (deps, recording dials), and the texts of a timeout or cancel mid-await."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint.flow import (
    CancelToken,
    FlowCancelledError,
    RecordingDials,
    RedactionPolicy,
    flow_chart,
    pause,
)

from .conftest import Events


class Broken:
    def on_pause(self, frame: Any, data: Any) -> None:
        raise RuntimeError("recorder down")


async def test_run_start_and_end_carry_the_run_id_and_the_outcome(events: Events) -> None:
    await flow_chart("A", lambda s: None, id="a").build().run(recorders=[events], run_id="ok-run")

    def bad(s: Any) -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        await flow_chart("B", bad, id="b").build().run(recorders=[events], run_id="bad-run")
    ends = [e for e in events.log if e[0] in ("on_run_start", "on_run_end")]
    assert ends == [
        ("on_run_start", "ok-run"),
        ("on_run_end", "ok-run", "completed"),
        ("on_run_start", "bad-run"),
        ("on_run_end", "bad-run", "failed"),
    ]


async def test_a_paused_result_redacts_its_pause_data_and_keeps_recorder_failures() -> None:
    chart = flow_chart("Ask", lambda s: s.set("a", pause({"ssn": "123-45-6789", "q": "ok?"})), id="ask").build()
    r = await chart.run(recorders=[Broken()], redaction=RedactionPolicy.of(keys=["ssn"]))
    assert (r.paused, r.output, r.pause_data) == (True, None, {"ssn": "[REDACTED]", "q": "ok?"})
    assert r.checkpoint is not None and r.checkpoint["pause_data"] == {"ssn": "123-45-6789", "q": "ok?"}
    assert [(f.recorder, f.hook, f.error_type, f.message) for f in r.recorder_failures] == [
        ("Broken", "on_pause", "RuntimeError", "recorder down")
    ]


async def test_a_resume_gives_the_root_its_deps_and_records_with_its_dials() -> None:
    seen: list[Any] = []

    def ask(s: Any) -> None:
        seen.append(s.deps)
        s["a"] = pause("q")

    def after(s: Any) -> None:
        s["b"] = s["a"]

    chart = flow_chart("Ask", ask, id="ask").then("After", after, id="after").build()
    r = await chart.run(deps="first")
    done = await chart.resume(r.checkpoint or {}, 5, deps="second", recording=RecordingDials(read_tracking="full"))
    assert seen == ["first", "second"] and done.state == {"a": 5, "b": 5}
    assert done.commit_log[-1].read_values == {"a": 5}


async def test_a_timeout_mid_await_names_the_stage() -> None:
    async def slow(s: Any) -> None:
        await asyncio.Event().wait()

    chart = flow_chart("A", lambda s: None, id="a").then("Slow", slow, id="slow").build()
    with pytest.raises(FlowCancelledError) as ei:
        await chart.run(timeout=0.05)
    assert (str(ei.value), ei.value.stage_id, ei.value.reason) == (
        "run timed out at stage 'slow#1'",
        "slow#1",
        "timeout",
    )


async def test_a_resumed_run_takes_its_cancel_token_mid_await() -> None:
    async def wait(s: Any) -> None:
        s["a"] = pause("q")
        await asyncio.Event().wait()

    chart = flow_chart("Wait", wait, id="wait").build()
    r = await chart.run()
    token = CancelToken()
    task = asyncio.ensure_future(chart.resume(r.checkpoint or {}, 1, cancel=token))
    await asyncio.sleep(0.01)
    token.cancel("stop")
    done, _ = await asyncio.wait({task}, timeout=5)
    assert done == {task}
    err = task.exception()
    assert isinstance(err, FlowCancelledError) and str(err) == "run cancelled at stage 'wait#1': stop"
