"""Fluent builder: ``flow_chart(...).then(...).decider(...).branch(...).end().build()``."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from agentfootprint.flow.chart import (
    DEFAULT_MAX_ITERATIONS,
    FlowChart,
    InputMap,
    MergeFn,
    Node,
    OutputMap,
    StageFn,
)
from agentfootprint.flow.errors import ChartBuildError

_ID_RE = re.compile(r"^[^/#\s][^/#]{0,127}$")


def _check_id(stage_id: Any) -> str:
    if not isinstance(stage_id, str) or not _ID_RE.match(stage_id) or stage_id != stage_id.strip():
        shown = stage_id[:60] if isinstance(stage_id, str) else type(stage_id).__name__
        raise ChartBuildError(f"invalid stage id {shown!r}: use 1-128 characters without '/', '#' or edge spaces")
    return stage_id


def _check_fn(fn: Any, where: str) -> None:
    if not callable(fn):
        raise ChartBuildError(f"stage '{where}' needs a callable fn(scope), got {type(fn).__name__}")


class FlowChartBuilder:
    """Builds a chart left to right; each call attaches after the previous one (the cursor)."""

    def __init__(
        self,
        name: str,
        fn: StageFn,
        *,
        id: str,
        description: str | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
    ) -> None:
        self._name = name
        self._nodes: dict[str, Node] = {}
        self._tails: list[str] = []
        self._max_iterations = max_iterations
        self._fork_count = 0
        node = self._add(Node(id=_check_id(id), name=name, kind="stage", fn=fn, description=description))
        _check_fn(fn, node.id)
        self._root = node.id
        self._tails = [node.id]

    # -- helpers -------------------------------------------------------------------------------------------
    def _add(self, node: Node) -> Node:
        if node.id in self._nodes:
            raise ChartBuildError(f"duplicate stage id '{node.id}'")
        self._nodes[node.id] = node
        return node

    def _link(self, node_id: str) -> None:
        if not self._tails:
            raise ChartBuildError(f"stage '{node_id}' is unreachable: the previous step loops back or breaks")
        for tail in self._tails:
            t = self._nodes[tail]
            if t.next is None and t.loop_to is None:
                t.next = node_id
        self._tails = [node_id]

    # -- linear --------------------------------------------------------------------------------------------
    def then(self, name: str, fn: StageFn, *, id: str, description: str | None = None) -> FlowChartBuilder:
        """Add a stage that runs after the current one."""
        _check_fn(fn, str(id))
        node = self._add(Node(id=_check_id(id), name=name, kind="stage", fn=fn, description=description))
        self._link(node.id)
        return self

    def subflow(
        self,
        id: str,
        chart: FlowChart,
        *,
        name: str | None = None,
        input_map: InputMap = None,
        output_map: OutputMap = None,
        propagate_break: bool = False,
        deps: Callable[[Any], Any] | None = None,
    ) -> FlowChartBuilder:
        """Mount a built chart with its own state namespace; maps say what goes in and what comes back.

        ``deps(parent_deps)`` gives the mounted chart's stages their per-run dependencies (default: the parent's)."""
        if deps is not None and not callable(deps):
            raise ChartBuildError(f"subflow '{id}' deps must be a callable of the parent's deps")
        if not isinstance(chart, FlowChart):
            raise ChartBuildError(f"subflow '{id}' needs a built FlowChart, got {type(chart).__name__}")
        node = self._add(
            Node(
                id=_check_id(id),
                name=name or chart.name,
                kind="subflow",
                subflow=chart,
                input_map=input_map,
                output_map=output_map,
                propagate_break=propagate_break,
                deps_map=deps,
            )
        )
        self._link(node.id)
        return self

    def parallel(
        self,
        children: Sequence[tuple[Any, ...]],
        *,
        merge: MergeFn | None = None,
        fail_fast: bool = False,
        id: str | None = None,
        name: str = "Parallel",
    ) -> FlowChartBuilder:
        """Run ``(id, name, fn)`` stages concurrently; their writes merge at the join (conflicts need ``merge``)."""
        if not children:
            raise ChartBuildError("parallel() needs at least one child stage")
        self._fork_count += 1
        fork = self._add(
            Node(
                id=_check_id(id or f"parallel-{self._fork_count}"),
                name=name,
                kind="fork",
                merge=merge,
                fail_fast=fail_fast,
            )
        )
        for child in children:
            if not isinstance(child, tuple | list) or len(child) not in (3, 5, 6):
                raise ChartBuildError(
                    f"parallel child of '{fork.id}' must be (id, name, fn) or "
                    "(id, name, chart, input_map, output_map[, deps])"
                )
            cid, cname, cfn = child[0], child[1], child[2]
            if isinstance(cfn, FlowChart):
                in_map, out_map = (child[3], child[4]) if len(child) >= 5 else (None, None)
                deps_map = child[5] if len(child) == 6 else None
                if deps_map is not None and not callable(deps_map):
                    raise ChartBuildError(f"parallel child '{cid}' deps must be a callable of the parent's deps")
                self._add(
                    Node(
                        id=_check_id(cid),
                        name=cname,
                        kind="subflow",
                        subflow=cfn,
                        input_map=in_map,
                        output_map=out_map,
                        deps_map=deps_map,
                        branch_of=fork.id,
                    )
                )
            else:
                _check_fn(cfn, str(cid))
                self._add(Node(id=_check_id(cid), name=cname, kind="stage", fn=cfn, branch_of=fork.id))
            fork.children.append(cid)
        self._link(fork.id)
        return self

    def decider(self, name: str, fn: StageFn, *, id: str, description: str | None = None) -> DeciderBuilder:
        """Single choice: ``fn`` returns a branch id or a ``decide(...)`` result."""
        _check_fn(fn, str(id))
        node = self._add(Node(id=_check_id(id), name=name, kind="decider", fn=fn, description=description))
        self._link(node.id)
        return DeciderBuilder(self, node)

    def selector(
        self,
        name: str,
        fn: StageFn,
        *,
        id: str,
        description: str | None = None,
        merge: MergeFn | None = None,
        fail_fast: bool = False,
    ) -> SelectorBuilder:
        """Multi choice: ``fn`` returns branch ids or a ``select(...)`` result; chosen branches run in parallel."""
        _check_fn(fn, str(id))
        node = self._add(
            Node(
                id=_check_id(id),
                name=name,
                kind="selector",
                fn=fn,
                description=description,
                merge=merge,
                fail_fast=fail_fast,
            )
        )
        self._link(node.id)
        return SelectorBuilder(self, node)

    def loop_to(self, stage_id: str) -> FlowChartBuilder:
        """Back-edge from the current stage to an earlier one (checked at build)."""
        if not self._tails:
            raise ChartBuildError(f"loop_to('{stage_id}') has no stage to loop from")
        for tail in self._tails:
            self._nodes[tail].loop_to = stage_id
        self._tails = []
        return self

    # -- output --------------------------------------------------------------------------------------------
    def build(self) -> FlowChart:
        """Validate (unknown/duplicate ids, empty deciders, bad defaults) and freeze the chart."""
        for node in self._nodes.values():
            if node.loop_to is not None and node.loop_to not in self._nodes:
                raise ChartBuildError(f"stage '{node.id}' loops to unknown stage id '{str(node.loop_to)[:80]}'")
            if node.kind in ("decider", "selector") and not node.branches:
                raise ChartBuildError(f"{node.kind} '{node.id}' has no branches")
            if node.default is not None and node.default not in node.branches:
                raise ChartBuildError(f"decider '{node.id}' default '{node.default[:80]}' is not one of its branches")
        if self._max_iterations < 1:
            raise ChartBuildError("max_iterations must be >= 1")
        return FlowChart(self._name, self._root, dict(self._nodes), max_iterations=self._max_iterations)

    def to_mermaid(self) -> str:
        return self.build().to_mermaid()

    @property
    def description(self) -> str:
        return self.build().description


class _BranchList:
    def __init__(self, parent: FlowChartBuilder, node: Node) -> None:
        self._parent = parent
        self._node = node

    def _add_branch(
        self,
        branch_id: str,
        name: str,
        fn: StageFn | FlowChart | None,
        description: str | None,
        input_map: InputMap,
        output_map: OutputMap,
    ) -> Node:
        _check_id(branch_id)
        if branch_id in self._node.branches:
            raise ChartBuildError(f"{self._node.kind} '{self._node.id}' has branch '{branch_id}' twice")
        if isinstance(fn, FlowChart):
            node = Node(
                id=branch_id,
                name=name,
                kind="subflow",
                subflow=fn,
                input_map=input_map,
                output_map=output_map,
                branch_of=self._node.id,
                description=description,
            )
        else:
            if fn is None:
                raise ChartBuildError(f"branch '{branch_id}' of '{self._node.id}' needs a fn or a chart")
            _check_fn(fn, branch_id)
            node = Node(id=branch_id, name=name, kind="stage", fn=fn, branch_of=self._node.id, description=description)
        self._parent._add(node)
        self._node.branches[branch_id] = branch_id
        return node


class DeciderBuilder(_BranchList):
    """Branches of a decider; ``end()`` returns to the chart, and the next stage follows every branch."""

    def branch(
        self,
        id: str,
        name: str,
        fn: StageFn | FlowChart | None = None,
        *,
        description: str | None = None,
        loop_to: str | None = None,
        input_map: InputMap = None,
        output_map: OutputMap = None,
        deps: Callable[[Any], Any] | None = None,
    ) -> DeciderBuilder:
        """A branch: a stage function, or a built chart mounted like ``subflow`` (maps and ``deps`` likewise)."""
        node = self._add_branch(id, name, fn, description, input_map, output_map)
        if deps is not None:
            if node.kind != "subflow" or not callable(deps):
                raise ChartBuildError(f"branch '{id}' deps must be a callable, given with a mounted chart")
            node.deps_map = deps
        node.loop_to = loop_to
        return self

    def default(self, branch_id: str) -> DeciderBuilder:
        """The branch taken when the decider's choice matches no branch."""
        self._node.default = branch_id
        return self

    def end(self) -> FlowChartBuilder:
        if not self._node.branches:
            raise ChartBuildError(f"decider '{self._node.id}' has no branches")
        tails = [b for b in self._node.branches if self._parent._nodes[b].loop_to is None]
        self._parent._tails = tails
        return self._parent


class SelectorBuilder(_BranchList):
    """Branches of a selector; the chosen ones run concurrently and join before the next stage."""

    def branch(
        self, id: str, name: str, fn: StageFn | None = None, *, description: str | None = None
    ) -> SelectorBuilder:
        if isinstance(fn, FlowChart):
            raise ChartBuildError(f"selector branch '{id}' must be a stage function")
        self._add_branch(id, name, fn, description, None, None)
        self._node.children.append(id)
        return self

    def end(self) -> FlowChartBuilder:
        if not self._node.branches:
            raise ChartBuildError(f"selector '{self._node.id}' has no branches")
        self._parent._tails = [self._node.id]
        return self._parent


def flow_chart(
    name: str,
    fn: StageFn,
    *,
    id: str,
    description: str | None = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
) -> FlowChartBuilder:
    """Start a chart with its first stage. ``max_iterations`` caps visits per node (loop guard)."""
    return FlowChartBuilder(name, fn, id=id, description=description, max_iterations=max_iterations)
