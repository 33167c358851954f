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
