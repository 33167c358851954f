"""Parallel branches: children run concurrently over the same committed base, are recorded and applied in
declaration order, and merge explicitly at the join. Mounted branches may pause, one or several at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from agentfootprint.flow._frame import BRANCH_ANSWER, Paused, StageFrame, error_text
from agentfootprint.flow._frozen import thaw
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._stage import fail_record, new_frame, run_fn
from agentfootprint.flow._state import RunState
from agentfootprint.flow.chart import FlowChart, Node
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.errors import LoopLimitError, ParallelBranchError, ParallelMergeConflictError
from agentfootprint.flow.pause import _NO_ANSWER, PARALLEL_PAUSE, CheckpointFrame, PendingBranch
from agentfootprint.flow.scope import Scope

SubflowRunner = Callable[..., Awaitable[str | None]]
"""``run_subflow(rs, node, ns, prefix, parent_rid, visit, resume, control_idx, fork_branch=...)``."""


class Fork:
    """One execution of a fork's (or a selector's chosen) children, from start to join."""

    def __init__(
        self,
        rs: RunState,
        owner: Node,
        chart: FlowChart,
        ns: Namespace,
        prefix: str,
        owner_rid: str,
        control_idx: int | None,
        run_subflow: SubflowRunner,
        parent_rid: str | None = None,
    ) -> None:
        self.rs = rs
        self.parent_rid = parent_rid  # a parallel fork's join stands under the mount it runs in
        self.owner = owner
        self.chart = chart
        self.ns = ns
        self.prefix = prefix
        self.owner_rid = owner_rid
        self.control_idx = control_idx
        self.run_subflow = run_subflow
        self.resume: list[CheckpointFrame] = []
        self.answers: dict[str, Any] = {}
        self.carried: dict[str, PendingBranch] = {}
        self.frames: list[tuple[Node, StageFrame | None, Scope | None]] = []
        self.visits: list[int] = []
        self.results: list[Any] = []
        self.errors: list[BaseException | None] = []
        self.done_subflows: set[int] = set()
        self.pauses: dict[int, Paused] = {}

    async def run(self, child_ids: list[str], join_rid: str | None, resume: list[CheckpointFrame] | None) -> None:
        """Run the children, record them, then pause, fail or join (in that order of precedence)."""
        self.resume = resume or []
        self._open(self._resumed(child_ids))
        await self._run_all()
        by_key, failed = self._commit()
        if (self.pauses or self.carried) and not failed:
            raise self._paused()
        if failed:
            real = {k: v for k, v in failed.items() if not isinstance(v, asyncio.CancelledError)} or failed
            first_id, first = next(iter(real.items()))
            if self.owner.fail_fast:  # the error names the branch that raised it, not the last one started
                rids = [f.runtime_stage_id for n, f, _ in self.frames if n.id == first_id and f is not None]
                self.rs.current_rid = rids[0] if rids else self.owner_rid
                raise first
            self.rs.current_rid = self.owner_rid
            raise ParallelBranchError(real) from first
        self._join(by_key, join_rid)

    # -- start ------------------------------------------------------------------------------------------------
    def _resumed(self, child_ids: list[str]) -> list[str]:
        """The children this leg runs: on resume, not those already done; of several pending, the answered ones."""
        if not self.resume:
            return child_ids
        here = self.resume[0]
        skip = set(here.done_branches or ())
        child_ids = [c for c in child_ids if c not in skip]
        if here.pending:
            given = BRANCH_ANSWER.get()  # a pending branch of an outer fork hands its own answer dict down
            if given is not _NO_ANSWER:
                BRANCH_ANSWER.set(_NO_ANSWER)
            else:
                given, self.rs.resume_answer = self.rs.resume_answer, _NO_ANSWER
            self.answers = dict(given)  # checked against the pending branches before the run resumed
            self.carried = {b: p for b, p in here.pending.items() if b not in self.answers}
            child_ids = [c for c in child_ids if c in self.answers]
        return child_ids

    def _open(self, child_ids: list[str]) -> None:
        rs, chart = self.rs, self.chart
        for child in (chart.nodes[c] for c in child_ids):
            path = self.prefix + child.id
            visit = rs.visits.get(path, 0) + 1
            if visit > chart.max_iterations:
                raise LoopLimitError(path, chart.max_iterations)
            rs.visits[path] = visit
            self.visits.append(visit)
            if child.kind == "subflow":  # a mounted chart records its own enter/inner/exit commits
                self.frames.append((child, None, None))
                continue
            frame = new_frame(rs, child, self.prefix, self.ns, visit, True)
            self.frames.append((child, frame, Scope(self.ns, frame)))
        self.results = [None] * len(self.frames)
        self.errors = [None] * len(self.frames)

    # -- run --------------------------------------------------------------------------------------------------
    async def _one(self, i: int) -> None:
        child, frame, scope = self.frames[i]
        try:
            if frame is None or scope is None:
                await self._mounted(i, child)
            else:
                self.results[i] = await run_fn(self.rs, child, frame, scope)
        except Paused as paused:
            self.pauses[i] = paused
        except BaseException as exc:
            self.errors[i] = exc
            if self.owner.fail_fast:
                raise

    async def _mounted(self, i: int, child: Node) -> None:
        branch_resume = self.resume[1:]
        inner = branch_resume if branch_resume and branch_resume[0].node_id == child.id else []
        pending = self.resume[0].pending if self.resume else None
        if pending and child.id in self.answers:
            inner = list(pending[child.id].frames)
            BRANCH_ANSWER.set(self.answers[child.id])
        await self.run_subflow(
            self.rs,
            child,
            self.ns,
            self.prefix,
            self.owner_rid,
            self.visits[i],
            inner,
            self.control_idx,
            fork_branch=child.id,
        )
        self.done_subflows.add(i)

    async def _run_all(self) -> None:
        count = len(self.frames)
        if not self.owner.fail_fast:
            await asyncio.gather(*(self._one(i) for i in range(count)))
            return
        try:
            async with asyncio.TaskGroup() as tg:
                for i in range(count):
                    tg.create_task(self._one(i))
        except BaseExceptionGroup:
            pass
        for i in range(count):  # a sibling that never ran to the end was cancelled by the first failure
            scope = self.frames[i][2]
            staged = scope._staged if scope is not None else {}
            others_failed = any(e is not None for j, e in enumerate(self.errors) if j != i)
            if (
                self.errors[i] is None
                and i not in self.done_subflows
                and self.results[i] is None
                and not staged
                and others_failed
            ):
                self.errors[i] = asyncio.CancelledError("cancelled by fail_fast")

    # -- record -----------------------------------------------------------------------------------------------
    def _commit(self) -> tuple[dict[str, list[tuple[str, Commit, Write]]], dict[str, BaseException]]:
        """Record every plain branch in declaration order (a failed one as failed); writes grouped by key."""
        rs, ns = self.rs, self.ns
        by_key: dict[str, list[tuple[str, Commit, Write]]] = {}
        failed: dict[str, BaseException] = {}
        for i, (child, frame, scope) in enumerate(self.frames):
            exc = self.errors[i]
            if frame is None or scope is None:
                if exc is not None:
                    failed[child.id] = exc
                continue
            if exc is not None:
                fail_record(rs, child, frame, scope, exc, "branch", self.owner_rid, self.control_idx, child.id)
                failed[child.id] = exc
                continue
            writes = scope._net_writes()
            commit = rs.record(
                child,
                frame.runtime_stage_id,
                ns.name,
                kind="branch",
                reads=scope._reads,
                read_values=scope._read_values,
                writes=writes,
                emits=scope._emits,
                parent_runtime_stage_id=self.owner_rid,
                visit=frame.visit,
                used_args=scope._used_args,
                fork_branch=child.id,
                control_idx=self.control_idx,
            )
            ns.apply(commit.idx, writes)
            for w in writes:
                by_key.setdefault(w.path, []).append((child.id, commit, w))
        return by_key, failed

    def _paused(self) -> Paused:
        """The pause to raise: one branch's own position, or one frame holding every pending branch's."""
        frames = self.frames
        done = sorted(
            {
                *((self.resume[0].done_branches or ()) if self.resume else ()),
                *(frames[i][0].id for i in self.done_subflows),
                *(frames[i][0].id for i in range(len(frames)) if frames[i][1] is not None),
            }
        )
        if len(self.pauses) == 1 and not (self.resume and self.resume[0].pending):
            ((_, paused),) = self.pauses.items()
            paused.frames.insert(
                0,
                CheckpointFrame(
                    node_id=self.owner.id,
                    namespace=self.ns.name,
                    mount_runtime_stage_id=self.owner_rid,
                    done_branches=done,
                ),
            )
            return paused
        return several_paused(
            self.owner,
            self.ns,
            self.owner_rid,
            done,
            self.carried,
            {frames[i][0].id: p for i, p in self.pauses.items()},
        )

    def _join(self, by_key: dict[str, list[tuple[str, Commit, Write]]], join_rid: str | None) -> None:
        """The join commit: two branches writing one key conflict unless appending or ``merge`` decides."""
        owner, ns = self.owner, self.ns
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
                        scope[key] = owner.merge(key, {b: thaw(w.value) for b, _, w in entries})
                        sources[key] = [c.idx for _, c, _ in entries]
                    join_writes = scope._net_writes()
                except Exception as exc:
                    error = exc
        commit = self.rs.record(
            owner,
            join_rid or self.owner_rid,
            ns.name,
            kind="join",
            writes=join_writes if error is None else [],
            sources=sources,
            failed=error is not None,
            error=error_text(error) if error is not None else None,
            parent_runtime_stage_id=self.owner_rid if join_rid else self.parent_rid,
            visit=self.rs.visits.get(self.prefix + owner.id, 1),
        )
        if error is not None:
            raise error
        ns.apply(commit.idx, join_writes)


def several_paused(
    owner: Node,
    ns: Namespace,
    owner_rid: str,
    done: list[str],
    carried: dict[str, PendingBranch],
    paused: dict[str, Paused],
) -> Paused:
    """Several branches are waiting on a person: one checkpoint frame holds each one's position and question."""
    pending = dict(carried)
    for branch, p in paused.items():
        pending[branch] = PendingBranch(frames=p.frames, pause_data=p.data, paused_runtime_stage_id=p.rid)
    pending = {b: pending[b] for b in owner.children if b in pending}
    frame = CheckpointFrame(
        node_id=owner.id, namespace=ns.name, mount_runtime_stage_id=owner_rid, done_branches=done, pending=pending
    )
    data = {"kind": PARALLEL_PAUSE, "pending": {b: p.pause_data for b, p in pending.items()}}
    return Paused(data, [frame], next(iter(pending.values())).paused_runtime_stage_id)


__all__ = ["Fork", "SubflowRunner", "several_paused"]
