"""``Agent.create``'s options read into an ``AgentConfig`` (each refused by name, never quoting it), and the
checks an ``AgentConfig`` passes before an ``Agent`` runs on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentfootprint.agent._limits import read_cost_budget, read_keep_last, read_result_ceiling, read_switch
from agentfootprint.agent._seal import seal_key
from agentfootprint.agent._stages import read_skill_tool
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.consent import DecisionLedger
from agentfootprint.agent.errors import AgentBuildError, InvalidLimitError
from agentfootprint.flow.recording import RecordingDials
from agentfootprint.tools import DuplicateToolError, Tool

MAX_ITERATIONS_CEILING = 1000


def recording_dials(read_tracking: Any, commit_values: Any, write_provenance: Any) -> RecordingDials:
    """The three recording dials, each refused by name when it is not one of its values (the value is not quoted)."""
    allowed = {
        "read_tracking": ("summary", "full"),
        "commit_values": ("delta", "full"),
        "write_provenance": ("off", "reads-prefix"),
    }
    given = {"read_tracking": read_tracking, "commit_values": commit_values, "write_provenance": write_provenance}
    for dial, value in given.items():
        if not isinstance(value, str) or value not in allowed[dial]:
            raise AgentBuildError(f"{dial} must be one of {', '.join(repr(v) for v in allowed[dial])}")
    return RecordingDials(**given)


def agent_config(o: Mapping[str, Any]) -> AgentConfig:
    """The configuration ``Agent.create``'s keyword options (``o``: all of them) describe, or the first refusal."""
    if o["react_mode"] not in ("dynamic", "classic", "dynamic-grouped"):
        raise AgentBuildError("react_mode must be 'dynamic', 'classic' or 'dynamic-grouped'")
    if o["observer_delivery"] not in ("inline", "deferred"):
        raise AgentBuildError("observer_delivery must be 'inline' or 'deferred'")
    queue = o["observer_queue"]
    if isinstance(queue, bool) or not isinstance(queue, int) or not 1 <= queue:
        raise AgentBuildError("observer_queue must be a positive int")
    if o["caching"] not in ("on", "off"):
        raise AgentBuildError("caching must be 'on' or 'off'")
    if not isinstance(o["record_system_prompt"], bool):
        raise AgentBuildError("record_system_prompt must be True or False")
    dials = recording_dials(o["read_tracking"], o["commit_values"], o["write_provenance"])
    provider, max_iterations, id = o["provider"], o["max_iterations"], o["id"]
    if not hasattr(provider, "complete"):
        raise AgentBuildError(f"provider must implement complete(request), got {type(provider).__name__}")
    if not isinstance(max_iterations, int) or not 1 <= max_iterations <= MAX_ITERATIONS_CEILING:
        raise AgentBuildError(f"max_iterations must be an int in 1..{MAX_ITERATIONS_CEILING}")
    if id is not None and (not isinstance(id, str) or not id.strip() or len(id) > 200):
        raise AgentBuildError("id must be a non-empty str of at most 200 characters")
    try:
        key = seal_key(o["checkpoint_key"])
    except TypeError:
        raise AgentBuildError("checkpoint_key must be a non-empty str or bytes") from None
    ledger = o["decision_ledger"]
    if ledger is not None and not isinstance(ledger, DecisionLedger):
        raise AgentBuildError("decision_ledger must have spend(request_id) -> bool and is_spent(request_id)")
    legacy, chars = o["max_result_chars"], o["max_tool_result_chars"]
    if legacy is not None and chars is not None:
        raise InvalidLimitError("max_tool_result_chars", "and max_result_chars are one option: give one of them")
    ceiling = read_result_ceiling(
        "max_tool_result_chars" if legacy is None else "max_result_chars", chars if legacy is None else legacy
    )
    budget = read_cost_budget(o["cost_budget"])
    return AgentConfig(
        provider=provider,
        model=o["model"],
        name=o["name"],
        id=id,
        max_iterations=max_iterations,
        temperature=o["temperature"],
        max_tokens=o["max_tokens"],
        max_result_chars=ceiling,
        cost_budget=budget.usd if budget is not None else None,
        cost_action=budget.on_exceed if budget is not None else "warn",
        wrap_up_at_max_iterations=read_switch("wrap_up_at_max_iterations", o["wrap_up_at_max_iterations"]),
        repeated_call_nudge=read_switch("repeated_call_nudge", o["repeated_call_nudge"]),
        keep_last_tool_results=read_keep_last(o["keep_last_tool_results"]),
        caching=o["caching"],
        record_system_prompt=o["record_system_prompt"],
        recording=dials,
        react_mode=o["react_mode"],
        observer_delivery=o["observer_delivery"],
        observer_queue=queue,
        checkpoint_key=key,
        decision_ledger=ledger,
    )


def validate(config: AgentConfig) -> None:
    """Refuse a configuration an agent cannot run: two tools (or injections, or extensions) under one name."""
    seen: dict[str, Tool] = {}
    builtin = read_skill_tool(config.skills)
    all_tools: list[Tool] = [*config.all_tools(), *(t for s in config.skills for t in s.tools)]
    if builtin is not None:
        all_tools.append(builtin)
    for t in all_tools:
        other = seen.get(t.name)
        if other is not None and other is not t:
            raise DuplicateToolError(t.name)
        seen[t.name] = t
    ids: set[str] = set()
    for inj in config.injections:
        if inj.id in ids:
            raise AgentBuildError(f"two context injections share the id '{inj.id}'")
        ids.add(inj.id)
    names = [e.name for e in config.extensions]
    if len(set(names)) != len(names):
        raise AgentBuildError("two extensions share a name; each extension's name must be unique on an agent")
