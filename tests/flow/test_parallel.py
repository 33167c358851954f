"""Static fan-out: concurrent branches, explicit merge at the join, per-branch failures, fail_fast."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint.flow import ParallelBranchError, ParallelMergeConflictError, causal_chain, flow_chart


def start(s: Any) -> None:
    s["base"] = 10


async def test_branches_see_base_not_each_other() -> None:
    seen: dict[str, Any] = {}

    async def a(s: Any) -> None:
        s["a"] = 1
        await asyncio.sleep(0)
        seen["a_sees_b"] = s.get("b")

    async def b(s: Any) -> None:
        s["b"] = 2
        await asyncio.sleep(0)
        seen["b_sees_a"] = s.get("a")

    chart = (
        flow_chart("Start", start, id="start")
        .parallel([("a", "A", a), ("b", "B", b)])
        .then("Sum", lambda s: s["a"] + s["b"] + s["base"], id="sum")
        .build()
    )
    r = await chart.run()
    assert seen == {"a_sees_b": None, "b_sees_a": None}
    assert r.output == 13
    kinds = [(c.runtime_stage_id, c.kind) for c in r.commit_log]
    assert kinds == [
        ("start#0", "stage"),
        ("a#2", "branch"),
        ("b#3", "branch"),
        ("parallel-1#1", "join"),
        ("sum#4", "stage"),
    ]
    assert "[Parallel]: Forking into 2 parallel paths: A, B." in r.narrative_text()


async def test_branches_really_run_concurrently() -> None:
    started: list[str] = []
    gate = asyncio.Event()

    async def a(s: Any) -> None:
        started.append("a")
        await gate.wait()

    async def b(s: Any) -> None:
        started.append("b")
        gate.set()

    chart = flow_chart("Start", start, id="start").parallel([("a", "A", a), ("b", "B", b)]).build()
    await asyncio.wait_for(chart.run(), 2)
    assert sorted(started) == ["a", "b"]


async def test_conflict_without_merge_names_key_and_branches() -> None:
    chart = (
        flow_chart("Start", start, id="start")
        .parallel([("a", "A", lambda s: s.set("x", 1)), ("b", "B", lambda s: s.set("x", 2))])
        .build()
    )
    with pytest.raises(ParallelMergeConflictError, match="a, b all wrote key 'x'"):
        await chart.run()


async def test_merge_combines_and_join_links_sources() -> None:
    chart = (
        flow_chart("Start", start, id="start")
        .parallel(
            [("a", "A", lambda s: s.set("x", 1)), ("b", "B", lambda s: s.set("x", 2))],
            merge=lambda key, values: sorted(values.values()),
        )
        .then("Use", lambda s: s["x"], id="use")
        .build()
    )
    r = await chart.run()
    assert r.output == [1, 2]
    sl = causal_chain(r.snapshot, "use#4")
    assert {"a#2", "b#3", "parallel-1#1"} <= set(sl.runtime_stage_ids)


async def test_parallel_appends_concatenate_in_declaration_order() -> None:
    async def slow(s: Any) -> None:
        await asyncio.sleep(0.001)
        s.append("found", "slow")

    chart = (
        flow_chart("Start", start, id="start")
        .parallel([("a", "A", slow), ("b", "B", lambda s: s.append("found", "fast"))])
        .build()
    )
    r = await chart.run()
    assert r.state["found"] == ["slow", "fast"]


async def test_failing_branch_reported_per_branch_others_applied() -> None:
    def bad(s: Any) -> None:
        s["bad"] = 1
        raise ValueError("nope")

    chart = (
        flow_chart("Start", start, id="start")
        .parallel([("good", "Good", lambda s: s.set("ok", True)), ("bad", "Bad", bad)])
        .build()
    )
    with pytest.raises(ParallelBranchError) as ei:
        await chart.run()
    assert list(ei.value.errors) == ["bad"] and isinstance(ei.value.errors["bad"], ValueError)
    snap = ei.value.snapshot  # type: ignore[attr-defined]
    assert snap.state == {"base": 10, "ok": True}
    failed = [c for c in snap.commit_log if c.failed]
    assert [c.stage_id for c in failed] == ["bad"]


async def test_fail_fast_raises_original_and_cancels_siblings() -> None:
    cancelled = asyncio.Event()

    async def slow(s: Any) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def bad(s: Any) -> None:
        raise KeyError("boom")

    chart = (
        flow_chart("Start", start, id="start")
        .parallel([("slow", "Slow", slow), ("bad", "Bad", bad)], fail_fast=True)
        .build()
    )
    with pytest.raises(KeyError):
        await asyncio.wait_for(chart.run(), 5)
    assert cancelled.is_set()
