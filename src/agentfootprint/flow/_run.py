"""The executor: an iterative driver over chart nodes (no recursion per hop), recording one commit per step."""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentfootprint.errors import validation_field
from agentfootprint.flow._frozen import FrozenDict, freeze, thaw
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow.cancel import CancelToken
from agentfootprint.flow.chart import FlowChart, Node
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.decide import DecisionResult
from agentfootprint.flow.errors import (
    FlowCancelledError,
    InvalidCheckpointError,
    LoopLimitError,
    NotSerializableError,
    ParallelBranchError,
    ParallelMergeConflictError,
    PendingAnswersError,
    UnknownBranchError,
    attach_snapshot,
)
from agentfootprint.flow.pause import (
    _NO_ANSWER,
    PARALLEL_PAUSE,
    CheckpointFrame,
    FlowCheckpoint,
    NamespaceCheckpoint,
    PauseSignal,
    PendingBranch,
)
from agentfootprint.flow.recorder import Dispatch, Recorder, RecorderFailure
from agentfootprint.flow.redaction import RedactionPolicy, Redactor
from agentfootprint.flow.result import FlowResult
from agentfootprint.flow.scope import Scope, check_key
from agentfootprint.flow.snapshot import FlowSnapshot

_CURRENT: ContextVar[StageFrame | None] = ContextVar("agentfootprint_stage", default=None)
_BRANCH_ANSWER: ContextVar[Any] = ContextVar("agentfootprint_branch_answer", default=_NO_ANSWER)
_MAX_ERROR_TEXT = 500


def current_frame() -> StageFrame | None:
    """The stage running in this task, if any (used by ``pause()``)."""
    return _CURRENT.get()


class StageFrame:
    """What recorders and ``pause()`` know about the running stage."""

    __slots__ = (
        "in_branch",
        "namespace",
        "resume_answer",
        "run",
        "runtime_stage_id",
        "stage_id",
        "stage_name",
        "visit",
    )

    def __init__(self, run: RunState, node: Node, rid: str, namespace: str, visit: int, in_branch: bool) -> None:
        self.run = run
        self.stage_id = node.id
        self.stage_name = node.name
        self.runtime_stage_id = rid
        self.namespace = namespace
        self.visit = visit
        self.in_branch = in_branch
        self.resume_answer: Any = _NO_ANSWER

    @property
    def run_id(self) -> str:
        return self.run.run_id


class _Paused(Exception):
    def __init__(self, data: Any, frames: list[CheckpointFrame], rid: str) -> None:
        super().__init__("paused")
        self.data = data
        self.frames = frames
        self.rid = rid


def _error_text(exc: BaseException) -> str:
    msg = str(exc)
    text = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    return text[:_MAX_ERROR_TEXT]


