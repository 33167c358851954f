"""The injection engine's evaluation: which injections are active this iteration, and why (as records)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentfootprint.context.injection import Injection, InjectionContext

SYSTEM_SOURCE_ID = "system"


def _why_active(inj: Injection, ctx: InjectionContext) -> tuple[bool, str, str | None]:
    """(active, reason, error) for one injection; a raising rule is inactive and its error is kept."""
    trigger = inj.trigger
    if trigger.kind == "always":
        return True, "always", None
    if trigger.kind == "rule":
        assert trigger.predicate is not None
        try:
            ok = bool(trigger.predicate(ctx))
        except Exception as exc:
            return False, "rule raised", f"{type(exc).__name__}: {str(exc)[:200]}"
        return ok, trigger.describe() if ok else "rule false", None
    if trigger.kind == "on-tool-return":
        for result in ctx.last_tool_results:
            if trigger.matches_tool(result.name):
                return True, f"on-tool-return {result.name}", None
        return False, "tool not returned", None
    return (inj.id in ctx.activated_skills), "llm-activated read_skill", None


def evaluate_injections(
    injections: Sequence[Injection],
    ctx: InjectionContext,
    system_prompt: str,
    previous: dict[str, int],
) -> dict[str, Any]:
    """Records per slot for the active injections (declaration order), plus the evaluation summary."""
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    tool_records: list[dict[str, Any]] = []
    active_ids: list[str] = []
    errors: list[dict[str, str]] = []
    kinds: dict[str, int] = {}
    if system_prompt:
        system.append(
            {
                "source": "system",
                "source_id": SYSTEM_SOURCE_ID,
                "trigger": "always",
                "reason": "always",
                "since_iteration": previous.get(SYSTEM_SOURCE_ID, ctx.iteration),
                "text": system_prompt,
            }
        )
    for inj in injections:
        active, reason, error = _why_active(inj, ctx)
        if error is not None:
            errors.append({"source_id": inj.id, "error": error})
        if not active:
            continue
        try:
            rendered = inj.render_record(ctx)
        except Exception as exc:
            errors.append({"source_id": inj.id, "error": f"render failed: {type(exc).__name__}: {str(exc)[:200]}"})
            continue
        if rendered is None:  # nothing to land this iteration (an empty recall or retrieval)
            continue
        text, extras = rendered
        active_ids.append(inj.id)
        kinds[inj.trigger.kind] = kinds.get(inj.trigger.kind, 0) + 1
        record = {
            "source": inj.flavor,
            "source_id": inj.id,
            "trigger": inj.trigger.describe(),
            "reason": reason,
            "since_iteration": previous.get(inj.id, ctx.iteration),
            "text": text,
        }
        record.update({k: v for k, v in extras.items() if k not in record})
        if inj.slot == "messages":
            messages.append({**record, "role": inj.role})
        else:
            system.append(record)
        if inj.flavor == "skill":
            for t in inj.tools:
                tool_records.append(
                    {
                        "source": "skill",
                        "source_id": inj.id,
                        "tool": t.name,
                        "trigger": "llm-activated",
                        "reason": f"skill {inj.id} active",
                    }
                )
    return {
        "system_prompt": system,
        "messages": messages,
        "tools": tool_records,
        "summary": {"iteration": ctx.iteration, "active_ids": active_ids, "trigger_kinds": kinds, "errors": errors},
    }
