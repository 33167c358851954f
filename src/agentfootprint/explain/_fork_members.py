"""Fork inside a composition: each mounted agent serves its recorded model and tool calls made before the fork
step (requests checked), the member holding the step forks there, and everything after runs live."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentfootprint.agent._fork_seam import MemberRunner, MountedAgent, agent_mounts, always_run
from agentfootprint.agent.config import READ_SKILL
from agentfootprint.explain._fork import (
    ForkMismatchError,
    _calls,
    _chain_of,
    _Change,
    _Cursor,
    _fork_agent,
    _Leg,
    _read_log,
    _run_kwargs,
    answered_in_order,
)
from agentfootprint.explain._runs import WhatIfError
from agentfootprint.flow import Commit, FlowChart, FlowSnapshot, thaw

__all__ = ["fork_members"]


def _unsupported(what: str) -> WhatIfError:
    return WhatIfError(f"{what}; fork at a step after it", code="ERR_FORK_UNSUPPORTED")


def _entered(snap: FlowSnapshot) -> list[str]:
    """The mount paths the run entered, in the order it first entered them."""
    seen: dict[str, None] = {}
    for c in snap.commit_log:
        if c.kind == "subflow-enter" and c.namespace:
            seen.setdefault(c.namespace, None)
    return list(seen)


def _check_members(snap: FlowSnapshot, chart: FlowChart, mounts: list[MountedAgent]) -> None:
    """Refuse a composition whose members are not the recording's: a step or mount it lacks, a step every run
    passes that the finished recording never did, or its members in another order."""
    by_path = {m.path: m for m in mounts}
    entered = _entered(snap)
    top = {c.stage_id for c in snap.commit_log if c.namespace == ""}
    finished = not (snap.commit_log and snap.commit_log[-1].paused)
    if (
        any(p not in by_path for p in entered)
        or not top <= chart.nodes.keys()
        or (finished and not always_run(chart) <= top)
    ):
        raise ForkMismatchError("the composition's members differ from the recording's", field="members")
    ordered = [by_path[p].order for p in entered if "/" not in p and not by_path[p].concurrent]
    if ordered != sorted(ordered):
        raise ForkMismatchError("the composition runs its members in another order", field="member_order")


def _input_of(snap: FlowSnapshot) -> dict[str, Any]:
    """A composition recording's input: the message its seed step took, the seed its members' calls carried."""
    seed = next((c for c in snap.commit_log if c.stage_id == "seed" and c.namespace == ""), None)
    message = next((w.value for w in seed.writes if w.path == "input"), None) if seed is not None else None
    if not isinstance(message, str):
        raise WhatIfError("the recording holds no message to rerun", code="ERR_WHATIF_NOT_A_RUN")
    calls = _calls(snap, frozenset(c.namespace for c in snap.commit_log if c.namespace))
    return {"message": message, "history": [], "identity": None, "seed": calls[0].seed if calls else None}


def _fork_step(snap: FlowSnapshot, at: Any) -> Commit:
    if not isinstance(at, str) or not at:
        raise ForkMismatchError("at must be the runtime stage id of one of the run's model calls", field="step")
    step = next(
        (
            c
            for c in snap.commit_log
            if c.runtime_stage_id == at and c.stage_id == "call-llm" and c.applied and not c.failed
        ),
        None,
    )
    if step is None:
        raise ForkMismatchError("the run has no model call at that step", field="step")
    if not step.namespace:
        raise ForkMismatchError("the step is not inside one of the composition's members", field="members")
    return step


def _own_calls_before(snap: FlowSnapshot, at_idx: int, served: set[str]) -> None:
    """Refuse when a model call the legs cannot serve (the composition's own: a router, a merge) came first."""
    for c in snap.commit_log[:at_idx]:
        if not c.applied:
            continue
        own = c.stage_id == "call-llm" and c.namespace not in served
        if own or any(w.path == "merge_call" for w in c.writes):
            raise _unsupported("a model call the composition makes itself comes before the fork step")


def _namespaces_by_agent(snap: FlowSnapshot, mounts: list[MountedAgent]) -> dict[int, frozenset[str]]:
    """Every agent's mount paths; one agent running in two mounts at once cannot be served call by call."""
    out: dict[int, set[str]] = {}
    for m in mounts:
        if m.agent is not None:
            out.setdefault(id(m.agent), set()).add(m.path)
    for paths in out.values():
        if len(paths) < 2:
            continue
        order = [c.namespace for c in snap.commit_log if c.stage_id == "call-llm" and c.namespace in paths]
        runs = [ns for i, ns in enumerate(order) if i == 0 or order[i - 1] != ns]
        if len(runs) != len(set(runs)):
            raise _unsupported("one agent runs in two members at once")
    return {k: frozenset(v) for k, v in out.items()}


def _check_declared_tools(agent: Any, offered: Sequence[str]) -> None:
    """Refuse a member that no longer declares a tool its first recorded call offered, or declares them in
    another order (tools a skill opens later are checked when their call is replayed)."""
    declared = [k for k, v in agent.config.source_ids().items() if v == "tool"]
    recorded = [t for t in offered if t != READ_SKILL]
    if any(t not in declared for t in recorded):
        raise ForkMismatchError("a member's tools differ from the recording's", field="tools")
    if [t for t in declared if t in recorded] != recorded:
        raise ForkMismatchError("a member's tools differ from the recording's", field="tool_order")


def _change_for(agent: Any, without: Sequence[str], swaps: Mapping[str, Any], holds_step: bool) -> _Change:
    """The part of the change this agent carries: its own sources; tool results (``name#n``) only in the member
    that holds the fork step, whose tool calls they count."""
    config = agent.config
    mine = config.source_ids()

    def ours(sid: str) -> bool:
        return sid in mine or (holds_step and config.is_tool_result(sid))

    return _Change([s for s in without if ours(s)], {k: v for k, v in swaps.items() if ours(k)})


async def fork_members(
    run: Any, runner: MemberRunner, *, at: str, without: Sequence[str], swaps: Mapping[str, Any]
) -> Any:
    """:func:`fork` for a composition: the members' recorded calls before ``at`` are served, ``at``'s member forks
    there, the rest runs live."""
    snap, run_input, _ = _chain_of(run)
    step = _fork_step(snap, at)
    agents = list(runner.agents())
    mounts = agent_mounts(runner.chart, agents)
    _check_members(snap, runner.chart, mounts)
    paths = _namespaces_by_agent(snap, mounts)
    served = {p for ps in paths.values() for p in ps}
    if step.namespace not in served:
        raise _unsupported("the fork step is a model call the composition makes itself")
    _own_calls_before(snap, step.idx, served)
    known = runner_sources(agents)
    unknown = [s for s in (*without, *swaps) if s not in known and not any(a.config.is_tool_result(s) for a in agents)]
    if unknown:
        from agentfootprint.agent import UnknownSourceError

        raise UnknownSourceError("no member has a context source or tool by that id")
    resumed = answered_in_order(snap)
    run_input = run_input or _input_of(snap)
    cursors: list[tuple[_Cursor, bool]] = []
    forked: dict[int, Any] = {}
    for agent in agents:
        if id(agent) in forked:
            continue
        spaces = paths.get(id(agent), frozenset())
        calls, records, answered, _ = _read_log(snap, spaces, spaces)
        recorded_models = {c.model for c in calls}
        if agent.config.run_config is None and recorded_models and recorded_models != {agent.config.model}:
            raise ForkMismatchError("a member runs another model than the recording", field="model")
        if calls:
            _check_declared_tools(agent, calls[0].tools)
        leg = _Leg(snap, dict(run_input), None, calls, records, dict(answered), spaces)
        holds = step.namespace in spaces
        prefix = sum(1 for c in calls if c.commit.idx < step.idx)
        change = _change_for(agent, without, swaps, holds)
        cursor = _Cursor(prefix=prefix, check_at=holds and not without and not swaps)
        cursor.check_live_tools = prefix == 0 and not holds and not change.without
        cursors.append((cursor, holds))
        forked[id(agent)] = _fork_agent(agent, leg, cursor, step.idx, change)
    rerun = runner.with_agents(lambda a: forked.get(id(a), a))
    try:
        result = await rerun.run(run_input["message"], **_run_kwargs(run_input))
        while result.paused and any(c.calls < c.prefix or (holds and c.calls == c.prefix) for c, holds in cursors):
            checkpoint = result.checkpoint or {}
            call_id = str(thaw(checkpoint).get("tool_call_id"))
            if not resumed or resumed[0][0] != call_id:
                raise ForkMismatchError("the replayed run paused where the recorded chain did not resume", field="leg")
            result = await rerun.resume(checkpoint, resumed.pop(0)[1])
    except Exception:
        refused = next((c.refusal for c, _ in cursors if c.refusal is not None), None)
        if refused is None:
            raise
        raise refused from None  # a refusal inside a member (a parallel branch wraps it): the refusal itself
    finally:
        for c, _ in cursors:
            c.finished = True
    refusal = next((c.refusal for c, _ in cursors if c.refusal is not None), None)
    if refusal is not None:
        raise refusal
    return result


def runner_sources(agents: Sequence[Any]) -> dict[str, str]:
    """Every source id any of the agents declares, with its kind."""
    out: dict[str, str] = {}
    for agent in agents:
        out.update(agent.config.source_ids())
    return out
