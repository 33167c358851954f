"""Graph: nodes joined by conditional edges, cycles included, under a step budget; every route is recorded."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentfootprint.agent.models import StoppedEarly
from agentfootprint.compose._base import (
    Composition,
    CompositionBuildError,
    checked_output,
    composition_key,
    keyed,
    member_deps,
    member_id,
    seed_stage,
)
from agentfootprint.compose._dataflow import (
    INPUT,
    FunctionStep,
    MessageFn,
    StepSpec,
    as_text,
    declare_step,
    out_key,
    with_members,
)
from agentfootprint.compose.workflow import function_stage, member_input, member_output
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import CompositionRouteDecided
from agentfootprint.flow import FlowChart, Scope, decide, flow_chart, thaw
from agentfootprint.flow.decide import DecisionEvidence, DecisionResult

END = "END"
HARD_CEILING = 500
EdgeWhen = Callable[[Any], bool]
OnExhausted = Literal["finish", "raise"]
_END_STAGE = "final"


class GraphBudgetError(AgentFootprintError, RuntimeError):
    """A graph spent its step budget while an edge still led on (raised only with ``on_exhausted="raise"``)."""

    code = "ERR_GRAPH_BUDGET_SPENT"

    def __init__(self, graph: str, steps: int, node: str) -> None:
        super().__init__(
            f"Graph '{graph[:80]}' spent its budget of {steps} steps; an edge from '{node[:80]}' still led on"
        )
        self.steps = steps
        self.node = node


@dataclass(frozen=True)
class Edge:
    """``source → target`` taken when ``when(source's output)`` holds (always, without ``when``)."""

    source: str
    target: str
    when: EdgeWhen | None
    label: str


class Graph(Composition):
    """One node runs at a time; after it, the first of its edges whose condition holds picks the next node."""

    kind = "Graph"

    def __init__(
        self,
        name: str,
        specs: list[StepSpec],
        edges: list[Edge],
        start: str,
        max_steps: int,
        on_exhausted: OnExhausted,
    ) -> None:
        self._specs = specs
        self._edges = edges
        self._start = start
        self._max_steps = max_steps
        self._on_exhausted = on_exhausted
        super().__init__(name, [(s.name, s.runner) for s in specs])

    @classmethod
    def create(cls, name: str = "graph", *, checkpoint_key: str | bytes | None = None) -> GraphBuilder:
        """A builder; with ``checkpoint_key`` every pause checkpoint is sealed and ``resume`` checks the seal first."""
        return GraphBuilder(name, checkpoint_key=checkpoint_key)

    @property
    def nodes(self) -> list[str]:
        return [s.name for s in self._specs]

    @property
    def edges(self) -> list[Edge]:
        return list(self._edges)

    @property
    def max_steps(self) -> int:
        return self._max_steps

    def last_path(self) -> list[str]:
        """The nodes the last run visited, in order (a revisited node appears each time)."""
        snap = self.last_snapshot()
        return [str(n) for n in (snap.state.get("path") or [])] if snap is not None else []

    def _build_chart(self) -> FlowChart:
        taken: set[str] = {_END_STAGE}
        ids = {s.name: member_id(s.name, i, taken) for i, s in enumerate(self._specs)}
        builder = flow_chart(
            self.name, self._seed, id="seed", description="Take the graph's input", max_iterations=self._max_steps + 2
        ).decider(
            "Route", self._route_stage(ids), id="route", description="Follow the first edge whose condition holds"
        )
        for spec in self._specs:
            names = spec.inputs if spec.inputs is not None else _handed_over
            present = spec.inputs is not None
            if isinstance(spec.runner, FunctionStep):
                builder = builder.branch(
                    ids[spec.name], spec.name, function_stage(self.name, spec, names, present), loop_to="route"
                )
            else:
                builder = builder.branch(
                    ids[spec.name],
                    spec.name,
                    spec.runner.chart,
                    loop_to="route",
                    input_map=member_input(spec, names, present),
                    output_map=checked_output(spec.runner, ids[spec.name], member_output(spec.name)),
                    deps=member_deps(spec.runner),
                )
        return (
            builder.branch(_END_STAGE, "Finish", self._finish, description="Hand over the last node's output")
            .end()
            .build()
        )

    @staticmethod
    def _seed(scope: Scope) -> None:
        seed_stage(scope)
        scope["steps"] = 0
        scope["path"] = []

    def _route_stage(self, ids: dict[str, str]) -> Callable[[Scope], DecisionResult]:
        by_source: dict[str, list[Edge]] = {}
        for edge in self._edges:
            by_source.setdefault(edge.source, []).append(edge)
        stage_of = {**ids, END: _END_STAGE}
        node_of = {v: k for k, v in ids.items()}
        budget = self._max_steps

        def route(scope: Scope) -> DecisionResult:
            at = scope.get("at")
            steps = int(scope.get("steps") or 0)
            if at is None:
                rules = [{"when": lambda s: True, "then": ids[self._start], "label": f"start at {self._start}"}]
            else:
                rules = [_edge_rule(edge, stage_of[edge.target]) for edge in by_source.get(at, [])]
            decision = decide(scope, rules, _END_STAGE)
            if decision.branch != _END_STAGE and steps >= budget:
                decision = self._over_budget(scope, decision, steps, str(at))
            chosen = decision.branch
            if chosen != _END_STAGE and chosen is not None:
                node = node_of[chosen]
                scope["came_from"] = at
                scope["at"] = node
                scope["steps"] = steps + 1
                scope.append("path", node)
            self._emit(
                ev.COMPOSITION_ROUTE_DECIDED,
                lambda: CompositionRouteDecided(composition=self.name, from_=at, chosen=node_of.get(chosen or "", END)),
                scope.run_id or "",
            )
            return decision

        return route

    def _over_budget(self, scope: Scope, decision: DecisionResult, steps: int, at: str) -> DecisionResult:
        if self._on_exhausted == "raise":
            raise GraphBudgetError(self.name, steps, at)
        spent = decide(
            scope,
            [
                {
                    "when": {"steps": {"gte": self._max_steps}},
                    "then": _END_STAGE,
                    "label": f"budget of {steps} steps spent",
                }
            ],
            None,
        )
        rules = [
            *decision.evidence.rules,
            spent.evidence.rules[0].model_copy(update={"index": len(decision.evidence.rules)}),
        ]
        scope["stopped"] = {"reason": "max-steps", "steps": steps, "node": at}
        return DecisionResult(
            branches=(_END_STAGE,),
            evidence=DecisionEvidence(kind="decide", rules=rules, chosen=[_END_STAGE], default=_END_STAGE),
        )

    @staticmethod
    def _finish(scope: Scope) -> None:
        at = scope.get("at")
        value = thaw(scope.get(out_key(at))) if at is not None else None
        scope["output"] = value
        scope["answer"] = as_text(value) if value is not None else ""

    def _stopped_early(self, raw: Mapping[str, Any]) -> StoppedEarly | None:
        stopped = raw.get("stopped")
        if not stopped:
            return None
        return StoppedEarly(reason="max-steps", iteration=int(stopped["steps"]), pending_tool_calls=0)

    def _rebuilt(self, members: list[tuple[str, Any]]) -> Graph:
        specs = with_members(self._specs, members)
        return Graph(self.name, specs, self._edges, self._start, self._max_steps, self._on_exhausted)


def _handed_over(scope: Scope) -> list[str]:
    """A node's default input: the output of the node that handed over to it (the graph's input for the first)."""
    came_from = scope.get("came_from")
    return [str(came_from)] if came_from is not None else [INPUT]


def _edge_rule(edge: Edge, target_stage: str) -> dict[str, Any]:
    key = out_key(edge.source)
    when = edge.when
    if when is None:
        return {"when": lambda s: True, "then": target_stage, "label": edge.label}
    return {"when": lambda s: bool(when(thaw(s.get(key)))), "then": target_stage, "label": edge.label}


def _has_cycle(nodes: Sequence[str], edges: Sequence[Edge]) -> bool:
    graph: dict[str, list[str]] = {n: [] for n in nodes}
    for e in edges:
        if e.target != END:
            graph[e.source].append(e.target)
    state: dict[str, int] = {}

    def visit(n: str) -> bool:
        state[n] = 1
        for m in graph[n]:
            if state.get(m) == 1 or (m not in state and visit(m)):
                return True
        state[n] = 2
        return False

    return any(n not in state and visit(n) for n in nodes)


def _reachable(start: str, edges: Sequence[Edge]) -> set[str]:
    seen = {start}
    frontier = [start]
    while frontier:
        n = frontier.pop()
        for e in edges:
            if e.source == n and e.target != END and e.target not in seen:
                seen.add(e.target)
                frontier.append(e.target)
    return seen


class GraphBuilder:
    def __init__(self, name: str, *, checkpoint_key: str | bytes | None = None) -> None:
        self._name = name
        self._key = composition_key(checkpoint_key)
        self._specs: list[StepSpec] = []
        self._edges: list[Edge] = []
        self._start: str | None = None
        self._max_steps: int | None = None
        self._on_exhausted: OnExhausted = "finish"

    @property
    def _owner(self) -> str:
        return f"Graph '{self._name[:80]}'"

    def node(
        self,
        name: str,
        runner: Any,
        *,
        inputs: Sequence[str] | None = None,
        message: MessageFn | None = None,
    ) -> GraphBuilder:
        """Add a node: an Agent or composition (fed a message) or a function ``fn(values) -> value``.

        Default input: the output of the node that handed over (the graph's input for the first node).
        ``inputs`` names nodes (or ``"input"``) whose latest outputs it reads instead; nodes not run yet are left out.
        """
        self._specs.append(declare_step(self._owner, "node", name, runner, inputs, message, self._specs))
        return self

    def edge(self, source: str, target: str, *, when: EdgeWhen | None = None, label: str | None = None) -> GraphBuilder:
        """After ``source`` runs, go to ``target`` (a node or ``END``) if ``when(source's output)`` holds.

        A node's edges are tried in the order they were added; the first that holds wins; none holding ends the run."""
        if not isinstance(source, str) or not isinstance(target, str):
            raise CompositionBuildError(f"{self._owner}: an edge joins two node names")
        if when is not None and not callable(when):
            raise CompositionBuildError(f"edge {source[:80]} -> {target[:80]}: when must be a function of the output")
        if label is not None and (not isinstance(label, str) or len(label) > 200):
            raise CompositionBuildError(f"edge {source[:80]} -> {target[:80]}: label must be a str of at most 200")
        shown = label or (f"{source} -> {target}" if when is None else f"{source} -> {target} when the condition holds")
        self._edges.append(Edge(source, target, when, shown))
        return self

    def start(self, name: str) -> GraphBuilder:
        """The first node to run (default: the first node added)."""
        self._start = name
        return self

    def max_steps(self, n: int, *, on_exhausted: OnExhausted = "finish") -> GraphBuilder:
        """The budget: at most ``n`` node runs (mandatory for a graph with a cycle; at most 500).

        When spent while an edge still leads on: ``"finish"`` ends with the last output (``stopped_early``
        says so), ``"raise"`` raises :class:`GraphBudgetError`."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= HARD_CEILING:
            raise CompositionBuildError(f"{self._owner}: max_steps() must be an int in 1..{HARD_CEILING}")
        if on_exhausted not in ("finish", "raise"):
            raise CompositionBuildError(f"{self._owner}: on_exhausted must be 'finish' or 'raise'")
        self._max_steps = n
        self._on_exhausted = on_exhausted
        return self

    def build(self) -> Graph:
        if not self._specs:
            raise CompositionBuildError(f"{self._owner} needs at least one node")
        names = [s.name for s in self._specs]
        known = set(names)
        for e in self._edges:
            for end in (e.source, e.target):
                if end not in known and not (end == END and end == e.target):
                    raise CompositionBuildError(f"{self._owner}: edge {e.source[:80]} -> {e.target[:80]} names no node")
        self._check_shadowed()
        for spec in self._specs:
            for n in spec.inputs or ():
                if n != INPUT and n not in known:
                    raise CompositionBuildError(
                        f"node '{spec.name}' reads '{n[:80]}', which is not a node of {self._owner}"
                    )
        start = self._start if self._start is not None else names[0]
        if start not in known:
            raise CompositionBuildError(f"{self._owner}: start names no node")
        unreachable = [n for n in names if n not in _reachable(start, self._edges)]
        if unreachable:
            raise CompositionBuildError(
                f"{self._owner}: node '{unreachable[0][:80]}' is unreachable from '{start[:80]}'"
            )
        if self._max_steps is None and _has_cycle(names, self._edges):
            raise CompositionBuildError(
                f"{self._owner} has a cycle and needs a budget: .max_steps(n) (at most {HARD_CEILING})"
            )
        budget = self._max_steps if self._max_steps is not None else len(names)
        return keyed(
            Graph(self._name, list(self._specs), list(self._edges), start, budget, self._on_exhausted), self._key
        )

    def _check_shadowed(self) -> None:
        always: dict[str, Edge] = {}
        for e in self._edges:
            first = always.get(e.source)
            if first is not None:
                raise CompositionBuildError(
                    f"{self._owner}: edge {e.source[:80]} -> {e.target[:80]} is never taken: "
                    f"{first.source[:80]} -> {first.target[:80]} has no condition and comes first"
                )
            if e.when is None:
                always[e.source] = e
