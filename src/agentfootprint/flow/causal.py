"""Backward slices over the commit log: which commits a step (or a key's value) depends on, and why."""

from __future__ import annotations

from collections import deque
from typing import Literal

from pydantic import BaseModel, Field

from agentfootprint.flow.commit import Commit
from agentfootprint.flow.snapshot import FlowSnapshot


class CausalEdge(BaseModel):
    """``data``: the child read ``key`` as written by ``parent``; ``control``: ``parent`` chose the child's branch."""

    parent: str
    parent_idx: int
    kind: Literal["data", "control"]
    key: str | None = None


class CausalNode(BaseModel):
    """One commit in a slice, with the edges to the commits it depends on."""

    runtime_stage_id: str
    stage_id: str
    stage_name: str
    idx: int
    depth: int
    keys_written: list[str]
    edges: list[CausalEdge] = Field(default_factory=list)
    initial_keys: list[str] = Field(default_factory=list)
    incomplete_sources: list[str] = Field(default_factory=list)


class CausalSlice(BaseModel):
    """The backward slice; ``missing`` explains an empty answer, ``truncated`` flags depth/node limits."""

    root: str | None
    key: str | None = None
    nodes: list[CausalNode] = Field(default_factory=list)
    truncated: bool = False
    missing: Literal["empty-log", "never-written", "initial-state", "unknown-stage"] | None = None

    @property
    def runtime_stage_ids(self) -> list[str]:
        return [n.runtime_stage_id for n in self.nodes]

    def node(self, runtime_stage_id: str) -> CausalNode | None:
        return next((n for n in self.nodes if n.runtime_stage_id == runtime_stage_id), None)

    def __str__(self) -> str:
        if self.missing is not None:
            what = f"key '{self.key}'" if self.key else f"stage '{self.root}'"
            return f"No causal slice for {what}: {self.missing}."
        if not self.nodes:
            return "(empty slice)"
        by_idx = {n.idx: n for n in self.nodes}
        lines: list[str] = []
        printed: set[int] = set()
        stack: list[tuple[int, int, str]] = [(self.nodes[0].idx, 0, "")]
        while stack:
            idx, depth, via = stack.pop()
            n = by_idx[idx]
            pad = "  " * depth
            head = f"{pad}{n.stage_name} ({n.runtime_stage_id}){via}"
            if idx in printed:
                lines.append(head + " (see above)")
                continue
            printed.add(idx)
            wrote = f" [wrote: {', '.join(n.keys_written)}]" if n.keys_written else ""
            lines.append(head + wrote)
            if n.initial_keys:
                lines.append(f"{pad}  (initial state) ← via {', '.join(n.initial_keys)}")
            if n.incomplete_sources:
                lines.append(f"{pad}  ⚠ read untracked {', '.join(n.incomplete_sources)}: slice may be incomplete")
            grouped: dict[int, list[str]] = {}
            for e in n.edges:
                if e.parent_idx in by_idx:
                    grouped.setdefault(e.parent_idx, []).append(e.key if e.kind == "data" and e.key else "")
            for parent_idx, keys in reversed(list(grouped.items())):
                data_keys = [k for k in keys if k]
                label = f" ← via {', '.join(data_keys)}" if data_keys else ""
                if len(data_keys) < len(keys):
                    label += (" and " if data_keys else " ← ") + "chose this branch"
                stack.append((parent_idx, depth + 1, label))
        if self.truncated:
            lines.append("⚠ slice truncated (depth or node limit)")
        return "\n".join(lines)


def _parents(c: Commit) -> list[tuple[int, str, str | None]]:
    out: list[tuple[int, str, str | None]] = []
    for key, idx in c.reads.items():
        if idx is not None:
            out.append((idx, "data", key))
    for key, idxs in c.sources.items():
        for idx in idxs:
            out.append((idx, "data", key))
    if c.control_idx is not None:
        out.append((c.control_idx, "control", None))
    return out


def _walk(log: list[Commit], start: Commit, max_depth: int, max_nodes: int, root: str, key: str | None) -> CausalSlice:
    nodes: dict[int, CausalNode] = {}
    queue: deque[tuple[Commit, int]] = deque([(start, 0)])
    truncated = False
    seen = {start.idx}
    order: list[int] = []
    while queue:
        c, depth = queue.popleft()
        node = CausalNode(
            runtime_stage_id=c.runtime_stage_id,
            stage_id=c.stage_id,
            stage_name=c.stage_name,
            idx=c.idx,
            depth=depth,
            keys_written=[w.path for w in c.writes],
            initial_keys=[k for k, i in c.reads.items() if i is None],
            incomplete_sources=["args"] if c.used_args else [],
        )
        nodes[c.idx] = node
        order.append(c.idx)
        for idx, kind, k in _parents(c):
            if not 0 <= idx < len(log) or idx >= c.idx:
                continue
            parent = log[idx]
            node.edges.append(
                CausalEdge(
                    parent=parent.runtime_stage_id,
                    parent_idx=idx,
                    kind=kind,
                    key=k,
                )
            )
            if idx in seen:
                continue
            if depth + 1 > max_depth or len(seen) >= max_nodes:
                truncated = True
                continue
            seen.add(idx)
            queue.append((parent, depth + 1))
    return CausalSlice(root=root, key=key, nodes=[nodes[i] for i in order], truncated=truncated)


def causal_chain(
    snapshot: FlowSnapshot, runtime_stage_id: str, *, max_depth: int = 20, max_nodes: int = 100
) -> CausalSlice:
    """Backward slice from one executed step: reader → last writer data edges, plus decider control edges."""
    start = snapshot.commit(runtime_stage_id)
    if start is None:
        return CausalSlice(root=runtime_stage_id, missing="empty-log" if not snapshot.commit_log else "unknown-stage")
    return _walk(snapshot.commit_log, start, max_depth, max_nodes, runtime_stage_id, None)


def slice_for_key(
    snapshot: FlowSnapshot,
    key: str,
    *,
    namespace: str = "",
    before: int | None = None,
    max_depth: int = 20,
    max_nodes: int = 100,
) -> CausalSlice:
    """Why ``key`` is what it is: the slice from its last writer (optionally the last before idx ``before``)."""
    log = snapshot.commit_log
    if not log:
        return CausalSlice(root=None, key=key, missing="empty-log")
    for c in reversed(log):
        if before is not None and c.idx >= before:
            continue
        if c.namespace == namespace and c.applied and any(w.path == key for w in c.writes):
            return _walk(log, c, max_depth, max_nodes, c.runtime_stage_id, key)
    if namespace == "" and key in snapshot.initial_state:
        return CausalSlice(root=None, key=key, missing="initial-state")
    return CausalSlice(root=None, key=key, missing="never-written")
