"""The run-configuration manifest: which adapters, limits and strategies a run is about to use, filed once per run
(``agentfootprint.agent.run_configured``) so a recording names the arm it ran under."""

from __future__ import annotations

from typing import Any

from agentfootprint.agent.config import AgentConfig


def _window(config: AgentConfig) -> str | None:
    window = config.window
    return None if window is None else type(window).__name__


def run_manifest(config: AgentConfig, runner: str = "Agent") -> dict[str, Any]:
    """What this run is configured with, by declared names only (never a prompt, a value or a key)."""
    llm: dict[str, Any] = {"provider": config.provider.name, "model": config.model}
    if config.run_config is not None:
        llm["model_overrides"] = ["configure"]
    budget = {"usd": config.cost_budget, "on_exceed": config.cost_action} if config.cost_budget is not None else None
    return {
        "runner": runner,
        "agent": config.name,
        "llm": llm,
        "max_iterations": config.max_iterations,
        "wrap_up_at_max_iterations": config.wrap_up_at_max_iterations,
        "max_tool_result_chars": config.max_result_chars,
        "repeated_call_nudge": config.repeated_call_nudge,
        "keep_last_tool_results": config.keep_last_tool_results,
        "cost_budget": budget,
        "tools": sorted(t.name for t in config.all_tools()),
        "context": [{"id": i.id, "kind": i.flavor} for i in config.injections],
        "extensions": [e.name for e in config.extensions],
        "window": _window(config),
        "react_mode": config.react_mode,
        "caching": config.caching,
        "observer_delivery": config.observer_delivery,
        "configure": config.run_config is not None,
    }


__all__ = ["run_manifest"]
