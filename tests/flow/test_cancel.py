"""Cancellation and timeouts, checked at every stage boundary and mid-await."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint.flow import CancelToken, FlowCancelledError, flow_chart


async def test_timeout_interrupts_async_stage_and_records_failure() -> None:
    async def slow(s: Any) -> None:
        await asyncio.Event().wait()

    chart = flow_chart("A", lambda s: s.set("a", 1), id="a").then("Slow", slow, id="slow").build()
    with pytest.raises(FlowCancelledError) as ei:
        await chart.run(timeout=0.05)
    assert ei.value.reason == "timeout" and ei.value.stage_id == "slow#1"
    last = ei.value.snapshot.commit_log[-1]  # type: ignore[attr-defined]
    assert last.failed and last.stage_id == "slow"


async def test_timeout_checked_between_sync_stages() -> None:
    import time

    def busy(s: Any) -> None:
        time.sleep(0.02)
        s["n"] = s.get("n", 0) + 1

    chart = flow_chart("Busy", busy, id="busy").loop_to("busy").build()
    with pytest.raises(FlowCancelledError, match="timed out before stage 'busy'"):
        await chart.run(timeout=0.05)


async def test_cancel_token_stops_at_next_boundary() -> None:
    token = CancelToken()

    def first(s: Any) -> None:
        token.cancel("user pressed stop")

    chart = flow_chart("A", first, id="a").then("B", lambda s: s.set("b", 1), id="b").build()
    with pytest.raises(FlowCancelledError, match="user pressed stop") as ei:
        await chart.run(cancel=token)
    assert ei.value.stage_id == "b"


async def test_cancel_token_interrupts_await() -> None:
    token = CancelToken()

    async def slow(s: Any) -> None:
        await asyncio.sleep(30)

    chart = flow_chart("Slow", slow, id="slow").build()
    task = asyncio.ensure_future(chart.run(cancel=token))
    await asyncio.sleep(0.01)
    token.cancel("stop")
    with pytest.raises(FlowCancelledError):
        await asyncio.wait_for(task, 5)


async def test_external_cancellation_propagates() -> None:
    async def slow(s: Any) -> None:
        await asyncio.sleep(30)

    task = asyncio.ensure_future(flow_chart("Slow", slow, id="slow").build().run())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_cancel_reason_defaults_keeps_the_first_and_is_cut_at_500() -> None:
    token = CancelToken()
    assert (token.cancelled, token.reason) == (False, None)
    token.cancel()
    assert (token.cancelled, token.reason) == (True, "cancelled")
    token.cancel("later")
    assert token.reason == "cancelled"
    long = CancelToken()
    long.cancel("r" * 600)
    assert long.reason == "r" * 500


async def test_cancel_from_another_task_interrupts_the_await_at_once() -> None:
    token = CancelToken()

    async def slow(s: Any) -> None:
        await asyncio.sleep(30)

    task = asyncio.ensure_future(flow_chart("Slow", slow, id="slow").build().run(cancel=token))
    await asyncio.sleep(0.01)
    token.cancel("stop")
    done, _ = await asyncio.wait({task}, timeout=5)  # never cancels the task itself
    assert done == {task}
    err = task.exception()
    assert isinstance(err, FlowCancelledError)
    assert (str(err), err.stage_id, err.reason) == ("run cancelled at stage 'slow#0': stop", "slow#0", "cancelled")


async def test_cancel_from_another_thread_interrupts_the_await() -> None:
    token = CancelToken()

    async def slow(s: Any) -> None:
        await asyncio.sleep(30)

    task = asyncio.ensure_future(flow_chart("Slow", slow, id="slow").build().run(cancel=token))
    await asyncio.sleep(0.01)
    await asyncio.to_thread(token.cancel, "from a thread")
    done, _ = await asyncio.wait({task}, timeout=5)
    assert done == {task}
    err = task.exception()
    assert isinstance(err, FlowCancelledError) and str(err) == "run cancelled at stage 'slow#0': from a thread"


async def test_a_stage_cancelling_its_own_run_finishes_then_stops_at_the_boundary() -> None:
    token = CancelToken()

    async def first(s: Any) -> None:
        token.cancel("enough")
        await asyncio.sleep(0)  # not interrupted: the run calling cancel() stops at its next boundary
        await asyncio.sleep(0)
        s["a"] = 1

    chart = flow_chart("A", first, id="a").then("B", lambda s: s.set("b", 1), id="b").build()
    with pytest.raises(FlowCancelledError) as ei:
        await chart.run(cancel=token)
    assert (str(ei.value), ei.value.stage_id) == ("run cancelled before stage 'b': enough", "b")
    log = ei.value.snapshot.commit_log  # type: ignore[attr-defined]
    assert [(c.runtime_stage_id, c.applied) for c in log] == [("a#0", True)]


async def test_a_token_cancelled_after_the_run_leaves_its_caller_alone() -> None:
    token = CancelToken()
    r = await flow_chart("A", lambda s: s.set("a", 1), id="a").build().run(cancel=token)
    assert r.state == {"a": 1} and token._tasks == []
    await asyncio.ensure_future(asyncio.to_thread(token.cancel, "late"))
    token.cancel("late")
    for _ in range(3):
        await asyncio.sleep(0)  # a cancel scheduled on this task would raise here
    assert token.reason == "late"


async def test_a_cancel_scheduled_while_the_run_ends_leaves_its_caller_alone() -> None:
    token = CancelToken()
    gate: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def wait(s: Any) -> None:
        s["v"] = await gate

    async def release() -> None:
        await asyncio.sleep(0.01)
        gate.set_result(1)  # the run resumes first ...
        token.cancel("too late")  # ... and has ended and unregistered when this cancel is handled

    helper = asyncio.ensure_future(release())
    r = await flow_chart("Wait", wait, id="wait").build().run(cancel=token)
    for _ in range(3):
        await asyncio.sleep(0)
    assert r.state == {"v": 1} and token.reason == "too late"
    await helper


async def test_boundary_refusals_name_the_stage_and_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    import types

    token = CancelToken()
    chart = flow_chart("A", lambda s: token.cancel("halt"), id="a").then("B", lambda s: None, id="b").build()
    with pytest.raises(FlowCancelledError) as cancelled:
        await chart.run(cancel=token)
    assert (cancelled.value.stage_id, cancelled.value.reason) == ("b", "cancelled")

    clock = [time.monotonic()]  # the run's clock: stage A spends a minute of it, no real waiting
    monkeypatch.setattr("agentfootprint.flow._state.time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    slow = flow_chart("A", lambda s: clock.__setitem__(0, clock[0] + 60), id="a").then("B", lambda s: None, id="b")
    with pytest.raises(FlowCancelledError) as timed:
        await slow.build().run(timeout=30)
    assert (str(timed.value), timed.value.stage_id, timed.value.reason) == (
        "run timed out before stage 'b'",
        "b",
        "timeout",
    )
