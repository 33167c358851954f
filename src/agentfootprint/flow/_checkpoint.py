"""Checkpoints: what a paused run writes (JSON, real values) and how an untrusted one is read back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentfootprint.errors import validation_field
from agentfootprint.flow._frame import Paused
from agentfootprint.flow._frozen import thaw
from agentfootprint.flow._state import RunState
from agentfootprint.flow.chart import FlowChart
from agentfootprint.flow.errors import InvalidCheckpointError, NotSerializableError, PendingAnswersError
from agentfootprint.flow.pause import CheckpointFrame, FlowCheckpoint, NamespaceCheckpoint


def checkpoint_json(rs: RunState, paused: Paused) -> dict[str, Any]:
    """The paused run as a JSON checkpoint; a state value or pause data that is not JSON is refused by key."""
    for name, ns in rs.namespaces.items():
        for key, value in ns.state.items():
            try:
                to_jsonable_python(value)
            except PydanticSerializationError:
                where = f"subflow '{name}' " if name else ""
                raise NotSerializableError(
                    f"cannot checkpoint: {where}state key '{key[:100]}' holds {type(value).__name__}, not JSON"
                ) from None
    try:
        data = to_jsonable_python(paused.data)
    except PydanticSerializationError:
        raise NotSerializableError(f"pause data of type {type(paused.data).__name__} is not JSON") from None
    cp = FlowCheckpoint(
        chart_id=rs.chart.id,
        chart_fingerprint=rs.chart.fingerprint,
        run_id=rs.run_id,
        counter=rs.counter,
        visits=dict(rs.visits),
        frames=paused.frames,
        namespaces={
            n: NamespaceCheckpoint(state=thaw(ns.state), last_writer=dict(ns.last_writer))
            for n, ns in rs.namespaces.items()
        },
        initial_state=thaw(rs.initial_state),
        args=thaw(rs.args),
        commit_log=list(rs.log),
        pause_data=data,
        paused_runtime_stage_id=paused.rid,
    )
    return cp.model_dump(mode="json")


def load_checkpoint(chart: FlowChart, checkpoint: Any) -> FlowCheckpoint:
    """Validate an (untrusted) checkpoint against this chart; errors name the offending field."""
    if isinstance(checkpoint, FlowCheckpoint):
        checkpoint = checkpoint.model_dump(mode="json")
    if not isinstance(checkpoint, Mapping):
        raise InvalidCheckpointError(f"checkpoint must be a dict, got {type(checkpoint).__name__}", field="checkpoint")
    try:
        cp = FlowCheckpoint.model_validate(dict(checkpoint))
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidCheckpointError(f"checkpoint field '{field[:200]}' is invalid", field=field) from None
    if cp.chart_fingerprint != chart.fingerprint:
        raise InvalidCheckpointError(
            f"checkpoint was taken on a different chart ('{cp.chart_id[:80]}'), not this one ('{chart.id}')",
            field="chart_fingerprint",
        )
    for i, c in enumerate(cp.commit_log):
        if c.idx != i:
            raise InvalidCheckpointError(f"commit_log[{i}] has idx {c.idx}", field=f"commit_log.{i}.idx")
    if cp.counter < len(cp.commit_log) // 2:
        raise InvalidCheckpointError("counter is behind the commit log", field="counter")
    if "" not in cp.namespaces:
        raise InvalidCheckpointError("namespaces has no root namespace", field="namespaces")
    for name, nsc in cp.namespaces.items():
        for key, idx in nsc.last_writer.items():
            if not 0 <= idx < len(cp.commit_log):
                raise InvalidCheckpointError(
                    f"last_writer for '{key[:80]}' points outside the log",
                    field=f"namespaces.{name}.last_writer",
                )
    check_frames(chart, cp.frames, "frames")
    return cp


def check_frames(chart: FlowChart, frames: list[CheckpointFrame], where: str) -> None:
    """Every frame names a node of the chart it is in; a fork's pending branches are its own children."""
    current: FlowChart | None = chart
    for depth, fr in enumerate(frames):
        field = f"{where}.{depth}"
        last = depth == len(frames) - 1
        if current is None or fr.node_id not in current.nodes:
            raise InvalidCheckpointError(f"{field} names a stage this chart does not have", field=f"{field}.node_id")
        node = current.nodes[fr.node_id]
        if fr.pending:
            if node.kind != "fork" or not last:
                raise InvalidCheckpointError(f"{field} holds pending branches but is not the paused fork", field=field)
            for branch, p in fr.pending.items():
                if branch not in node.children or p.frames[0].node_id != branch:
                    raise InvalidCheckpointError(f"{field}.pending names a branch this fork does not have", field=field)
                check_frames(current, p.frames, f"{field}.pending.{branch[:80]}.frames")
            continue
        if not last and node.kind == "fork":
            if frames[depth + 1].node_id not in node.children:
                raise InvalidCheckpointError(
                    f"{where}.{depth + 1} is not a branch of this fork", field=f"{where}.{depth + 1}.node_id"
                )
            continue
        current = node.subflow if not last else None
        if not last and node.kind != "subflow":
            raise InvalidCheckpointError(f"{field} is not a subflow mount", field=f"{field}.node_id")


def check_pending_answers(frames: list[CheckpointFrame], answer: Any) -> None:
    """Several pending questions are answered with ``{branch id: answer}`` naming only pending branches (any subset,
    at least one); checked before anything resumes."""
    pending = frames[-1].pending
    if not pending:
        return
    names = list(pending)
    if not isinstance(answer, Mapping):
        raise PendingAnswersError(
            f"several questions are pending: answer with a dict keyed by branch id, not a {type(answer).__name__}",
            pending=names,
        )
    if not answer:
        raise PendingAnswersError("the answer dict names no pending branch", pending=names)
    if any(not isinstance(k, str) or k not in pending for k in answer):
        raise PendingAnswersError("the answer dict names a branch that is not pending", pending=names)
    for branch, value in answer.items():
        check_pending_answers(pending[branch].frames, value)


__all__ = ["check_frames", "check_pending_answers", "checkpoint_json", "load_checkpoint"]
