"""The run as data: final state, the commit log, the execution tree; ``state_at(idx)`` replays the log."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.flow._frozen import thaw
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow.commit import Commit

_ABSENT: Any = object()


class TreeNode(BaseModel):
    """One executed step; subflow and parallel-branch steps nest under the step that started them."""

    runtime_stage_id: str
    stage_id: str
    stage_name: str
    kind: str
    idx: int
    failed: bool = False
    children: list[TreeNode] = Field(default_factory=list)


class FlowSnapshot(BaseModel):
    """A run's record. The served snapshot (``result.snapshot``) is redacted when a policy is set."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    chart_id: str
    chart_name: str
    state: dict[str, Any]
    initial_state: dict[str, Any] = Field(default_factory=dict)
    subflow_states: dict[str, dict[str, Any]] = Field(default_factory=dict)
    commit_log: list[Commit]
    redacted: bool = False
    resumed_from: dict[str, Any] | None = None
    """On a resumed leg: the run it continues (``run_id``), how many commits came from its checkpoint
    (``commits``) and what the resumer knew of that checkpoint's origin (e.g. ``sealed``); None otherwise."""

    def state_at(self, idx: int, namespace: str = "") -> dict[str, Any]:
        """State of ``namespace`` right after commit ``idx`` (failed/paused commits change nothing)."""
        ns = Namespace(namespace, self.initial_state if namespace == "" else None)
        for c in self.commit_log:
            if c.idx > idx:
                break
            if c.kind == "subflow-enter" and c.namespace == namespace and namespace:
                ns = Namespace(namespace)
            if c.namespace == namespace and c.applied:
                ns.apply(c.idx, c.writes)
        return thaw(ns.state)  # type: ignore[no-any-return]

    def value_at(self, key: str, idx: int, namespace: str = "", default: Any = None) -> Any:
        """One key's value right after commit ``idx``, folded from its last ``set``/``delete`` anchor."""
        anchor: int | None = None
        for c in reversed(self.commit_log[: idx + 1]):
            if c.namespace != namespace or not c.applied:
                continue
            if c.kind == "subflow-enter" and namespace:
                anchor = c.idx
                break
            if any(w.path == key and w.verb in ("set", "delete") for w in c.writes):
                anchor = c.idx
                break
        value: Any = self.initial_state.get(key, _ABSENT) if (anchor is None and namespace == "") else _ABSENT
        start = 0 if anchor is None else anchor
        for c in self.commit_log[start : idx + 1]:
            if c.namespace != namespace or not c.applied:
                continue
            for w in c.writes:
                if w.path != key:
                    continue
                if w.verb == "set":
                    value = w.value
                elif w.verb == "delete":
                    value = _ABSENT
                elif w.verb == "append":
                    value = [*(value if isinstance(value, list) else []), *w.value]
                else:
                    value = {**(value if isinstance(value, dict) else {}), **w.value}
        return default if value is _ABSENT else thaw(value)

    def replay(self) -> dict[str, Any]:
        """Final root state recomputed from the initial state and the log alone."""
        return self.state_at(len(self.commit_log) - 1) if self.commit_log else thaw(self.initial_state)

    def commit(self, runtime_stage_id: str) -> Commit | None:
        """The commit recorded for a runtime stage id, or None."""
        for c in reversed(self.commit_log):
            if c.runtime_stage_id == runtime_stage_id:
                return c
        return None

    @property
    def execution_tree(self) -> list[TreeNode]:
        """Executed steps in order; inner steps nest under their subflow mount or fork (a fork records its own
        commit, the join, after its branches: it stands where its first branch ran)."""
        first: dict[str, Commit] = {}
        for c in self.commit_log:
            if c.kind != "subflow-exit":
                first.setdefault(c.runtime_stage_id, c)
        nodes: dict[str, TreeNode] = {}
        roots: list[TreeNode] = []
        placing: set[str] = set()

        def node_for(rid: str) -> TreeNode:
            if rid in nodes:
                return nodes[rid]
            c = first[rid]
            node = TreeNode(
                runtime_stage_id=rid,
                stage_id=c.stage_id,
                stage_name=c.stage_name,
                kind=c.kind,
                idx=c.idx,
                failed=c.failed,
            )
            nodes[rid] = node
            placing.add(rid)  # a loaded log whose parents loop is cut where the loop closes
            parent = c.parent_runtime_stage_id
            if parent is not None and parent in first and parent not in placing:
                node_for(parent).children.append(node)
            else:
                roots.append(node)
            placing.discard(rid)
            return node

        for rid in first:
            node_for(rid)
        return roots


@runtime_checkable
class Recorded(Protocol):
    """Anything that keeps its last run's record: an agent, a composition."""

    def last_snapshot(self) -> FlowSnapshot | None: ...
