"""The driver: an iterative walk over a chart's nodes (no recursion per hop), one small step per node kind."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agentfootprint.flow import _subflow
from agentfootprint.flow._branches import Fork
from agentfootprint.flow._frame import Paused
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._stage import pick_branch, pick_branches, run_stage
from agentfootprint.flow._state import RunState
from agentfootprint.flow.chart import FlowChart, Node
from agentfootprint.flow.errors import LoopLimitError
from agentfootprint.flow.pause import CheckpointFrame


@dataclass(slots=True)
class _At:
    """Where the driver stands: the node, its visit, the control commit it depends on, the resume inside it."""

    rs: RunState
    chart: FlowChart
    ns: Namespace
    prefix: str
    parent_rid: str | None
    node: Node
    visit: int
    control_idx: int | None
    resume: list[CheckpointFrame]


Next = tuple[str | None, int | None, str | None]
"""``(next node id, control commit idx for it, break reason)``; a break reason ends the walk."""


async def drive(
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
    while node_id is not None:
        node = chart.nodes[node_id]
        visit = _visit(rs, chart, node, prefix)
        if node.kind == "stage":  # the common hop, _stage inlined (a plain stage has no resume of its own)
            resume = []
            commit, _ = await run_stage(rs, node, ns, prefix, parent_rid, visit, control_idx=control_idx)
            if commit.break_reason is not None:
                return commit.break_reason
            node_id, control_idx = node.loop_to or node.next, None
            continue
        here = resume if resume and resume[0].node_id == node.id and (len(resume) > 1 or resume[0].pending) else []
        resume = []
        at = _At(rs, chart, ns, prefix, parent_rid, node, visit, control_idx, here)
        node_id, control_idx, brk = await _STEPS[node.kind](at)
        if brk is not None:
            return brk
    return None


def _visit(rs: RunState, chart: FlowChart, node: Node, prefix: str) -> int:
    """Check the run may go on, count the visit (a loop past its limit is an error) and report loops."""
    rs.check_boundary(node)
    path = prefix + node.id
    visit = rs.visits.get(path, 0) + 1
    if visit > chart.max_iterations:
        raise LoopLimitError(path, chart.max_iterations)
    rs.visits[path] = visit
    if visit > 1 and rs.dispatch.on_loop:
        rs.dispatch.fire("on_loop", path, visit)
    return visit


def _after(node: Node) -> str | None:
    return node.loop_to or node.next


async def _decider(at: _At) -> Next:
    chosen: list[str] = []
    commit, _ = await run_stage(
        at.rs,
        at.node,
        at.ns,
        at.prefix,
        at.parent_rid,
        at.visit,
        kind="decider",
        control_idx=at.control_idx,
        post=lambda out: pick_branch(at.node, out, chosen),
    )
    if at.rs.dispatch.on_decision:
        at.rs.dispatch.fire("on_decision", commit.runtime_stage_id, commit.decision)
    if commit.break_reason is not None:
        return None, None, commit.break_reason
    return at.node.branches[chosen[0]], commit.idx, None


async def _selector(at: _At) -> Next:
    rs, node = at.rs, at.node
    picked: list[list[str]] = []
    commit, _ = await run_stage(
        rs,
        node,
        at.ns,
        at.prefix,
        at.parent_rid,
        at.visit,
        kind="selector",
        control_idx=at.control_idx,
        post=lambda out: pick_branches(node, out, picked),
    )
    if rs.dispatch.on_decision:
        rs.dispatch.fire("on_decision", commit.runtime_stage_id, commit.decision)
    if commit.break_reason is not None:
        return None, None, commit.break_reason
    if picked[0]:
        if rs.dispatch.on_fork:
            rs.dispatch.fire("on_fork", commit.runtime_stage_id, picked[0])
        fork = Fork(rs, node, at.chart, at.ns, at.prefix, commit.runtime_stage_id, commit.idx, run_subflow)
        await fork.run(picked[0], rs.next_rid(at.prefix, node.id), None)
    return _after(node), None, None


async def _fork(at: _At) -> Next:
    rs, node = at.rs, at.node
    fork_rid = (at.resume[0].mount_runtime_stage_id if at.resume else None) or rs.next_rid(at.prefix, node.id)
    if rs.dispatch.on_fork and not at.resume:
        rs.dispatch.fire("on_fork", fork_rid, list(node.children))
    try:
        await Fork(rs, node, at.chart, at.ns, at.prefix, fork_rid, None, run_subflow, at.parent_rid).run(
            node.children, None, at.resume
        )
    except Paused:
        rs.visits[at.prefix + node.id] -= 1
        raise
    return _after(node), None, None


async def _mount(at: _At) -> Next:
    brk = await run_subflow(at.rs, at.node, at.ns, at.prefix, at.parent_rid, at.visit, at.resume, at.control_idx)
    return _after(at.node), None, brk


async def run_subflow(
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
    """Enter the mount, drive its chart, leave it; a break inside propagates only when the mount says so."""
    assert node.subflow is not None
    sub_ns, enter_rid, start, inner = _subflow.enter(
        rs, node, ns, prefix, parent_rid, visit, resume, control_idx, fork_branch
    )
    try:
        brk = await drive(rs, node.subflow, sub_ns, prefix + node.id + "/", start, enter_rid, inner)
    except Paused as paused:
        paused.frames.insert(0, CheckpointFrame(node_id=node.id, namespace=ns.name, mount_runtime_stage_id=enter_rid))
        rs.visits[prefix + node.id] -= 1
        raise
    _subflow.leave(rs, node, ns, sub_ns, prefix, enter_rid, visit, brk)
    return brk if node.propagate_break else None


_STEPS: dict[str, Callable[[_At], Awaitable[Next]]] = {
    "decider": _decider,
    "selector": _selector,
    "fork": _fork,
    "subflow": _mount,
}


__all__ = ["drive", "run_subflow"]
