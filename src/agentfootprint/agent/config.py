"""An agent's immutable configuration (what the builder collected), and the per-run context stages read."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agentfootprint.context import ContextBudget, Injection, WindowPolicy
from agentfootprint.flow import RedactionPolicy, Redactor
from agentfootprint.flow._frozen import thaw
from agentfootprint.identity import Identity
from agentfootprint.providers import Message, Provider
from agentfootprint.tools import PermissionChecker, Tool

READ_SKILL = "read_skill"


@dataclass(frozen=True)
class AgentConfig:
    """Everything that defines an agent; ``without()`` derives a copy for ablation reruns."""

    provider: Provider
    model: str = ""
    name: str = "agent"
    max_iterations: int = 10
    system_prompt: str = ""
    tools: tuple[Tool, ...] = ()
    injections: tuple[Injection, ...] = ()
    redaction: RedactionPolicy = field(default_factory=RedactionPolicy)
    output_schema: Any = None
    output_retries: int = 0
    pricing: dict[str, dict[str, float]] | None = None
    cost_budget: float | None = None
    cost_action: Literal["warn", "halt"] = "halt"
    temperature: float | None = None
    max_tokens: int | None = None
    permission: PermissionChecker | None = None
    max_result_chars: int = 100_000
    keep_events: bool = False
    # context engineering (agentfootprint.context.budget): per-slot budgets that warn; a window over turns
    context_budget: ContextBudget | None = None
    window: WindowPolicy | None = None
    # [honesty] answer honesty (agent/evidence.py, agent/chat.py): the evidence gate's posture, values always
    # treated as grounded, and the self-explain binding (previous run's served record, for the trace tools)
    evidence_posture: Literal["assist", "guard", "rails"] | None = None
    evidence_allow: tuple[str, ...] = ()
    self_explain: Any = None
    # [/honesty]

    @property
    def skills(self) -> tuple[Injection, ...]:
        return tuple(i for i in self.injections if i.flavor == "skill")

    def source_ids(self) -> dict[str, str]:
        """Every ablatable source id → its kind (injection flavor, or ``tool``)."""
        out: dict[str, str] = {i.id: i.flavor for i in self.injections}
        for t in self.tools:
            out.setdefault(t.name, "tool")
        for s in self.skills:
            for t in s.tools:
                out.setdefault(t.name, "tool")
        return out

    def without(self, ids: set[str]) -> AgentConfig:
        injections = []
        for inj in self.injections:
            if inj.id in ids:
                continue
            if inj.tools and any(t.name in ids for t in inj.tools):
                inj = replace(inj, tools=tuple(t for t in inj.tools if t.name not in ids))
            injections.append(inj)
        return replace(self, injections=tuple(injections), tools=tuple(t for t in self.tools if t.name not in ids))


@dataclass
class RunContext:
    """Per-run facts the chart's stages need but that are not state (provider handles, listeners, identity)."""

    config: AgentConfig
    events: Any
    run_id: str
    identity: Identity | None = None
    session_id: str | None = None
    seed: int | None = None
    redactor: Redactor = field(default_factory=lambda: Redactor(RedactionPolicy()))
    cancelled: asyncio.Event | None = None
    last_completed_iteration: int = 0
    budget_warned: bool = False
    original_input: str | None = None
    mounted: bool = False
    _message_caches: dict[str, tuple[list[Any], list[Message]]] = field(default_factory=dict)

    def messages_for(self, history: Sequence[Any], key: str = "") -> list[Message]:
        """History entries as provider messages; converts only entries added since the last call (linear cost).

        Keyed by the chart namespace (members re-entered by a Loop or run side by side never share a cache);
        a history that is not an extension of the cached one is converted afresh."""
        sources, cache = self._message_caches.get(key, ([], []))
        n = len(sources)
        if n and (len(history) < n or history[0] is not sources[0] or history[n - 1] is not sources[n - 1]):
            sources, cache = [], []
        for entry in history[len(cache) :]:
            sources.append(entry)
            cache.append(Message.model_validate(thaw(entry)))
        self._message_caches[key] = (sources, cache)
        return list(cache)


CURRENT_RUN: ContextVar[RunContext | None] = ContextVar("agentfootprint_agent_run", default=None)
MEMBER_RUNS: ContextVar[dict[int, RunContext] | None] = ContextVar("agentfootprint_member_runs", default=None)


def current_run(config: AgentConfig | None = None) -> RunContext:
    """The run this agent's stage serves: its own ``run()``, or the composition run it is mounted in."""
    members = MEMBER_RUNS.get()
    if config is not None and members is not None:
        member = members.get(id(config))
        if member is not None:
            return member
    rc = CURRENT_RUN.get()
    if rc is not None and (config is None or rc.config is config):
        return rc
    from agentfootprint.compose.member_run import MemberIdentityError

    raise MemberIdentityError()
