"""Context that was declared or available but never reached the model call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain._stats import Verdict
from agentfootprint.explain._targets import as_target
from agentfootprint.explain.backtrack import backtrack

if TYPE_CHECKING:
    from agentfootprint.agent import Agent
from agentfootprint.explain._replay import ReplayCache, RerunWorld, rerun_agent
from agentfootprint.explain.localize import (
    OutcomeChanged,
    _default_outcome_changed,
    _recorded_run_id,
    _rerun_kwargs,
    _verdict,
    rerun_answer,
)


class DroppedContext(BaseModel):
    """A declared source missing from the final call: ``reason`` says why (``never-triggered``, ...)."""

    kind: str
    id: str
    reason: str
    detail: str = ""


def _ever(snapshot: Any, key: str, field: str) -> set[str]:
    seen: set[str] = set()
    for c in snapshot.commit_log:
        for w in c.writes:
            if w.path == key and isinstance(w.value, dict):
                seen.update(str(x) for x in w.value.get(field, []) or [])
    return seen


def _rule_errors(snapshot: Any) -> dict[str, str]:
    errors: dict[str, str] = {}
    for c in snapshot.commit_log:
        for w in c.writes:
            if w.path == "context_evaluated" and isinstance(w.value, dict):
                for e in w.value.get("errors", []) or []:
                    errors.setdefault(str(e.get("source_id")), str(e.get("error")))
    return errors


def find_dropped_context(agent: Agent) -> list[DroppedContext]:
    """Declared facts/steering/instructions/skills/tools that did not reach the final model call, and why (of the
    agent's latest run, or of a ``RunResult``'s own)."""
    agent = as_target(agent)
    bt = backtrack(agent)
    snapshot = agent.last_snapshot()
    assert snapshot is not None  # backtrack refused a run-less agent already
    reached_ids = {s.id for s in bt.sources}
    active_ever = _ever(snapshot, "context_evaluated", "active_ids")
    errors = _rule_errors(snapshot)
    offered_ever: set[str] = set()
    for c in snapshot.commit_log:
        for w in c.writes:
            if w.path == "tool_specs" and isinstance(w.value, list):
                offered_ever.update(str(s.get("name")) for s in w.value if isinstance(s, dict))
    out: list[DroppedContext] = []
    for inj in agent.config.injections:
        if inj.id in reached_ids:
            continue
        trigger = inj.trigger.describe()
        if inj.id in errors:
            out.append(DroppedContext(kind=inj.flavor, id=inj.id, reason="rule-error", detail=errors[inj.id]))
        elif inj.id in active_ever:
            out.append(
                DroppedContext(
                    kind=inj.flavor,
                    id=inj.id,
                    reason="not-active-at-call",
                    detail=f"{trigger}: active earlier in the run, not for the final call",
                )
            )
        else:
            out.append(
                DroppedContext(
                    kind=inj.flavor, id=inj.id, reason="never-triggered", detail=f"{trigger}: never fired in this run"
                )
            )
    final_call = snapshot.commit(bt.trigger)
    if final_call is not None:
        for item in snapshot.value_at("window_dropped", final_call.idx, final_call.namespace, default=[]) or []:
            name = item.get("tool_name")
            out.append(
                DroppedContext(
                    kind="tool" if name else "message",
                    id=str(name or f"{item.get('role')}-{item.get('index')}"),
                    reason="windowed-out",
                    detail=f"history[{item.get('index')}] dropped by the window ({item.get('reason')})",
                )
            )
        for item in snapshot.value_at("budget_pressure", final_call.idx, final_call.namespace, default=[]) or []:
            out.append(
                DroppedContext(
                    kind="slot",
                    id=str(item.get("slot")),
                    reason="budget-pressure",
                    detail=f"{item.get('chars')} chars over a budget of {item.get('budget')}",
                )
            )
    tools = list(agent.config.tools) + [t for s in agent.config.skills for t in s.tools]
    for t in tools:
        if t.name in reached_ids:
            continue
        reason = "not-offered-at-call" if t.name in offered_ever else "never-triggered"
        out.append(
            DroppedContext(
                kind="tool",
                id=t.name,
                reason=reason,
                detail="skill-scoped tool whose skill was never activated"
                if reason == "never-triggered"
                else "offered earlier, not at the final call",
            )
        )
    return out


class RestorationError(AgentFootprintError, ValueError):
    """``confirm_by_restoration`` cannot run: unknown id, a source that is not a dropped injection, bad arguments."""

    code = "ERR_RESTORATION"


class RestorationReport(BaseModel):
    """What happened when a dropped injection was forced active for seeded reruns, against a no-change baseline."""

    kind: str
    id: str
    reason: str
    trigger: str
    samples: int
    original_answer: str | None
    baseline_flips: int
    flips: int
    errors: int = 0
    verdict: Verdict
    answers: list[str] = Field(default_factory=list)
    honesty_flags: list[str] = Field(default_factory=list)
    claim: str

    def __str__(self) -> str:
        return (
            f"Restoration of {self.kind} '{self.id}' ({self.reason}, trigger {self.trigger}): "
            f"{self.verdict.upper()}\n  baseline: {self.baseline_flips}/{self.samples} flipped with nothing "
            f"restored\n  {self.claim}"
        )


def _restorable(agent: Any, dropped: DroppedContext | str) -> DroppedContext:
    sid = dropped.id if isinstance(dropped, DroppedContext) else dropped
    if not isinstance(sid, str) or not sid:
        raise RestorationError("name a dropped source: a DroppedContext or its id")
    declared = {inj.id: inj.flavor for inj in agent.config.injections}
    if sid not in declared:
        other = "a tool or message, which cannot be forced into the call" if sid in agent.source_ids() else "unknown"
        raise RestorationError(f"{sid[:80]!r} is not a declared injection of this agent ({other})")
    found = next((d for d in find_dropped_context(agent) if d.id == sid and d.kind == declared[sid]), None)
    if found is None:
        raise RestorationError(f"injection {sid[:80]!r} reached the final model call: there is nothing to restore")
    return found


def _claim(d: DroppedContext, verdict: Verdict, flips: int, samples: int, unstable: bool) -> str:
    tail = f"restoring {d.kind} '{d.id}' ({d.reason}) flipped the outcome in {flips}/{samples} seeded reruns"
    if unstable:
        return f"INCONCLUSIVE: the baseline flipped with nothing restored, so {tail} proves nothing"
    label = {"confirmed": "CAUSAL", "inconclusive": "INCONCLUSIVE", "not-confirmed": "NOT CONFIRMED"}[verdict]
    return f"{label}: {tail}"


async def confirm_by_restoration(
    agent: Any, dropped: DroppedContext | str, *, samples: int = 3, outcome_changed: OutcomeChanged | None = None
) -> RestorationReport:
    """Rerun the last input with a dropped injection forced active (``always``); ``confirmed`` when most reruns flip.

    A baseline of unchanged seeded reruns runs alongside; any baseline flip makes the verdict ``inconclusive``."""
    if not isinstance(samples, int) or samples < 1:
        raise RestorationError("samples must be an int >= 1")
    from agentfootprint.agent.agent import Agent
    from agentfootprint.context.injection import Trigger

    agent = as_target(agent)
    run_input = agent.last_run_input() if hasattr(agent, "last_run_input") else None
    if run_input is None:
        raise RestorationError("restoration reruns the agent: pass an Agent that has run (a recording cannot rerun)")
    target = _restorable(agent, dropped)
    inj = next(i for i in agent.config.injections if i.id == target.id)
    forced = replace(inj, trigger=Trigger(kind="always"))
    config = replace(agent.config, injections=tuple(forced if i.id == inj.id else i for i in agent.config.injections))
    world = RerunWorld(ReplayCache(), _recorded_run_id(agent))  # memory as recorded, written to by no rerun
    restored = rerun_agent(Agent(config), (), world)
    bt = backtrack(agent)
    original = bt.answer or ""
    changed = outcome_changed or _default_outcome_changed

    async def rerun_restored(seed: int) -> str:
        result = await restored.run(run_input["message"], **_rerun_kwargs(run_input, seed))
        return str(result.answer or "")

    async def safe(job: Awaitable[str]) -> str | None:
        try:
            return str(await job)
        except Exception:
            return None

    results = await asyncio.gather(
        *(safe(rerun_restored(seed)) for seed in range(samples)),
        *(safe(rerun_answer(agent, seed, (), world)) for seed in range(samples)),
    )
    answers, baseline = results[:samples], results[samples:]
    flips = sum(1 for a in answers if a is not None and changed(original, a))
    baseline_flips = sum(1 for a in baseline if a is not None and changed(original, a))
    errors = sum(1 for a in results if a is None)
    flags: list[str] = []
    if baseline_flips:
        flags.append("baseline-unstable")
    if errors:
        flags.append("rerun-errors")
    verdict: Verdict = "inconclusive" if baseline_flips else _verdict(flips, samples)
    return RestorationReport(
        kind=target.kind,
        id=target.id,
        reason=target.reason,
        trigger=inj.trigger.describe(),
        samples=samples,
        original_answer=bt.answer,
        baseline_flips=baseline_flips,
        flips=flips,
        errors=errors,
        verdict=verdict,
        answers=[a for a in answers if a is not None],
        honesty_flags=flags,
        claim=_claim(target, verdict, flips, samples, baseline_flips > 0),
    )
