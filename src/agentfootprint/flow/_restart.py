"""A private, in-process restart: a run's state at one stage rebuilt by folding its own recorded commits, and the
chart driven on from that stage. Never reachable from a checkpoint or any public door (what-if forks use it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentfootprint.flow._frozen import freeze
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._run import _execute
from agentfootprint.flow._stage import run_stage
from agentfootprint.flow._state import RunState
from agentfootprint.flow.cancel import CancelToken
from agentfootprint.flow.chart import FlowChart
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.recorder import Recorder
from agentfootprint.flow.recording import RecordingDials
from agentfootprint.flow.redaction import RedactionPolicy
from agentfootprint.flow.result import FlowResult
from agentfootprint.flow.snapshot import FlowSnapshot


@dataclass(frozen=True)
class Restart:
    """Where a restarted run stands: the recorded commits before its stage, the folded root state and last writers,
    the runtime-id counter, the visits and the node it starts at."""

    log: list[Commit]
    state: dict[str, Any]
    last_writer: dict[str, int]
    counter: int
    visits: dict[str, int]
    start: str
    initial_state: dict[str, Any]


_PLAIN = (dict, list)


def _frozen_writes(writes: list[Write]) -> list[Write]:
    """A commit's writes with frozen values (a record loaded from JSON holds plain ones; a live one is frozen)."""
    for w in writes:
        if type(w.value) in _PLAIN:
            return [w.model_copy(update={"value": freeze(w.value)}) for w in writes]
    return writes


def restart_points(chart: FlowChart, snapshot: FlowSnapshot, marks: Sequence[int]) -> list[Restart] | None:
    """The run of ``snapshot`` as it stood just before each commit of ``marks`` (ascending), folded in one walk;
    None when it cannot be rebuilt by a fold: a commit before a mark in a mounted namespace, paused or failed, a
    resumed or redacted record, or a stage the chart does not have."""
    log = snapshot.commit_log
    if snapshot.redacted or snapshot.resumed_from is not None or not marks:
        return None
    if list(marks) != sorted(set(marks)) or not 0 < marks[0] or marks[-1] >= len(log):
        return None
    ns = Namespace("", snapshot.initial_state)
    visits: dict[str, int] = {}
    out: list[Restart] = []
    done = 0
    for upto in marks:
        at = log[upto]
        head, _, number = at.runtime_stage_id.rpartition("#")
        if at.namespace or at.stage_id not in chart.nodes or head != at.stage_id or not number.isdigit():
            return None
        counter = int(number)
        chart_nodes, apply = chart.nodes, ns.apply
        for c in log[done:upto]:
            f = c.__dict__  # the commit's fields, each read by one dict lookup
            stage = f["stage_id"]
            if f["namespace"] or f["paused"] or f["failed"] or f["kind"] == "subflow-enter" or stage not in chart_nodes:
                return None
            rid = f["runtime_stage_id"]
            if int(rid[rid.rindex("#") + 1 :]) >= counter:
                return None
            visits[stage] = visits.get(stage, 0) + 1
            if f["writes"]:  # applied: a paused or failed commit was refused above
                apply(f["idx"], _frozen_writes(f["writes"]))
        done = upto
        ns.owned.clear()  # a later fold copies a list before growing it: this restart keeps its own
        out.append(
            Restart(
                log=list(log[:upto]),
                state=dict(ns.state),
                last_writer=dict(ns.last_writer),
                counter=counter,
                visits=dict(visits),
                start=at.stage_id,
                initial_state=dict(snapshot.initial_state),
            )
        )
    return out


def _restored(chart: FlowChart, restart: Restart, run_id: str, deps: Any, **options: Any) -> RunState:
    """A run's bookkeeping as it stood at ``restart``: its log, counter, visits and root state."""
    rs = RunState(chart, run_id=run_id, initial_state=restart.initial_state, deps=deps, **options)
    rs.log = list(restart.log)
    rs.counter = restart.counter
    rs.visits = dict(restart.visits)
    root = Namespace("", None, deps)
    root.state = dict(restart.state)  # folded values, frozen; no list owned: the first append copies it
    root.last_writer = dict(restart.last_writer)
    rs.namespaces = {"": root}
    return rs


async def execute_from(
    chart: FlowChart,
    restart: Restart,
    *,
    run_id: str,
    deps: Any = None,
    args: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    cancel: CancelToken | None = None,
    recorders: Iterable[Recorder] = (),
    redaction: RedactionPolicy | None = None,
    recording: RecordingDials | None = None,
) -> FlowResult:
    """Drive ``chart`` on from ``restart`` (its state, log, counter and visits restored) as a new run ``run_id``:
    ``FlowChart.run``'s options, the initial state being the restart's."""
    rs = _restored(
        chart,
        restart,
        run_id,
        deps,
        args=args,
        recorders=recorders,
        redaction=redaction,
        cancel=cancel,
        timeout=timeout,
        dials=recording,
    )
    return await _execute(rs, restart.start, [])


async def run_stages_from(chart: FlowChart, restart: Restart, *, run_id: str, deps: Any, through: str) -> list[Commit]:
    """Run the plain stages from ``restart`` along their ``next`` links through the first ``through`` stage, over the
    restored state (no recorder, no snapshot, no run result): the commits they made."""
    rs = _restored(chart, restart, run_id, deps, args=None, recorders=(), redaction=None, cancel=None, timeout=None)
    root = rs.namespaces[""]
    node_id: str | None = restart.start
    while node_id is not None:
        node = chart.nodes[node_id]
        if node.kind != "stage":
            raise ValueError("a restarted walk runs plain stages only")
        visit = rs.visits.get(node.id, 0) + 1
        rs.visits[node.id] = visit
        await run_stage(rs, node, root, "", None, visit)
        if node.id == through:
            return rs.log[len(restart.log) :]
        node_id = node.next
    raise ValueError("the restarted walk ended before its last stage")


__all__ = ["Restart", "execute_from", "restart_points", "run_stages_from"]
