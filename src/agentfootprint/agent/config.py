"""An agent's immutable configuration: what the builder collected, and which extensions hook where."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from agentfootprint._features import installed_defaults
from agentfootprint.agent._seal import SealKey
from agentfootprint.agent.consent import DecisionLedger, process_decision_ledger
from agentfootprint.agent.extension import Extension
from agentfootprint.agent.voice import Voice
from agentfootprint.context import ContextBudget, Injection, MemoryInjection, RagInjection, WindowPolicy
from agentfootprint.context.injection import CachePolicy
from agentfootprint.context.window import SummarizeOldest, TokenBudgetWindow
from agentfootprint.flow import RedactionPolicy
from agentfootprint.flow.recording import DEFAULT_DIALS, RecordingDials
from agentfootprint.providers import Provider, ThinkingHandler
from agentfootprint.tools import PermissionChecker, Tool

if TYPE_CHECKING:
    from agentfootprint._features import ExtensionFactory

READ_SKILL = "read_skill"


@dataclass(frozen=True)
class ExtensionHooks:
    """Per hook, the extensions that override it, in ``.use()`` order (a hook nobody overrides costs nothing)."""

    provide_tools: tuple[Extension, ...] = ()
    filter_tools: tuple[Extension, ...] = ()
    before_run: tuple[Extension, ...] = ()
    after_run: tuple[Extension, ...] = ()
    on_error: tuple[Extension, ...] = ()
    on_input: tuple[Extension, ...] = ()
    wrap_model_call: tuple[Extension, ...] = ()
    wrap_tool_call: tuple[Extension, ...] = ()
    on_answer: tuple[Extension, ...] = ()
    result: tuple[Extension, ...] = ()
    checkpoint: tuple[Extension, ...] = ()
    restore: tuple[Extension, ...] = ()

    @classmethod
    def of(cls, extensions: tuple[Extension, ...]) -> ExtensionHooks:
        hooks: dict[str, tuple[Extension, ...]] = {}
        for hook in (f.name for f in fields(cls)):
            base = getattr(Extension, hook)
            hooks[hook] = tuple(e for e in extensions if getattr(type(e), hook) is not base)
        return cls(**hooks)


@dataclass(frozen=True)
class AgentConfig:
    """Everything that defines an agent; ``without()`` derives a copy for ablation reruns."""

    provider: Provider
    model: str = ""
    name: str = "agent"
    id: str | None = None
    """The id somebody chose (``Agent.create(id=...)``); None when the agent took the default."""
    max_iterations: int = 10
    system_prompt: str = ""
    tools: tuple[Tool, ...] = ()
    injections: tuple[Injection, ...] = ()
    redaction: RedactionPolicy = field(default_factory=RedactionPolicy)
    output_schema: Any = None
    output_retries: int = 0
    pricing: dict[str, dict[str, float]] | None = None
    cost_budget: float | None = None
    cost_action: Literal["warn", "halt"] = "warn"
    """What crossing ``cost_budget`` does: a bare-number budget warns; ``{"usd": n, "on_exceed": "halt"}`` halts."""
    temperature: float | None = None
    max_tokens: int | None = None
    permission: PermissionChecker | None = None
    max_result_chars: int | None = None
    """``max_tool_result_chars``: None (the default) never measures or cuts a tool result."""
    wrap_up_at_max_iterations: bool = True
    repeated_call_nudge: bool = True
    """Tell the model when one tool returned the same result for the same arguments a second time this run."""
    keep_last_tool_results: int = 2
    """Under a window, each of this many tools' newest result since the request stays in view (0: off)."""
    time_zone: str | None = None
    """``.time(zone=)``: the fallback zone of the person (None: unknown until a run says)."""
    time_enabled: bool = False
    """Whether the agent reads ``time`` (``.time()``); one without it refuses ``time`` on every door."""
    run_config: Callable[[Any], Any] | None = None
    """``.configure(fn)``: resolves this run's model and base instructions when a turn starts (None: the defaults)."""
    """When the action budget runs out while the model still asks for tools: one more call, tools withheld."""
    keep_events: bool = False
    # context engineering (agentfootprint.context.budget): per-slot budgets that warn; a window over turns
    context_budget: ContextBudget | None = None
    window: WindowPolicy | TokenBudgetWindow | SummarizeOldest | None = None
    # prompt caching, thinking and what the record keeps
    system_prompt_cache: CachePolicy = "always"
    caching: Literal["on", "off"] = "on"
    record_system_prompt: bool = False
    recording: RecordingDials = DEFAULT_DIALS
    voice: Voice = field(default_factory=Voice)
    thinking_budget: int | None = None
    thinking_handler: ThinkingHandler | None = None
    react_mode: Literal["dynamic", "classic", "dynamic-grouped"] = "dynamic"
    observer_delivery: Literal["inline", "deferred"] = "inline"
    observer_queue: int = 10_000
    # the extension seam: features above the agent (honesty, middleware, tool providers) plug in here
    extensions: tuple[Extension, ...] = ()
    default_extensions: tuple[ExtensionFactory, ...] = field(default_factory=installed_defaults)
    """What every agent built from this configuration gets unless it uses an extension of the same name (or declines
    it): one fresh instance each per ``build()``. The composition root fills it (honesty, tool sessions, receipts)."""
    ablated: frozenset[str] = frozenset()
    """Tool names ``without()`` removed: extension tools by these names are not offered either."""
    ablated_results: frozenset[str] = frozenset()
    """Tool results ``without()`` blanked, one call each (``lookup#2``: the run's second result of ``lookup``)."""
    # run integrity: checkpoints sealed with this key; consent requests spent in this ledger (None: the process's)
    checkpoint_key: SealKey | None = field(default=None, repr=False)
    decision_ledger: DecisionLedger | None = None

    def ledger(self) -> DecisionLedger:
        """Where this agent's answered consent requests are spent."""
        return self.decision_ledger if self.decision_ledger is not None else process_decision_ledger()

    @cached_property
    def hooks(self) -> ExtensionHooks:
        return ExtensionHooks.of(self.extensions)

    @property
    def skills(self) -> tuple[Injection, ...]:
        return tuple(i for i in self.injections if i.flavor == "skill")

    def extension_tools(self) -> tuple[Tool, ...]:
        """Every extension's static tools, minus those ablated."""
        return tuple(t for e in self.extensions for t in e.tools() if t.name not in self.ablated)

    def all_tools(self) -> tuple[Tool, ...]:
        """The agent's own tools, then the extensions' static ones."""
        return (*self.tools, *self.extension_tools())

    def source_ids(self) -> dict[str, str]:
        """Every ablatable source id → its kind (injection flavor, or ``tool``)."""
        out: dict[str, str] = {i.id: i.flavor for i in self.injections}
        for t in self.all_tools():
            out.setdefault(t.name, "tool")
        for s in self.skills:
            for t in s.tools:
                out.setdefault(t.name, "tool")
        for ext in self.extensions:
            for name, kind in ext.sources().items():
                out.setdefault(name, kind)
        return out

    def extension(self, name: str) -> Extension | None:
        return next((e for e in self.extensions if e.name == name), None)

    def knows_chunk(self, chunk_id: str) -> bool:
        """Whether a retrieval of this agent can land a chunk with this id (ablatable one chunk at a time)."""
        return any(isinstance(i, RagInjection) and i.knows(chunk_id) for i in self.injections)

    def is_tool_result(self, source_id: str) -> bool:
        """Whether ``source_id`` names one call's result of one of this agent's tools (``lookup#2``)."""
        name, sep, ordinal = source_id.rpartition("#")
        if not sep or not ordinal.isdecimal() or ordinal.startswith("0") or not ordinal.isascii():
            return False
        return self.source_ids().get(name) == "tool"

    def without(self, ids: set[str]) -> AgentConfig:
        """This configuration without these sources; ``tool#n`` blanks the run's n-th result of that tool, and any
        other id that names no injection or tool is a retrieved chunk or memory entry that stops landing."""
        known = set(self.source_ids())
        results = frozenset(i for i in ids - known if self.is_tool_result(i))
        parts = frozenset(ids - known - results)
        injections = []
        for inj in self.injections:
            if inj.id in ids:
                continue
            if inj.tools and any(t.name in ids for t in inj.tools):
                inj = replace(inj, tools=tuple(t for t in inj.tools if t.name not in ids))
            if parts and isinstance(inj, RagInjection | MemoryInjection):
                inj = replace(inj, excluded=inj.excluded | parts)
            injections.append(inj)
        return replace(
            self,
            injections=tuple(injections),
            tools=tuple(t for t in self.tools if t.name not in ids),
            ablated_results=self.ablated_results | results,
            ablated=self.ablated
            | {t.name for t in self.extension_tools() if t.name in ids}
            | {name for e in self.extensions for name in e.sources() if name in ids},
        )


__all__ = ["READ_SKILL", "AgentConfig", "ExtensionHooks"]
