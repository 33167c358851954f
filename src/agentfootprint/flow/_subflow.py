"""Mounting a chart: its own namespace seeded by the input map on entry, the output map applied on exit, and
its per-run deps mapped from the parent's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentfootprint.flow._frame import StageFrame
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._stage import fail_record, new_frame
from agentfootprint.flow._state import RunState
from agentfootprint.flow.chart import Node
from agentfootprint.flow.pause import CheckpointFrame
from agentfootprint.flow.scope import Scope


def apply_map(mapping: Any, source: Scope, what: str, node_id: str) -> dict[str, Any]:
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


def enter(
    rs: RunState,
    node: Node,
    ns: Namespace,
    prefix: str,
    parent_rid: str | None,
    visit: int,
    resume: list[CheckpointFrame],
    control_idx: int | None,
    fork_branch: str | None,
) -> tuple[Namespace, str, str, list[CheckpointFrame]]:
    """Open the mount: ``(its namespace, its enter runtime id, the node to start at, the resume inside it)``."""
    assert node.subflow is not None
    sub_chart = node.subflow
    sub_name = prefix + node.id
    sub_deps = node.deps_map(ns.deps) if node.deps_map is not None else ns.deps
    if resume:  # re-entering a paused mount: its namespace comes from the checkpoint
        enter_rid = resume[0].mount_runtime_stage_id or rs.next_rid(prefix, node.id)
        sub_ns = rs.namespaces.get(sub_name) or Namespace(sub_name)
        sub_ns.deps = sub_deps
        rs.namespaces[sub_name] = sub_ns
        return sub_ns, enter_rid, resume[1].node_id, resume[1:]
    frame = new_frame(rs, node, prefix, ns, visit, False)
    parent_scope = Scope(ns, frame)
    try:
        seeded = apply_map(node.input_map, parent_scope, "input_map", node.id)
        staging = Scope(Namespace(sub_name), None)
        for k, v in seeded.items():
            staging[k] = v
        writes = staging._net_writes()
    except BaseException as exc:
        fail_record(rs, node, frame, parent_scope, exc, "subflow-enter", parent_rid, control_idx, None)
        raise
    sub_ns = Namespace(sub_name, deps=sub_deps)
    rs.namespaces[sub_name] = sub_ns
    commit = rs.record(
        node,
        frame.runtime_stage_id,
        sub_name,
        kind="subflow-enter",
        reads=parent_scope._reads,
        read_values=parent_scope._read_values,
        writes=writes,
        parent_runtime_stage_id=parent_rid,
        visit=visit,
        control_idx=control_idx,
        fork_branch=fork_branch,
    )
    sub_ns.apply(commit.idx, writes)
    if rs.dispatch.on_subflow:
        rs.dispatch.fire("on_subflow", frame, "enter", sub_chart.name)
    return sub_ns, frame.runtime_stage_id, sub_chart.root, []


def leave(
    rs: RunState, node: Node, ns: Namespace, sub_ns: Namespace, prefix: str, enter_rid: str, visit: int, brk: str | None
) -> None:
    """Close the mount: the output map's writes land in the parent as one ``subflow-exit`` commit."""
    assert node.subflow is not None
    frame: StageFrame = new_frame(rs, node, prefix, ns, visit, False)
    sub_scope = Scope(sub_ns, frame)
    staging = Scope(ns, frame)
    try:
        for k, v in apply_map(node.output_map, sub_scope, "output_map", node.id).items():
            staging[k] = v
        writes = staging._net_writes()
    except BaseException as exc:
        fail_record(rs, node, frame, sub_scope, exc, "subflow-exit", enter_rid, None, None)
        raise
    commit = rs.record(
        node,
        frame.runtime_stage_id,
        ns.name,
        kind="subflow-exit",
        reads=sub_scope._reads,
        read_values=sub_scope._read_values,
        writes=writes,
        parent_runtime_stage_id=enter_rid,
        visit=visit,
        break_reason=brk,
    )
    ns.apply(commit.idx, writes)
    if rs.dispatch.on_subflow:
        rs.dispatch.fire("on_subflow", frame, "exit", node.subflow.name)


__all__ = ["apply_map", "enter", "leave"]