class RunState:
    """Per-run bookkeeping: the log, the runtime-id counter, visit counts, namespaces, recorders."""

    def __init__(
        self,
        chart: FlowChart,
        *,
        run_id: str,
        args: Mapping[str, Any] | None,
        initial_state: Mapping[str, Any] | None,
        recorders: Iterable[Recorder],
        redaction: RedactionPolicy | None,
        cancel: CancelToken | None,
        timeout: float | None,
        deps: Any = None,
    ) -> None:
        self.chart = chart
        self.deps = deps
        self.run_id = run_id
        self.args: FrozenDict = freeze(dict(args or {}))
        for key in initial_state or {}:
            check_key(key)
        self.initial_state: dict[str, Any] = thaw(dict(initial_state or {}))
        self.log: list[Commit] = []
        self.counter = 0
        self.visits: dict[str, int] = {}
        self.namespaces: dict[str, Namespace] = {"": Namespace("", self.initial_state, deps)}
        self.redactor = Redactor(redaction or RedactionPolicy())
        self.failures: list[RecorderFailure] = []
        self.dispatch = Dispatch(recorders, self.redactor, self.failures)
        self.cancel = cancel
        self.deadline = (time.monotonic() + timeout) if timeout is not None else None
        self.resume_answer: Any = _NO_ANSWER
        self.output: Any = None
        self.current_rid: str | None = None

    # -- ids and records -----------------------------------------------------------------------------------
    def next_rid(self, prefix: str, node_id: str) -> str:
        rid = f"{prefix}{node_id}#{self.counter}"
        self.counter += 1
        return rid

    def record(self, node: Node, rid: str, namespace: str, **fields: Any) -> Commit:
        redacted = [w.path for w in fields.get("writes", ()) if self.redactor.key_redacted(w.path)]
        commit = Commit.model_construct(
            idx=len(self.log),
            stage_id=node.id,
            runtime_stage_id=rid,
            stage_name=node.name,
            namespace=namespace,
            redacted_paths=redacted,
            description=node.description,
            **fields,
        )
        self.log.append(commit)
        if self.dispatch.on_commit:
            self.dispatch.fire("on_commit", self._served_commit(commit))
        return commit

    def _served_commit(self, commit: Commit) -> Commit:
        return redact_commit(commit, self.redactor) if self.redactor.active else commit

    def check_boundary(self, node: Node) -> None:
        if self.cancel is not None and self.cancel.cancelled:
            raise FlowCancelledError(
                f"run cancelled before stage '{node.id}': {self.cancel.reason}",
                stage_id=node.id,
                reason="cancelled",
            )
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise FlowCancelledError(f"run timed out before stage '{node.id}'", stage_id=node.id, reason="timeout")

    def result_state(self) -> dict[str, Any]:
        """The caller's copy of the final root state (redacted when a policy is set)."""
        state: dict[str, Any] = thaw(self.namespaces[""].state)
        if self.redactor.active:
            state = {k: self.redactor.redact(v, k) for k, v in state.items()}
        return state

    # -- snapshots -----------------------------------------------------------------------------------------
    def snapshot(self, *, served: bool) -> FlowSnapshot:
        red = self.redactor
        log = self.log
        state = thaw(self.namespaces[""].state)
        initial = thaw(self.initial_state)
        subs = {name: thaw(ns.state) for name, ns in self.namespaces.items() if name}
        redacted = False
        if served and red.active:
            for c in log:
                for w in c.writes:
                    red.observe(w.path, w.value)
            for k, v in self.initial_state.items():
                red.observe(k, v)
            log = [redact_commit(c, red) for c in log]
            state = {k: red.redact(v, k) for k, v in state.items()}
            initial = {k: red.redact(v, k) for k, v in initial.items()}
            subs = {n: {k: red.redact(v, k) for k, v in s.items()} for n, s in subs.items()}
            redacted = True
        return FlowSnapshot(
            run_id=self.run_id,
            chart_id=self.chart.id,
            chart_name=self.chart.name,
            state=state,
            initial_state=initial,
            subflow_states=subs,
            commit_log=list(log),
            redacted=redacted,
        )


def redact_commit(commit: Commit, red: Redactor) -> Commit:
    """A copy of a commit with redacted values replaced (the original keeps real values)."""
    writes = [Write.model_construct(path=w.path, verb=w.verb, value=red.redact(w.value, w.path)) for w in commit.writes]
    emits = [{"name": e["name"], "payload": red.redact(e["payload"])} for e in commit.emits]
    decision = red.redact(commit.decision) if commit.decision is not None else None
    error = red.scrub_text(commit.error) if commit.error else commit.error
    brk = red.scrub_text(commit.break_reason) if commit.break_reason else commit.break_reason
    return commit.model_copy(
        update={"writes": writes, "emits": emits, "decision": decision, "error": error, "break_reason": brk}
    )


# -- stage execution ----------------------------------------------------------------------------------------
async def _call(fn: Callable[..., Any], scope: Scope) -> Any:
    out = fn(scope)
    if inspect.isawaitable(out):
        out = await out
    return out


async def _run_fn(rs: RunState, node: Node, frame: StageFrame, scope: Scope) -> Any:
    """Run a node's function with the frame set; a pause/failure is recorded by the caller."""
    if rs.dispatch.on_stage_start:
        rs.dispatch.fire("on_stage_start", frame)
    token = _CURRENT.set(frame)
    try:
        assert node.fn is not None
        return await _call(node.fn, scope)
    finally:
        _CURRENT.reset(token)


