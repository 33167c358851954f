"""One stage at a time: run its function in its frame, commit its net writes (a failure is recorded, not
applied), and read a decider's or selector's choice."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import CoroutineType
from typing import Any

from agentfootprint.flow._frame import BRANCH_ANSWER, CURRENT_FRAME, Paused, StageFrame, error_text
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._state import RunState
from agentfootprint.flow.chart import Node
from agentfootprint.flow.commit import Commit
from agentfootprint.flow.decide import DecisionResult, PlannedDecision
from agentfootprint.flow.errors import UnknownBranchError
from agentfootprint.flow.pause import _NO_ANSWER, CheckpointFrame, PauseSignal
from agentfootprint.flow.scope import Scope


async def call_stage(fn: Callable[..., Any], scope: Scope) -> Any:
    out = fn(scope)
    if out is not None and (type(out) is CoroutineType or inspect.isawaitable(out)):  # most stages return None
        out = await out
    return out


async def run_fn(rs: RunState, node: Node, frame: StageFrame, scope: Scope) -> Any:
    """Run a node's function with the frame set; a pause/failure is recorded by the caller."""
    if rs.dispatch.on_stage_start:
        rs.dispatch.fire("on_stage_start", frame)
    token = CURRENT_FRAME.set(frame)
    try:
        assert node.fn is not None
        out = node.fn(scope)  # call_stage inlined: one coroutine fewer per stage
        if out is not None and (type(out) is CoroutineType or inspect.isawaitable(out)):
            out = await out
        return out
    finally:
        CURRENT_FRAME.reset(token)


def new_frame(rs: RunState, node: Node, prefix: str, ns: Namespace, visit: int, in_branch: bool) -> StageFrame:
    rid = rs.next_rid(prefix, node.id)
    frame = StageFrame(rs, node, rid, ns.name, visit, in_branch)
    branch_answer = BRANCH_ANSWER.get()
    if branch_answer is not _NO_ANSWER and not in_branch:  # one of several pending branches, resumed
        frame.resume_answer = branch_answer
        BRANCH_ANSWER.set(_NO_ANSWER)
    elif rs.resume_answer is not _NO_ANSWER and not in_branch:
        frame.resume_answer = rs.resume_answer
        rs.resume_answer = _NO_ANSWER
    rs.current_rid = rid
    return frame


def fail_record(
    rs: RunState,
    node: Node,
    frame: StageFrame,
    scope: Scope,
    exc: BaseException,
    kind: str,
    parent_rid: str | None,
    control_idx: int | None,
    fork_branch: str | None,
) -> Commit:
    try:
        writes = scope._net_writes()
    except Exception:
        writes = []
    commit = rs.record(
        node,
        frame.runtime_stage_id,
        frame.namespace,
        kind=kind,
        reads=dict(scope._reads),
        read_values=scope._read_values,
        writes=writes,
        failed=True,
        error=error_text(exc),
        emits=scope._emits,
        parent_runtime_stage_id=parent_rid,
        visit=frame.visit,
        used_args=scope._used_args,
        control_idx=control_idx,
        fork_branch=fork_branch,
    )
    if rs.dispatch.on_error:
        rs.dispatch.fire("on_error", frame, exc)
    return commit


