"""The executor's entry points: run a chart, or resume a paused one, and turn the outcome into a result."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from agentfootprint.flow._checkpoint import check_pending_answers, checkpoint_json, load_checkpoint
from agentfootprint.flow._driver import drive
from agentfootprint.flow._frame import Paused
from agentfootprint.flow._frozen import thaw
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._state import RunState
from agentfootprint.flow.cancel import CancelToken
from agentfootprint.flow.chart import FlowChart
from agentfootprint.flow.errors import FlowCancelledError, attach_snapshot
from agentfootprint.flow.pause import CheckpointFrame
from agentfootprint.flow.recorder import Recorder
from agentfootprint.flow.recording import RecordingDials
from agentfootprint.flow.redaction import RedactionPolicy
from agentfootprint.flow.result import FlowResult


async def _execute(rs: RunState, start: str, resume: list[CheckpointFrame]) -> FlowResult:
    task = asyncio.current_task()
    if rs.cancel is not None and task is not None:
        rs.cancel._register(task)
    if rs.dispatch.on_run_start:
        rs.dispatch.fire("on_run_start", rs.run_id)
    try:
        try:
            if rs.deadline is not None:
                async with asyncio.timeout(max(0.0, rs.deadline - time.monotonic())):
                    brk = await drive(rs, rs.chart, rs.namespaces[""], "", start, None, resume)
            else:
                brk = await drive(rs, rs.chart, rs.namespaces[""], "", start, None, resume)
        except TimeoutError as exc:
            raise FlowCancelledError(
                f"run timed out at stage '{rs.current_rid}'", stage_id=rs.current_rid, reason="timeout"
            ) from exc
        except asyncio.CancelledError:
            if rs.cancel is not None and rs.cancel.cancelled:
                raise FlowCancelledError(
                    f"run cancelled at stage '{rs.current_rid}': {rs.cancel.reason}", stage_id=rs.current_rid
                ) from None
            raise
    except Paused as paused:
        checkpoint = checkpoint_json(rs, paused)
        snap = rs.snapshot(served=True)
        paused_result = FlowResult(
            run_id=rs.run_id,
            state=rs.result_state(),
            output=None,
            paused=True,
            pause_data=rs.redactor.redact(paused.data) if rs.redactor.active else paused.data,
            checkpoint=checkpoint,
            snapshot=snap,
            recorder_failures=rs.failures,
        )
        paused_result._committed = rs.namespaces[""].state
        return paused_result
    except BaseException as exc:
        if not isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
            attach_snapshot(exc, rs.snapshot(served=True), rs.current_rid, thaw(rs.namespaces[""].state))
            if rs.current_rid and hasattr(exc, "add_note"):
                exc.add_note(f"(agentfootprint: raised in stage {rs.current_rid})")
        if rs.dispatch.on_run_end:
            rs.dispatch.fire("on_run_end", rs.run_id, "failed")
        raise
    finally:
        if rs.cancel is not None and task is not None:
            rs.cancel._unregister(task)
    snap = rs.snapshot(served=True, final=True)
    if rs.dispatch.on_run_end:
        rs.dispatch.fire("on_run_end", rs.run_id, "completed")
    result = FlowResult(
        run_id=rs.run_id,
        state=rs.result_state(),
        output=rs.output,
        snapshot=snap,
        break_reason=brk,
        recorder_failures=rs.failures,
    )
    result._committed = rs.namespaces[""].state
    return result


async def execute(
    chart: FlowChart,
    *,
    state: Mapping[str, Any] | None,
    args: Mapping[str, Any] | None,
    timeout: float | None,
    cancel: CancelToken | None,
    recorders: Iterable[Recorder],
    redaction: RedactionPolicy | None,
    run_id: str | None,
    deps: Any = None,
    recording: RecordingDials | None = None,
) -> FlowResult:
    if state is not None and not isinstance(state, Mapping):
        raise TypeError(f"state must be a dict, got {type(state).__name__}")
    rs = RunState(
        chart,
        run_id=run_id or uuid.uuid4().hex,
        args=args,
        initial_state=state,
        recorders=recorders,
        redaction=redaction,
        cancel=cancel,
        timeout=timeout,
        deps=deps,
        dials=recording,
    )
    return await _execute(rs, chart.root, [])


async def execute_resume(
    chart: FlowChart,
    checkpoint: Any,
    answer: Any,
    *,
    timeout: float | None,
    cancel: CancelToken | None,
    recorders: Iterable[Recorder],
    redaction: RedactionPolicy | None,
    deps: Any = None,
    run_id: str | None = None,
    origin: Mapping[str, Any] | None = None,
    recording: RecordingDials | None = None,
) -> FlowResult:
    cp = load_checkpoint(chart, checkpoint)
    rs = RunState(
        chart,
        run_id=run_id or cp.run_id,
        args=cp.args,
        initial_state=cp.initial_state,
        recorders=recorders,
        redaction=redaction,
        cancel=cancel,
        timeout=timeout,
        deps=deps,
        dials=recording,
    )
    rs.log = list(cp.commit_log)
    rs.counter = cp.counter
    rs.visits = dict(cp.visits)
    rs.namespaces = {}
    for name, nsc in cp.namespaces.items():
        ns = Namespace(name, nsc.state, deps if name == "" else None)
        ns.last_writer = dict(nsc.last_writer)
        rs.namespaces[name] = ns
    if run_id is not None or origin is not None:
        rs.resumed_from = {**dict(origin or {}), "run_id": cp.run_id, "commits": len(cp.commit_log)}
    check_pending_answers(cp.frames, answer)
    rs.resume_answer = answer
    if rs.dispatch.on_resume:
        rs.dispatch.fire("on_resume", cp.paused_runtime_stage_id)
    return await _execute(rs, cp.frames[0].node_id, list(cp.frames))


__all__ = ["execute", "execute_resume"]