def _new_frame(rs: RunState, node: Node, prefix: str, ns: Namespace, visit: int, in_branch: bool) -> StageFrame:
    rid = rs.next_rid(prefix, node.id)
    frame = StageFrame(rs, node, rid, ns.name, visit, in_branch)
    branch_answer = _BRANCH_ANSWER.get()
    if branch_answer is not _NO_ANSWER and not in_branch:  # one of several pending branches, resumed
        frame.resume_answer = branch_answer
        _BRANCH_ANSWER.set(_NO_ANSWER)
    elif rs.resume_answer is not _NO_ANSWER and not in_branch:
        frame.resume_answer = rs.resume_answer
        rs.resume_answer = _NO_ANSWER
    rs.current_rid = rid
    return frame


def _fail_record(
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
        writes=writes,
        failed=True,
        error=_error_text(exc),
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


async def _run_stage(
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
    frame = _new_frame(rs, node, prefix, ns, visit, False)
    scope = Scope(ns, frame)
    decision: dict[str, Any] | None = None
    try:
        out = await _run_fn(rs, node, frame, scope)
        if post is not None:
            decision = post(out)
    except PauseSignal as sig:
        rs.record(
            node,
            frame.runtime_stage_id,
            ns.name,
            kind=kind,
            reads=dict(scope._reads),
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
        raise _Paused(sig.data, [CheckpointFrame(node_id=node.id, namespace=ns.name)], frame.runtime_stage_id) from None
    except BaseException as exc:
        _fail_record(rs, node, frame, scope, exc, kind, parent_rid, control_idx, None)
        raise
    writes = scope._net_writes()
    commit = rs.record(
        node,
        frame.runtime_stage_id,
        ns.name,
        kind=kind,
        reads=scope._reads,
        writes=writes,
        emits=scope._emits,
        parent_runtime_stage_id=parent_rid,
        visit=visit,
        break_reason=scope._break,
        used_args=scope._used_args,
        decision=decision,
        control_idx=control_idx,
    )
    ns.apply(commit.idx, writes)
    if scope._break is not None and rs.dispatch.on_break:
        rs.dispatch.fire("on_break", frame, scope._break)
    if not prefix:
        rs.output = out
    return commit, out


def _decision_of(node: Node, out: Any, *, multi: bool) -> tuple[list[str], dict[str, Any]]:
    if isinstance(out, DecisionResult):
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


# -- parallel branches ----------------------------------------------------------------------------------------
async def _run_branches(
    rs: RunState,
    owner: Node,
    child_ids: list[str],
    chart: FlowChart,
    ns: Namespace,
    prefix: str,
    owner_rid: str,
    control_idx: int | None,
    join_rid: str | None = None,
    resume: list[CheckpointFrame] | None = None,
) -> None:
    """Run children concurrently over the same committed base; record and apply them in declaration order.

    A mounted (subflow) branch may pause: its siblings finish, and the checkpoint resumes only that branch. When
    several pause, the checkpoint holds each one's position; a resume answers any of them by branch id."""
    carried: dict[str, PendingBranch] = {}
    answers: dict[str, Any] = {}
    if resume:
        skip = set(resume[0].done_branches or ())
        child_ids = [c for c in child_ids if c not in skip]
        if resume[0].pending:
            given = _BRANCH_ANSWER.get()  # a pending branch of an outer fork hands its own answer dict down
            if given is not _NO_ANSWER:
                _BRANCH_ANSWER.set(_NO_ANSWER)
            else:
                given, rs.resume_answer = rs.resume_answer, _NO_ANSWER
            answers = dict(given)  # checked against the pending branches before the run resumed
            carried = {b: p for b, p in resume[0].pending.items() if b not in answers}
            child_ids = [c for c in child_ids if c in answers]
    nodes = [chart.nodes[c] for c in child_ids]
    frames: list[tuple[Node, StageFrame, Scope]] = []
    visits: list[int] = []
    for child in nodes:
        path = prefix + child.id
        visit = rs.visits.get(path, 0) + 1
        if visit > chart.max_iterations:
            raise LoopLimitError(path, chart.max_iterations)
        rs.visits[path] = visit
        visits.append(visit)
        if child.kind == "subflow":  # a mounted chart records its own enter/inner/exit commits
            frames.append((child, None, None))  # type: ignore[arg-type]
            continue
        frame = _new_frame(rs, child, prefix, ns, visit, True)
        frames.append((child, frame, Scope(ns, frame)))

    results: list[Any] = [None] * len(frames)
    errors: list[BaseException | None] = [None] * len(frames)
    done_subflows: set[int] = set()
    pauses: dict[int, _Paused] = {}
    branch_resume = resume[1:] if resume else []

    async def one(i: int) -> None:
        child, frame, scope = frames[i]
        try:
            if frame is None:
                inner = branch_resume if branch_resume and branch_resume[0].node_id == child.id else []
                if child.id in answers:
                    inner = list(resume[0].pending[child.id].frames)
                    _BRANCH_ANSWER.set(answers[child.id])
                await _run_subflow(
                    rs, child, ns, prefix, owner_rid, visits[i], inner, control_idx, fork_branch=child.id
                )
                done_subflows.add(i)
            else:
                results[i] = await _run_fn(rs, child, frame, scope)
        except _Paused as paused:
            pauses[i] = paused
        except BaseException as exc:
            errors[i] = exc
            if owner.fail_fast:
                raise

    if owner.fail_fast:
        try:
            async with asyncio.TaskGroup() as tg:
                for i in range(len(frames)):
                    tg.create_task(one(i))
        except BaseExceptionGroup:
            pass
        for i in range(len(frames)):
            staged = frames[i][2]._staged if frames[i][2] is not None else {}
            if (
                errors[i] is None
                and i not in done_subflows
                and results[i] is None
                and not staged
                and _was_cancelled(errors, i)
            ):
                errors[i] = asyncio.CancelledError("cancelled by fail_fast")
    else:
        await asyncio.gather(*(one(i) for i in range(len(frames))))

    by_key: dict[str, list[tuple[str, Commit, Write]]] = {}
    failed: dict[str, BaseException] = {}
    for i, (child, frame, scope) in enumerate(frames):
        exc = errors[i]
        if frame is None:
            if exc is not None:
                failed[child.id] = exc
            continue
        if exc is not None:
            _fail_record(rs, child, frame, scope, exc, "branch", owner_rid, control_idx, child.id)
            failed[child.id] = exc
            continue
        writes = scope._net_writes()
        commit = rs.record(
            child,
            frame.runtime_stage_id,
            ns.name,
            kind="branch",
            reads=scope._reads,
            writes=writes,
            emits=scope._emits,
            parent_runtime_stage_id=owner_rid,
            visit=frame.visit,
            used_args=scope._used_args,
            fork_branch=child.id,
            control_idx=control_idx,
        )
        ns.apply(commit.idx, writes)
        for w in writes:
            by_key.setdefault(w.path, []).append((child.id, commit, w))

    join_node = owner
    if (pauses or carried) and not failed:
        done = sorted(
            {
                *(resume[0].done_branches or () if resume else ()),
                *(frames[i][0].id for i in done_subflows),
                *(frames[i][0].id for i in range(len(frames)) if frames[i][1] is not None),
            }
        )
        if len(pauses) == 1 and not (resume and resume[0].pending):
            ((_, paused),) = pauses.items()
            paused.frames.insert(
                0,
                CheckpointFrame(
                    node_id=owner.id, namespace=ns.name, mount_runtime_stage_id=owner_rid, done_branches=done
                ),
            )
            raise paused
        raise _several_paused(owner, ns, owner_rid, done, carried, {frames[i][0].id: p for i, p in pauses.items()})
    if failed:
        real = {k: v for k, v in failed.items() if not isinstance(v, asyncio.CancelledError)} or failed
        if owner.fail_fast:
            raise next(iter(real.values()))
        raise ParallelBranchError(real) from next(iter(real.values()))

    conflicts = {k: v for k, v in by_key.items() if len(v) > 1 and not all(w.verb == "append" for _, _, w in v)}
    join_writes: list[Write] = []
    sources: dict[str, list[int]] = {}
    error: BaseException | None = None
    if conflicts:
        if owner.merge is None:
            key = next(iter(conflicts))
            error = ParallelMergeConflictError(key, [b for b, _, _ in conflicts[key]])
        else:
            scope = Scope(ns, None)
            try:
                for key, entries in conflicts.items():
                    merged = owner.merge(key, {b: thaw(w.value) for b, _, w in entries})
                    scope[key] = merged
                    sources[key] = [c.idx for _, c, _ in entries]
                join_writes = scope._net_writes()
            except Exception as exc:
                error = exc
    commit = rs.record(
        join_node,
        join_rid or owner_rid,
        ns.name,
        kind="join",
        writes=join_writes if error is None else [],
        sources=sources,
        failed=error is not None,
        error=_error_text(error) if error is not None else None,
        parent_runtime_stage_id=owner_rid if join_rid else None,
        visit=rs.visits.get(prefix + owner.id, 1),
    )
    if error is not None:
        raise error
    ns.apply(commit.idx, join_writes)


def _several_paused(
    owner: Node,
    ns: Namespace,
    owner_rid: str,
    done: list[str],
    carried: dict[str, PendingBranch],
    paused: dict[str, _Paused],
) -> _Paused:
    """Several branches are waiting on a person: one checkpoint frame holds each one's position and question."""
    pending = dict(carried)
    for branch, p in paused.items():
        pending[branch] = PendingBranch(frames=p.frames, pause_data=p.data, paused_runtime_stage_id=p.rid)
    pending = {b: pending[b] for b in owner.children if b in pending}
    frame = CheckpointFrame(
        node_id=owner.id, namespace=ns.name, mount_runtime_stage_id=owner_rid, done_branches=done, pending=pending
    )
    data = {"kind": PARALLEL_PAUSE, "pending": {b: p.pause_data for b, p in pending.items()}}
    return _Paused(data, [frame], next(iter(pending.values())).paused_runtime_stage_id)


def _was_cancelled(errors: list[BaseException | None], i: int) -> bool:
    return any(e is not None for j, e in enumerate(errors) if j != i)


# -- subflows -------------------------------------------------------------------------------------------------
def _apply_map(mapping: Any, source: Scope, what: str, node_id: str) -> dict[str, Any]:
    """A subflow's input or output map read against ``source``: a callable, ``{target: source_key}`` or keys."""
    if mapping is None:
        return {}
    if callable(mapping):
        out = mapping(source)
        if not isinstance(out, Mapping):
            raise TypeError(f"{what} of subflow '{node_id}' must return a dict, got {type(out).__name__}")
        return dict(out)
    if isinstance(mapping, Mapping):
        return {target: source[key] for target, key in mapping.items() if key in source}
    return {k: source[k] for k in mapping if k in source}


def _map_in(node: Node, parent: Scope) -> dict[str, Any]:
    return _apply_map(node.input_map, parent, "input_map", node.id)


def _map_out(node: Node, sub: Scope) -> dict[str, Any]:
    return _apply_map(node.output_map, sub, "output_map", node.id)


async def _run_subflow(
    rs: RunState,
    node: Node,
    ns: Namespace,
    prefix: str,
    parent_rid: str | None,
    visit: int,
    resume: list[CheckpointFrame],
    control_idx: int | None,
    fork_branch: str | None = None,
) -> str | None:
    assert node.subflow is not None
    sub_chart = node.subflow
    sub_name = prefix + node.id
    sub_prefix = sub_name + "/"
    sub_deps = node.deps_map(ns.deps) if node.deps_map is not None else ns.deps
    if resume:
        enter_rid = resume[0].mount_runtime_stage_id or rs.next_rid(prefix, node.id)
        sub_ns = rs.namespaces.get(sub_name) or Namespace(sub_name)
        sub_ns.deps = sub_deps
        rs.namespaces[sub_name] = sub_ns
        start = resume[1].node_id
        inner_resume = resume[1:]
    else:
        frame = _new_frame(rs, node, prefix, ns, visit, False)
        enter_rid = frame.runtime_stage_id
        parent_scope = Scope(ns, frame)
        try:
            seeded = _map_in(node, parent_scope)
            staging = Scope(Namespace(sub_name), None)
            for k, v in seeded.items():
                staging[k] = v
            writes = staging._net_writes()
        except BaseException as exc:
            _fail_record(rs, node, frame, parent_scope, exc, "subflow-enter", parent_rid, control_idx, None)
            raise
        sub_ns = Namespace(sub_name, deps=sub_deps)
        rs.namespaces[sub_name] = sub_ns
        commit = rs.record(
            node,
            enter_rid,
            sub_name,
            kind="subflow-enter",
            reads=parent_scope._reads,
            writes=writes,
            parent_runtime_stage_id=parent_rid,
            visit=visit,
            control_idx=control_idx,
            fork_branch=fork_branch,
        )
        sub_ns.apply(commit.idx, writes)
        if rs.dispatch.on_subflow:
            rs.dispatch.fire("on_subflow", frame, "enter", sub_chart.name)
        start = sub_chart.root
        inner_resume = []
    try:
        brk = await _drive(rs, sub_chart, sub_ns, sub_prefix, start, enter_rid, inner_resume)
    except _Paused as paused:
        paused.frames.insert(0, CheckpointFrame(node_id=node.id, namespace=ns.name, mount_runtime_stage_id=enter_rid))
        rs.visits[prefix + node.id] -= 1
        raise
    frame = _new_frame(rs, node, prefix, ns, visit, False)
    sub_scope = Scope(sub_ns, frame)
    staging = Scope(ns, frame)
    try:
        for k, v in _map_out(node, sub_scope).items():
            staging[k] = v
        writes = staging._net_writes()
    except BaseException as exc:
        _fail_record(rs, node, frame, sub_scope, exc, "subflow-exit", enter_rid, None, None)
        raise
    commit = rs.record(
        node,
        frame.runtime_stage_id,
        ns.name,
        kind="subflow-exit",
        reads=sub_scope._reads,
        writes=writes,
        parent_runtime_stage_id=enter_rid,
        visit=visit,
        break_reason=brk,
    )
    ns.apply(commit.idx, writes)
    if rs.dispatch.on_subflow:
        rs.dispatch.fire("on_subflow", frame, "exit", sub_chart.name)
    return brk if node.propagate_break else None


# -- the driver -----------------------------------------------------------------------------------------------
async def _drive(
    rs: RunState,
    chart: FlowChart,
    ns: Namespace,
    prefix: str,
    start: str,
    parent_rid: str | None,
    resume: list[CheckpointFrame],
) -> str | None:
    """Iterate over nodes from ``start``; returns a break reason when a stage broke the flow."""
    node_id: str | None = start
    control_idx: int | None = None
    limit = chart.max_iterations
    while node_id is not None:
        node = chart.nodes[node_id]
        rs.check_boundary(node)
        path = prefix + node.id
        visit = rs.visits.get(path, 0) + 1
        if visit > limit:
            raise LoopLimitError(path, limit)
        rs.visits[path] = visit
        if visit > 1 and rs.dispatch.on_loop:
            rs.dispatch.fire("on_loop", path, visit)
        kind = node.kind
        here_resume = (
            resume if resume and resume[0].node_id == node.id and (len(resume) > 1 or resume[0].pending) else []
        )
        resume = []
        if kind == "stage":
            commit, _ = await _run_stage(rs, node, ns, prefix, parent_rid, visit, control_idx=control_idx)
            control_idx = None
            if commit.break_reason is not None:
                return commit.break_reason
            node_id = node.loop_to or node.next
        elif kind == "decider":
            chosen_box: list[str] = []

            def post(out: Any, node: Node = node, box: list[str] = chosen_box) -> dict[str, Any]:
                chosen, evidence = _decision_of(node, out, multi=False)
                pick = chosen[0] if chosen else None
                if pick not in node.branches:
                    if node.default is None:
                        raise UnknownBranchError(
                            f"decider '{node.id}' chose branch '{str(pick)[:80]}', which it does not have, "
                            "and no default is set"
                        )
                    evidence["fallback_from"] = pick
                    evidence["default_used"] = True
                    pick = node.default
                evidence["chosen"] = [pick]
                box.append(pick)
                return evidence

            commit, _ = await _run_stage(
                rs, node, ns, prefix, parent_rid, visit, kind="decider", control_idx=control_idx, post=post
            )
            if rs.dispatch.on_decision:
                rs.dispatch.fire("on_decision", commit.runtime_stage_id, commit.decision)
            if commit.break_reason is not None:
                return commit.break_reason
            control_idx = commit.idx
            node_id = node.branches[chosen_box[0]]
        elif kind == "selector":
            picked: list[list[str]] = []

            def post_sel(out: Any, node: Node = node, box: list[list[str]] = picked) -> dict[str, Any]:
                chosen, evidence = _decision_of(node, out, multi=True)
                unknown = [c for c in chosen if c not in node.branches]
                if unknown:
                    raise UnknownBranchError(f"selector '{node.id}' chose unknown branch '{unknown[0][:80]}'")
                box.append(chosen)
                return evidence

            commit, _ = await _run_stage(
                rs,
                node,
                ns,
                prefix,
                parent_rid,
                visit,
                kind="selector",
                control_idx=control_idx,
                post=post_sel,
            )
            control_idx = None
            if rs.dispatch.on_decision:
                rs.dispatch.fire("on_decision", commit.runtime_stage_id, commit.decision)
            if commit.break_reason is not None:
                return commit.break_reason
            if picked[0]:
                if rs.dispatch.on_fork:
                    rs.dispatch.fire("on_fork", commit.runtime_stage_id, picked[0])
                await _run_branches(
                    rs,
                    node,
                    picked[0],
                    chart,
                    ns,
                    prefix,
                    commit.runtime_stage_id,
                    commit.idx,
                    rs.next_rid(prefix, node.id),
                )
            node_id = node.loop_to or node.next
        elif kind == "fork":
            fork_rid = (here_resume[0].mount_runtime_stage_id if here_resume else None) or rs.next_rid(prefix, node.id)
            if rs.dispatch.on_fork and not here_resume:
                rs.dispatch.fire("on_fork", fork_rid, list(node.children))
            try:
                await _run_branches(rs, node, node.children, chart, ns, prefix, fork_rid, None, resume=here_resume)
            except _Paused:
                rs.visits[prefix + node.id] -= 1
                raise
            control_idx = None
            node_id = node.loop_to or node.next
        else:  # subflow
            brk = await _run_subflow(rs, node, ns, prefix, parent_rid, visit, here_resume, control_idx)
            control_idx = None
            if brk is not None:
                return brk
            node_id = node.loop_to or node.next
    return None


# -- entry points ---------------------------------------------------------------------------------------------
def _checkpoint(rs: RunState, paused: _Paused) -> dict[str, Any]:
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
                    brk = await _drive(rs, rs.chart, rs.namespaces[""], "", start, None, resume)
            else:
                brk = await _drive(rs, rs.chart, rs.namespaces[""], "", start, None, resume)
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
    except _Paused as paused:
        checkpoint = _checkpoint(rs, paused)
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
        paused_result._raw_state = thaw(rs.namespaces[""].state)
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
    snap = rs.snapshot(served=True)
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
    result._raw_state = thaw(rs.namespaces[""].state)
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
    )
    return await _execute(rs, chart.root, [])


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
    _check_frames(chart, cp.frames, "frames")
    return cp


def _check_frames(chart: FlowChart, frames: list[CheckpointFrame], where: str) -> None:
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
                _check_frames(current, p.frames, f"{field}.pending.{branch[:80]}.frames")
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
) -> FlowResult:
    cp = load_checkpoint(chart, checkpoint)
    rs = RunState(
        chart,
        run_id=cp.run_id,
        args=cp.args,
        initial_state=cp.initial_state,
        recorders=recorders,
        redaction=redaction,
        cancel=cancel,
        timeout=timeout,
        deps=deps,
    )
    rs.log = list(cp.commit_log)
    rs.counter = cp.counter
    rs.visits = dict(cp.visits)
    rs.namespaces = {}
    for name, nsc in cp.namespaces.items():
        ns = Namespace(name, nsc.state, deps if name == "" else None)
        ns.last_writer = dict(nsc.last_writer)
        rs.namespaces[name] = ns
    check_pending_answers(cp.frames, answer)
    rs.resume_answer = answer
    if rs.dispatch.on_resume:
        rs.dispatch.fire("on_resume", cp.paused_runtime_stage_id)
    return await _execute(rs, cp.frames[0].node_id, list(cp.frames))