async def run_stage(
    rs: RunState,
    node: Node,
    ns: Namespace,
    prefix: str,
    parent_rid: str | None,
    visit: int,
    *,
    kind: str = "stage",
    control_idx: int | None = None,
    post: Callable[[Any], dict[str, Any] | None] | None = None,
) -> tuple[Commit, Any]:
    """Run one linear/decider stage, commit its net writes and apply them (a failure is recorded, not applied)."""
    frame = new_frame(rs, node, prefix, ns, visit, False)
    scope = Scope(ns, frame)
    decision: dict[str, Any] | None = None
    try:
        if rs.dispatch.on_stage_start:  # ``run_fn`` inlined: one coroutine fewer per stage, the same order
            rs.dispatch.fire("on_stage_start", frame)
        token = CURRENT_FRAME.set(frame)
        try:
            assert node.fn is not None
            out = node.fn(scope)
            if out is not None and (type(out) is CoroutineType or inspect.isawaitable(out)):
                out = await out
        finally:
            CURRENT_FRAME.reset(token)
        if post is not None:
            decision = post(out)
    except PauseSignal as sig:
        rs.record(
            node,
            frame.runtime_stage_id,
            ns.name,
            kind=kind,
            reads=dict(scope._reads),
            read_values=scope._read_values,
            writes=scope._net_writes(),
            paused=True,
            emits=scope._emits,
            parent_runtime_stage_id=parent_rid,
            visit=visit,
            used_args=scope._used_args,
            control_idx=control_idx,
        )
        if rs.dispatch.on_pause:
            rs.dispatch.fire("on_pause", frame, rs.redactor.redact(sig.data) if rs.redactor.active else sig.data)
        rs.visits[prefix + node.id] -= 1
        raise Paused(sig.data, [CheckpointFrame(node_id=node.id, namespace=ns.name)], frame.runtime_stage_id) from None
    except BaseException as exc:
        fail_record(rs, node, frame, scope, exc, kind, parent_rid, control_idx, None)
        raise
    writes = scope._net_writes()
    commit = rs.record_stage(
        node,
        frame.runtime_stage_id,
        ns.name,
        kind,
        scope._reads,
        scope._read_values,
        writes,
        scope._emits,
        parent_rid,
        visit,
        scope._break,
        scope._used_args,
        decision,
        control_idx,
    )
    ns.apply(commit.idx, writes)
    if scope._break is not None and rs.dispatch.on_break:
        rs.dispatch.fire("on_break", frame, scope._break)
    if not prefix:
        rs.output = out
    return commit, out


def decision_of(node: Node, out: Any, *, multi: bool) -> tuple[list[str], dict[str, Any]]:
    if type(out) is PlannedDecision:  # a planned decide: its evidence is already the JSON
        chosen = list(out.branches)
        evidence = out.evidence_json()
    elif isinstance(out, DecisionResult):
        chosen = list(out.branches)
        evidence = out.evidence.model_dump(mode="json")
    elif isinstance(out, str):
        chosen = [out]
        evidence = {"kind": "select" if multi else "decide", "rules": [], "chosen": [out]}
    elif multi and isinstance(out, list | tuple) and all(isinstance(x, str) for x in out):
        chosen = list(dict.fromkeys(out))
        evidence = {"kind": "select", "rules": [], "chosen": chosen}
    else:
        wanted = "branch ids or select(...)" if multi else "a branch id or decide(...)"
        raise TypeError(f"{node.kind} '{node.id}' must return {wanted}, got {type(out).__name__}")
    return chosen, evidence


def pick_branch(node: Node, out: Any, box: list[str]) -> dict[str, Any]:
    """A decider's choice (its default when it names no branch of its own), kept in ``box``; returns the evidence."""
    chosen, evidence = decision_of(node, out, multi=False)
    pick = chosen[0] if chosen else None
    if pick not in node.branches:
        if node.default is None:
            raise UnknownBranchError(
                f"decider '{node.id}' chose branch '{str(pick)[:80]}', which it does not have, and no default is set"
            )
        evidence["fallback_from"] = pick
        evidence["default_used"] = True
        pick = node.default
    evidence["chosen"] = [pick]
    box.append(pick)
    return evidence


def pick_branches(node: Node, out: Any, box: list[list[str]]) -> dict[str, Any]:
    """A selector's choices (every one a branch it has), kept in ``box``; returns the evidence."""
    chosen, evidence = decision_of(node, out, multi=True)
    unknown = [c for c in chosen if c not in node.branches]
    if unknown:
        raise UnknownBranchError(f"selector '{node.id}' chose unknown branch '{unknown[0][:80]}'")
    box.append(chosen)
    return evidence


__all__ = [
    "call_stage",
    "decision_of",
    "fail_record",
    "new_frame",
    "pick_branch",
    "pick_branches",
    "run_fn",
    "run_stage",
]
