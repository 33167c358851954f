"""Context that was declared or available but never reached the model call."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentfootprint.explain.backtrack import backtrack


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


def find_dropped_context(agent: Any) -> list[DroppedContext]:
    """Declared facts/steering/instructions/skills/tools that did not reach the final model call, and why."""
    bt = backtrack(agent)
    snapshot = agent.last_snapshot()
    reached = {(s.kind if s.kind != "system" else "system", s.id) for s in bt.sources}
    reached_ids = {sid for _, sid in reached}
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
