"""The engine's typed errors: codes, the fields they carry, their texts and the snapshot a stage's error gets."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import (
    FlowCancelledError,
    InvalidCheckpointError,
    LoopLimitError,
    ParallelBranchError,
    ParallelMergeConflictError,
    PendingAnswersError,
    flow_chart,
)
from agentfootprint.flow.errors import RAW_STATE_ATTR, attach_snapshot


def test_loop_limit_names_the_node_and_the_limit() -> None:
    err = LoopLimitError("tick", 3)
    assert (str(err), err.node_id, err.limit, err.code) == (
        "maximum loop iterations (3) exceeded for node 'tick'",
        "tick",
        3,
        "ERR_LOOP_LIMIT",
    )


def test_merge_conflict_names_the_branches_and_cuts_the_key_at_100() -> None:
    err = ParallelMergeConflictError("k" * 150, ["a", "b"])
    assert str(err) == f"parallel branches a, b all wrote key '{'k' * 100}'; pass merge= to combine them"
    assert (err.key, err.branches, err.code) == ("k" * 150, ["a", "b"], "ERR_PARALLEL_CONFLICT")


def test_branch_error_lists_each_failed_branch_with_its_type() -> None:
    errors: dict[str, BaseException] = {"a": ValueError("x"), "b": KeyError("y")}
    err = ParallelBranchError(errors)
    assert str(err) == "parallel branch(es) failed: a (ValueError), b (KeyError)"
    assert err.errors is errors and err.code == "ERR_PARALLEL_BRANCH"


def test_cancelled_defaults_to_reason_cancelled_and_no_stage() -> None:
    err = FlowCancelledError("stopped")
    assert (str(err), err.stage_id, err.reason, err.code) == ("stopped", None, "cancelled", "ERR_FLOW_CANCELLED")
    timed = FlowCancelledError("late", stage_id="a#0", reason="timeout")
    assert (timed.stage_id, timed.reason) == ("a#0", "timeout")


def test_invalid_checkpoint_keeps_message_and_field() -> None:
    err = InvalidCheckpointError("checkpoint version 9 is not supported", field="version")
    assert str(err) == "checkpoint version 9 is not supported"
    assert (err.field, err.code) == ("version", "ERR_INVALID_CHECKPOINT")


def test_pending_answers_lists_at_most_20_branches_each_cut_at_80() -> None:
    pending = [f"{i:02d}" + "b" * 100 for i in range(25)]
    err = PendingAnswersError("answer is not a dict", pending=pending)
    shown = ", ".join(p[:80] for p in pending[:20])
    assert str(err) == f"answer is not a dict; pending branches: {shown}"
    assert err.pending == pending and err.code == "ERR_PENDING_ANSWERS"


async def test_a_failing_stage_error_carries_snapshot_stage_and_real_state() -> None:
    def bad(s: Any) -> None:
        raise ValueError("boom")

    chart = flow_chart("A", lambda s: s.set("a", 1), id="a").then("B", bad, id="b").build()
    with pytest.raises(ValueError) as ei:
        await chart.run()
    err: Any = ei.value
    assert err.stage_id == "b#1"
    assert [c.runtime_stage_id for c in err.snapshot.commit_log] == ["a#0", "b#1"]
    assert getattr(err, RAW_STATE_ATTR) == {"a": 1}


def test_attach_snapshot_keeps_a_stage_id_the_error_already_has() -> None:
    snap: Any = object()
    err: Any = FlowCancelledError("x", stage_id="own#1")
    attach_snapshot(err, snap, "b#2", {"k": 1})
    assert (err.snapshot, err.stage_id, getattr(err, RAW_STATE_ATTR)) == (snap, "own#1", {"k": 1})


def test_attach_snapshot_without_stage_or_raw_state_adds_neither() -> None:
    snap: Any = object()
    err: Any = ValueError("x")
    attach_snapshot(err, snap, None)
    assert err.snapshot is snap
    assert not hasattr(err, "stage_id") and not hasattr(err, RAW_STATE_ATTR)


def test_attach_snapshot_skips_errors_that_take_no_attributes() -> None:
    class Tight(BaseException):
        __slots__ = ("only",)

        def __setattr__(self, name: str, value: Any) -> None:
            raise AttributeError(name)

    err = Tight()
    attach_snapshot(err, object(), "a#0", {"k": 1})  # type: ignore[arg-type]
    assert not hasattr(err, "snapshot") and not hasattr(err, "stage_id")
