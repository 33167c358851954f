"""The seam a what-if fork starts an agent's chart through at a recorded stage (state folded from the recording,
never from a checkpoint): the chart restarted there, and the run's in-memory tallies rebuilt from the same commits."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agentfootprint.agent._integrity_wire import WireMemo, parse_part
from agentfootprint.agent._repeated import (
    REPEATED_CALL_THRESHOLD,
    RepeatedCalls,
    args_fingerprint,
    fingerprint,
    repeated_note,
)
from agentfootprint.agent._resume import caller
from agentfootprint.agent._run import AgentRun
from agentfootprint.agent.agent import Agent
from agentfootprint.agent.config import READ_SKILL
from agentfootprint.events import EventDispatcher
from agentfootprint.flow import Commit, FlowChart, FlowSnapshot, Redactor, freeze
from agentfootprint.flow._restart import Restart, execute_from, restart_points, run_stages_from
from agentfootprint.flow.result import FlowResult

__all__ = ["Restart", "before_nudge", "probe_iteration", "restart_agent", "restarts"]


def before_nudge(name: str, content: str) -> str:
    """A recorded tool result as the tool returned it: the repeated-call sentence the loop appended taken off."""
    if not content.endswith("]"):
        return content
    for by_args in (False, True):
        note = repeated_note(name, REPEATED_CALL_THRESHOLD, by_args)
        if content.endswith(note):
            return content[: -len(note)]
    return content


_MAPS = (dict, Mapping)
"""A dict first: the common case costs no ABC check."""


def _written(commit: Commit, key: str) -> Any:
    for w in reversed(commit.writes):
        if w.path == key:
            return w.value
    return None


class _Tallied(RepeatedCalls):
    """A run's repeated-call tally that starts from the results landed before a restart: each (tool, arguments,
    result) is counted among them the first time it lands again (no fingerprint made for one that never does)."""

    __slots__ = ("_before",)

    def __init__(self, before: list[tuple[str, Any, str]]) -> None:
        super().__init__()
        self._before = before

    def land(self, name: str, args: Any, content: str) -> tuple[int, str, str]:
        key = (name, args_fingerprint(args), fingerprint(content))
        count = self._seen.get(key)
        if count is None:
            count = sum(1 for n, a, c in self._before if n == name and c == content and args_fingerprint(a) == key[1])
        self._seen[key] = count + 1
        return count + 1, key[1], key[2]


def _tally(run: AgentRun, log: Sequence[Commit]) -> None:
    """The repeated-call tally the recorded tool results before the restart built (as the loop landed them)."""
    config = run.config
    if not config.repeated_call_nudge:
        return
    by_args = {t.name for t in config.tools if t.repeated_when == "arguments"}
    before: list[tuple[str, Any, str]] = []
    for c in log:
        if c.stage_id != "tool-calls" or c.failed or c.paused:  # applied commits only
            continue
        for w in c.writes:
            if w.path != "tool_results" or w.verb != "append" or not isinstance(w.value, (list, tuple)):
                continue
            for r in w.value:
                name = str(r.get("name"))
                if r.get("is_error") or name == READ_SKILL:
                    continue
                content = "" if name in by_args else before_nudge(name, str(r.get("content", "")))
                before.append((name, r.get("args"), content))
    run.repeated_calls = _Tallied(before)


def _memo(run: AgentRun, log: Sequence[Commit]) -> None:
    """The wire memo as the last recorded call left it (its parts by kind), so the next manifest keeps the same
    prefix a run that never stopped would (unkeyed manifests only: a keyed one is this run's own)."""
    if run.redactor.active:
        return
    parts: list[str] = []
    calls = 0
    for c in log:  # each call's row keeps a prefix of the one before and adds its own parts
        if c.stage_id != "call-llm" or c.failed or c.paused:
            continue
        llm = _written(c, "llm_call")
        row = llm.get("wire") if isinstance(llm, _MAPS) else None
        if not isinstance(row, _MAPS) or row.get("keyed"):
            return
        kept, tail = row.get("kept"), row.get("parts")
        if type(kept) is not int or not 0 <= kept <= len(parts) or not isinstance(tail, list | tuple):
            return
        del parts[kept:]
        parts.extend(tail)
        calls += 1
    if not calls:
        return
    memo = WireMemo(None)
    memo.calls = calls
    for p in parts:
        kind = parse_part(p)
        if kind is None:
            return
        if kind[1] == "system":
            memo.last_system.append(p)
        elif kind[1] == "tool-spec":
            memo.last_specs.append(p)
        else:
            memo.last_messages.append(p)
    memo.last_count = len(memo.last_messages)
    run.wire_memo = memo


def _restore(run: AgentRun, restart: Restart) -> None:
    """What a run keeps beside its state, as the recorded commits before the restart built it."""
    _tally(run, restart.log)
    _memo(run, restart.log)
    iteration = restart.state.get("iteration")  # the loop stage sets it again when the restart is its own
    run.last_completed_iteration = max(0, iteration - 1) if type(iteration) is int else 0
    budget, spent = run.config.cost_budget, restart.state.get("cost_total")
    run.budget_warned = budget is not None and isinstance(spent, int | float) and spent > budget


def _as_turn(restart: Restart, run_id: str) -> Restart:
    """The restart as this turn's own: the seed's record of the run names this run's id, as the seed would had it
    run again (a pause later in the turn is checked against it); nothing else before the restart changes."""
    run = restart.state.get("run")
    seed = restart.last_writer.get("run")
    if not isinstance(run, Mapping) or seed is None or restart.log[seed].stage_id != "seed":
        return restart
    mine = freeze({**run, "run_id": run_id})
    commit = restart.log[seed]
    writes = [w.model_copy(update={"value": mine}) if w.path == "run" else w for w in commit.writes]
    log = list(restart.log)
    log[seed] = commit.model_copy(update={"writes": writes})
    return replace(restart, log=log, state={**restart.state, "run": mine})


class _Restarted(FlowChart):
    """The agent's chart whose next run starts at the restart instead of its root (once: later runs start at the
    root, as the chart's own do)."""

    def __init__(self, chart: FlowChart, restart: Restart) -> None:
        self.__dict__.update(chart.__dict__)
        self._restart: Restart | None = restart

    async def run(self, state: Mapping[str, Any] | None = None, **options: Any) -> FlowResult:
        restart, self._restart = self._restart, None
        deps, run_id = options.get("deps"), options.get("run_id")
        if restart is None or state is not None or not isinstance(deps, AgentRun) or not isinstance(run_id, str):
            return await super().run(state, **options)  # a later turn runs from the root, as the chart's own do
        _restore(deps, restart)
        return await execute_from(self, _as_turn(restart, run_id), **options)


def restart_agent(agent: Agent, restart: Restart) -> Agent:
    """``agent`` (a fresh one the caller owns) whose next turn starts at ``restart``."""
    agent.chart = _Restarted(agent.chart, restart)
    return agent


def restarts(agent: Agent, snapshot: FlowSnapshot, marks: Sequence[int]) -> list[Restart] | None:
    """Where ``agent``'s chart stood just before each commit of ``marks`` of ``snapshot`` (its state folded from
    the commits before it), or None when that record cannot be restarted so."""
    return restart_points(agent.chart, snapshot, marks)


async def probe_iteration(
    agent: Agent, restart: Restart, *, seed: int | None, identity: Any, session_id: Any
) -> list[Commit]:
    """Run ``agent``'s loop stages from ``restart`` through its next model call, outside any turn (no record, no
    event kept, no run left behind): the commits they made, for a fork to check against the recorded ones."""
    config = agent.config
    run = AgentRun(
        config,
        EventDispatcher(),
        uuid.uuid4().hex,
        identity=caller(identity),
        session_id=session_id if isinstance(session_id, str) else None,
        seed=seed,
        redactor=Redactor(config.redaction),
    )
    try:
        return await run_stages_from(agent.chart, restart, run_id=run.run_id, deps=run, through="call-llm")
    finally:
        run.release()
