"""``AgentBuilder``: collects an agent's configuration; ``build()`` validates it and compiles the chart."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

from agentfootprint._features import features
from agentfootprint.agent._clock import builder_zone
from agentfootprint.agent._limits import read_cost_budget
from agentfootprint.agent._output import (
    _UNSET,
    MAX_RETRIES,
    STRATEGIES,
    OutputContract,
    check_contract_build,
    ensure_output_event_types,
    resolve_fallback,
)
from agentfootprint.agent._run_config import RunConfigContext
from agentfootprint.agent._viewer import bind_viewer, check_recorders, check_translator, replay_structure
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import AgentBuildError, InvalidLimitError, OptionUnavailableError
from agentfootprint.agent.extension import DuplicateExtensionError, Extension, check_extension
from agentfootprint.agent.voice import check_app_name, check_templates
from agentfootprint.context import (
    ContextBudget,
    Injection,
    InvalidInjectionError,
    MemoryInjection,
    RagInjection,
    WindowPolicy,
    define_fact,
)
from agentfootprint.context.budget import ensure_context_event_types
from agentfootprint.context.cache import CACHE_POLICIES
from agentfootprint.context.injection import CachePolicy
from agentfootprint.context.window import (
    SummarizeFn,
    SummarizeOldest,
    TokenBudgetWindow,
    TokenCounter,
    summarize_oldest,
)
from agentfootprint.flow import RedactionPolicy
from agentfootprint.providers import Provider, ThinkingHandler, think_tags
from agentfootprint.tools import PermissionChecker, Tool, ToolProvider

if TYPE_CHECKING:
    from agentfootprint.agent.agent import Agent

_DECLARED = object()
X = TypeVar("X", bound=Extension)
R = TypeVar("R")

PRICE_KINDS = ("input", "output", "cached_input", "cache_write")
"""The rates a pricing table may name for a model (USD per 1,000 tokens)."""


@contextmanager
def _build_error(code: str | None = None) -> Iterator[None]:
    """A feature's ``TypeError`` / ``ValueError`` while an option is being set, as an ``AgentBuildError``."""
    try:
        yield
    except AgentBuildError:
        raise
    except (TypeError, ValueError) as exc:
        raise AgentBuildError(str(exc), code=code) from None


class AgentBuilder:
    """Collects an agent's configuration; ``build()`` validates it and compiles the chart."""

    def __init__(self, config: AgentConfig) -> None:
        self._config = config
        self._tools: list[Tool] = []
        self._injections: list[Injection] = []
        self._extensions: list[Extension] = []
        self._receipts = True
        self._output: OutputContract | None = None
        self._recipe_stack: list[str] = []
        self._recipes_applied: list[str] = []
        self._fallback: tuple[Any, Any] | None = None
        self._viewer: tuple[tuple[Any, ...], Any] = ((), None)  # structure recorders, group translator (R004-134)

    def system(self, text: str, *, cache: CachePolicy = "always") -> AgentBuilder:
        """The base system prompt; context injections are appended after it. ``cache``: its prompt-cache policy
        (``always`` by default: the stable prefix every call shares; ``while-active`` or ``never``)."""
        if not isinstance(text, str):
            raise AgentBuildError(f"system prompt must be a str, got {type(text).__name__}")
        if cache not in CACHE_POLICIES:
            raise AgentBuildError("system() cache must be 'always', 'never' or 'while-active'")
        self._config = replace(self._config, system_prompt=text, system_prompt_cache=cache)
        return self

    def thinking(
        self, *, budget: int | None = None, handler: ThinkingHandler | object | None = _DECLARED
    ) -> AgentBuilder:
        """Ask for thinking on every model call (``budget`` tokens) and normalize it with ``handler`` (default: the
        provider's declared handler, else ``think_tags()``; ``None`` opts out). Thinking is recorded with each call,
        redactable (``.redact(keys=["reasoning"])``) and never part of the answer."""
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget):
            raise AgentBuildError("thinking budget must be a positive int (tokens)")
        if handler is _DECLARED:
            declared = getattr(self._config.provider, "thinking_handler", None)
            chosen: ThinkingHandler | None = declared if isinstance(declared, ThinkingHandler) else think_tags()
        elif handler is None or isinstance(handler, ThinkingHandler):
            chosen = handler
        else:
            raise AgentBuildError(f"thinking handler must have normalize(response), got {type(handler).__name__}")
        self._config = replace(self._config, thinking_budget=budget, thinking_handler=chosen)
        return self

    def tool(self, t: Tool) -> AgentBuilder:
        if not isinstance(t, Tool):
            raise AgentBuildError(f"tool() takes a Tool (define_tool or @tool), got {type(t).__name__}")
        self._tools.append(t)
        return self

    def tools(self, tools: Iterable[Tool]) -> AgentBuilder:
        for t in tools:
            self.tool(t)
        return self

    def _inject(self, inj: Injection, flavor: str) -> AgentBuilder:
        if not isinstance(inj, Injection):
            raise AgentBuildError(f"{flavor}() takes an Injection from define_{flavor}, got {type(inj).__name__}")
        self._injections.append(inj)
        return self

    def fact(self, inj: Injection) -> AgentBuilder:
        return self._inject(inj, "fact")

    def steering(self, inj: Injection) -> AgentBuilder:
        return self._inject(inj, "steering")

    def instruction(self, inj: Injection) -> AgentBuilder:
        return self._inject(inj, "instruction")

    def skill(self, inj: Injection) -> AgentBuilder:
        return self._inject(inj, "skill")

    def inject(self, inj: Injection) -> AgentBuilder:
        """Any injection (memory, RAG, custom flavors)."""
        return self._inject(inj, "inject")

    def redact(self, keys: Iterable[str] = (), patterns: Iterable[str] = ()) -> AgentBuilder:
        """Keep these state keys / field names and regex matches off every recorded surface (lists of str, as the
        ``redact`` run option takes them); a bare str or a pattern that does not compile is refused, unquoted."""
        if isinstance(keys, str) or isinstance(patterns, str):
            raise AgentBuildError(
                "redact() takes lists, e.g. keys=['card'] (a bare str would be read letter by letter)",
                code="ERR_REDACT_BUILD",
            )
        keys, patterns = list(keys), list(patterns)
        if not all(isinstance(k, str) and k for k in keys) or not all(isinstance(p, str) and p for p in patterns):
            raise AgentBuildError("redact() keys and patterns must be non-empty str", code="ERR_REDACT_BUILD")
        try:
            policy = RedactionPolicy.of(keys=keys, patterns=patterns)
        except re.error:
            raise AgentBuildError(
                "redact() holds a pattern that is not a valid regular expression", code="ERR_REDACT_BUILD"
            ) from None
        self._config = replace(self._config, redaction=self._config.redaction.union(policy))
        return self

    def output_schema(
        self,
        model: type[BaseModel],
        *,
        retries: int = 0,
        strategy: Literal["instruct", "tool-forced", "native"] = "instruct",
    ) -> AgentBuilder:
        """The answer's contract: every final answer is judged in the loop and re-asked up to ``retries`` times;
        ``strategy`` ``tool-forced`` / ``native`` constrains the shape on the wire (refused at run start on a
        provider that cannot carry it). ``run()`` still returns the model's string (see ``run_typed``)."""
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise AgentBuildError("output_schema() takes a pydantic model class", code="ERR_OUTPUT_SCHEMA_BUILD")
        if self._output is not None:
            raise AgentBuildError(
                "output_schema() was already called; an agent has one output contract", code="ERR_OUTPUT_SCHEMA_BUILD"
            )
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
            raise AgentBuildError(
                f"output_schema retries must be an int in 0..{MAX_RETRIES}", code="ERR_OUTPUT_SCHEMA_BUILD"
            )
        if strategy not in STRATEGIES:
            raise AgentBuildError(
                "output_schema strategy must be 'instruct', 'tool-forced' or 'native'", code="ERR_OUTPUT_SCHEMA_BUILD"
            )
        self._output = OutputContract(model, retries=retries, strategy=strategy)
        self._config = replace(self._config, output_schema=model, output_retries=retries)
        return self

    def output_fallback(self, fallback: Any = None, *, canned: Any = _UNSET) -> AgentBuilder:
        """3-tier degradation for ``run_typed`` / ``parse_output_async``: the model's answer, else
        ``fallback(error, raw)`` (validated again), else ``canned`` (validated now; with it they never raise)."""
        if self._fallback is not None:
            raise AgentBuildError("output_fallback() was already called on this builder", code="ERR_OUTPUT_FALLBACK")
        self._fallback = (fallback, canned)
        return self

    def pricing(self, table: Mapping[str, Mapping[str, float]]) -> AgentBuilder:
        """USD per 1,000 tokens by model: ``{"gpt-x": {"input": 0.5, "output": 1.5}}`` (``"*"`` for any); optional
        ``cached_input`` / ``cache_write`` price prompt-cache reads and writes (else they cost ``input``)."""
        for rates in table.values():
            for kind, rate in rates.items():
                if kind not in PRICE_KINDS:
                    raise AgentBuildError("pricing takes the rates " + ", ".join(PRICE_KINDS), code="ERR_PRICING_KIND")
                if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate < float("inf"):
                    raise AgentBuildError("pricing rates are non-negative numbers", code="ERR_PRICING_RATE")
        self._config = replace(self._config, pricing={k: dict(v) for k, v in table.items()})
        return self

    def cost_budget(
        self,
        amount: float | Mapping[str, Any],
        *,
        on_exceed: Literal["warn", "halt"] | None = None,
        action: Literal["warn", "halt"] | None = None,
    ) -> AgentBuilder:
        """A cost budget in USD (needs ``.pricing()``): a bare number warns once when crossed;
        ``{"usd": n, "on_exceed": "halt"}`` (or ``on_exceed="halt"``) stops the loop at its next routing decision.
        ``action`` is the older spelling of ``on_exceed``."""
        if on_exceed is not None and action is not None and on_exceed != action:
            raise InvalidLimitError("cost_budget.on_exceed", "was given twice (on_exceed and action) with two values")
        budget = read_cost_budget(amount, on_exceed if on_exceed is not None else action)
        if budget is None:
            raise InvalidLimitError("cost_budget", 'takes a number of USD or {"usd": n, "on_exceed": "warn" | "halt"}')
        self._config = replace(self._config, cost_budget=budget.usd, cost_action=budget.on_exceed)
        return self

    def configure(self, fn: Callable[[RunConfigContext], Any]) -> AgentBuilder:
        """Decide each run's model and/or base instructions when it starts: ``fn(ctx)`` gets the message, the
        caller, the run id and the built ``defaults``, and returns None or ``{"model"?, "instructions"?}``. What it
        returns is committed to the turn's record before the first model call. One resolver per agent."""
        if self._config.run_config is not None:
            raise AgentBuildError("configure() was already called on this builder; one resolver per agent")
        if not callable(fn):
            raise AgentBuildError("configure() takes a function (ctx) -> None | {'model'?, 'instructions'?}")
        self._config = replace(self._config, run_config=fn)
        return self

    def time(self, *, zone: str | None = None) -> AgentBuilder:
        """Read each turn's clock: ``time=`` on a door (a datetime or ``{"now": ..., "zone": ...}``), else the turn's
        start in ``zone`` (an IANA name; without one the person's zone is unknown, never the server's). Tools read
        the clock as ``ctx.service("clock")``; it is committed to the turn (``clock``)."""
        self._config = replace(self._config, time_enabled=True, time_zone=builder_zone(zone))
        return self

    def permission(self, checker: PermissionChecker) -> AgentBuilder:
        """Called before every tool: ``allow`` / ``deny`` / ``halt`` (a raising checker denies)."""
        self._config = replace(self._config, permission=checker)
        return self

    def app_name(self, name: str) -> AgentBuilder:
        """The agent's name as the actor in narration and reports ("Support Bot called the tool ..."; default
        ``Chatbot``)."""
        voice = self._config.voice.model_copy(update={"app_name": check_app_name(name)})
        self._config = replace(self._config, voice=voice)
        return self

    def commentary_templates(self, templates: Mapping[str, str]) -> AgentBuilder:
        """Third-person lines per event type (``{"stream.tool_start": "{{app_name}} ran {{name}}"}``), over the
        bundled English; what it does not name keeps the default."""
        merged = {**self._config.voice.commentary_templates, **check_templates("commentary_templates", templates)}
        voice = self._config.voice.model_copy(update={"commentary_templates": merged})
        self._config = replace(self._config, voice=voice)
        return self

    def thinking_templates(self, templates: Mapping[str, str]) -> AgentBuilder:
        """First-person status lines per event type (``{"stream.llm_start": "Pensando…"}``), over the bundled
        English; what it does not name keeps the default."""
        merged = {**self._config.voice.thinking_templates, **check_templates("thinking_templates", templates)}
        voice = self._config.voice.model_copy(update={"thinking_templates": merged})
        self._config = replace(self._config, voice=voice)
        return self

    def structure_recorders(self, *recorders: Any) -> AgentBuilder:
        """Objects told about every node of the agent's chart when ``build()`` compiles it (``on_stage_added``,
        ``on_edge_added``, ``on_loop_edge_added``, ``on_decider_complete``, ``on_subflow_mounted``; a hook that
        raises is collected in ``structure_build_errors(agent)`` and never stops the build)."""
        with _build_error("ERR_VIEWER"):
            self._viewer = (check_recorders(recorders), self._viewer[1])
        return self

    def group_translator(self, translator: Callable[[Any], Any]) -> AgentBuilder:
        """``translator(GroupMetadata)`` draws the agent as a viewer wants it (``ui_group(agent)``, run once)."""
        with _build_error("ERR_VIEWER"):
            self._viewer = (self._viewer[0], check_translator(translator))
        return self

    def keep_events(self, keep: bool = True) -> AgentBuilder:
        """Keep each run's events for ``last_events()`` (audit exports include them)."""
        self._config = replace(self._config, keep_events=keep)
        return self

    # -- context engineering: memory, RAG, budgets, window (agentfootprint.context) ---------------------------
    def memory(self, inj: MemoryInjection) -> AgentBuilder:
        """Conversation memory from ``define_memory``: recalled per identity, written after each completed turn."""
        if not isinstance(inj, MemoryInjection):
            raise AgentBuildError(f"memory() takes an injection from define_memory, got {type(inj).__name__}")
        return self._inject(inj, "memory")

    def rag(self, inj: RagInjection) -> AgentBuilder:
        """Retrieval from ``define_rag``: the chunks for each turn land as an injection with their ids."""
        if not isinstance(inj, RagInjection):
            raise AgentBuildError(f"rag() takes an injection from define_rag, got {type(inj).__name__}")
        return self._inject(inj, "rag")

    def context_budget(
        self, *, system_prompt: int | None = None, messages: int | None = None, tools: int | None = None
    ) -> AgentBuilder:
        """Character budgets per slot; going over emits ``context.budget_pressure`` (nothing is cut)."""
        try:
            budget = ContextBudget(system_prompt=system_prompt, messages=messages, tools=tools)
        except InvalidInjectionError as exc:
            raise AgentBuildError(str(exc)) from None
        if not budget.limits():
            raise AgentBuildError("context_budget() needs a budget for at least one slot")
        self._config = replace(self._config, context_budget=budget)
        return self

    def window(
        self,
        strategy: TokenBudgetWindow | SummarizeOldest | WindowPolicy | None = None,
        *,
        max_turns: int | None = None,
        max_chars: int | None = None,
    ) -> AgentBuilder:
        """What the model is shown of the conversation: the last turns (``max_turns`` / ``max_chars``), or a counted
        strategy (``token_budget(...)`` drops oldest turns from view, ``summarize_oldest(...)`` folds them).
        One window per agent."""
        if self._config.window is not None:
            raise AgentBuildError("this agent already has a window strategy; an agent has exactly one")
        if strategy is not None:
            if max_turns is not None or max_chars is not None:
                raise AgentBuildError("window() takes a strategy or max_turns/max_chars, not both")
            if not isinstance(strategy, TokenBudgetWindow | SummarizeOldest | WindowPolicy):
                raise AgentBuildError(
                    f"window() takes token_budget(...) or summarize_oldest(...), got {type(strategy).__name__}"
                )
            self._config = replace(self._config, window=strategy)
            return self
        try:
            policy = WindowPolicy(max_turns=max_turns, max_chars=max_chars)
        except InvalidInjectionError as exc:
            raise AgentBuildError(str(exc)) from None
        self._config = replace(self._config, window=policy)
        return self

    def compaction(
        self,
        *,
        threshold_tokens: int,
        summarizer: Provider | SummarizeFn,
        model: str = "",
        keep_recent_turns: int = 4,
        retain: Literal["conversation", "discard"] = "conversation",
        count_tokens: TokenCounter | None = None,
    ) -> AgentBuilder:
        """Fold the oldest turns into a summary once a request would exceed ``threshold_tokens``; the folded
        messages travel with the conversation and backtrack reaches them (``.window(summarize_oldest(...))``)."""
        try:
            strategy = summarize_oldest(
                threshold_tokens=threshold_tokens,
                summarizer=summarizer,
                model=model,
                keep_recent_turns=keep_recent_turns,
                retain=retain,
                count_tokens=count_tokens,
            )
        except InvalidInjectionError as exc:
            raise AgentBuildError(str(exc)) from None
        return self.window(strategy)

    # -- the extension seam -------------------------------------------------------------------------------------
    def use(self, *extensions: Extension) -> AgentBuilder:
        """Plug extension objects in (``.use(Reliability(...), SelfExplain())``): their tools, hooks around input,
        model calls, tool calls and the answer, and what they add to results and checkpoints. Hooks run in
        ``use()`` order (the first used wraps the others); one extension per name (``DuplicateExtensionError``)."""
        checked = [check_extension(ext) for ext in extensions]
        names = [e.name for e in self._extensions]
        for ext in checked:
            if ext.name in names:
                raise DuplicateExtensionError(
                    f"an extension named '{ext.name}' is already used on this builder", name=ext.name
                )
            names.append(ext.name)
        self._extensions.extend(checked)
        return self

    def _once(self, option: str, make: Callable[[], Extension]) -> AgentBuilder:
        """``.use(make())`` for a builder option that takes its extension once (a second call is refused by name)."""
        with _build_error():
            ext = make()
        if any(e.name == ext.name for e in self._extensions):
            raise AgentBuildError(f"{option}() was already called on this builder")
        return self.use(ext)

    def _shared(self, kind: type[X]) -> X:
        """The ``kind`` extension this builder uses, used now when none is: several options fill one object."""
        found = next((e for e in self._extensions if isinstance(e, kind)), None)
        if found is None:
            found = kind()
            self.use(found)
        return found

    # -- builder sugar: each option is ``.use()`` of a feature object from the layers above ----------------------
    def names_and_numbers_from_evidence(
        self, posture: Literal["assist", "guard", "rails"] = "assist", *, allow: Iterable[str] = ()
    ) -> AgentBuilder:
        """Check every name and number in the final answer against the run's evidence (assist / guard / rails)."""
        return self.use(features().evidence_gate(posture=posture, allow=allow))

    def check_in(self, *, evidence: Literal["standard", "minimal"] = "standard", scorer: Any = None) -> AgentBuilder:
        """How much evidence rides a check-in (consent) pause: ``standard`` (the default, also without this call)
        fills what the run read, what drove the call and the trail; ``minimal`` only what the tool will do.
        ``scorer`` ranks the drivers (``name`` + ``score(source, call)``; default: lexical, no model call)."""
        return self._once("check_in", lambda: features().honesty(evidence=evidence, scorer=scorer))

    def self_explain(self) -> AgentBuilder:
        """Give the model bounded trace tools over its previous run, so "why did you say X?" reads the record."""
        return self._once("self_explain", features().self_explain)

    def message_middleware(
        self, fn: Any, *, name: str | None = None, phase: Literal["input", "output"] = "input"
    ) -> AgentBuilder:
        """Run ``fn(message, ctx)`` on the user's message before it is committed (``"input"``) or on the answer
        (``"output"``): rewrite it, ``allow(value, why)``, or ``deny(reason)`` (the run is refused)."""
        with _build_error():
            self._shared(features().message_middleware).add(fn, name=name, phase=phase)
        return self

    def tool_middleware(self, fn: Any, *, name: str | None = None) -> AgentBuilder:
        """Wrap every tool dispatch with ``fn(call, call_next)``, in declaration order (a raising one denies)."""
        with _build_error():
            self._shared(features().tool_middleware).add(fn, name=name)
        return self

    def tool_provider(self, provider: ToolProvider) -> AgentBuilder:
        """Offer ``provider``'s tools on every model call beside the static ones (an MCP server, a gated list)."""
        with _build_error():
            self._shared(features().tool_providers).add(provider)
        return self

    def reliability(
        self,
        *,
        pre_check: Iterable[Any] = (),
        post_decide: Iterable[Any] = (),
        circuit_breaker: Any = None,
        providers: Iterable[Any] = (),
        fallback: Any = None,
    ) -> AgentBuilder:
        """Rules around every model call: ``pre_check`` (continue / fail-fast) and ``post_decide`` (ok / retry /
        retry-other / fallback / fail-fast), with an optional circuit breaker."""
        return self._once(
            "reliability",
            lambda: features().reliability(
                pre_check=list(pre_check),
                post_decide=list(post_decide),
                circuit_breaker=circuit_breaker,
                providers=list(providers),
                fallback=fallback,
            ),
        )

    def credentials(
        self,
        provider: Any,
        *,
        needs: Mapping[str, Any] | None = None,
        on_authorization_required: Literal["pause", "tell-model"] = "pause",
    ) -> AgentBuilder:
        """Resolve the credential each tool in ``needs`` declares before it runs (``ctx.service("credential")``);
        consent a person must give pauses the run by default, and its URL reaches only the caller."""
        return self._once(
            "credentials",
            lambda: features().credentials(
                provider=provider, needs=dict(needs or {}), on_authorization_required=on_authorization_required
            ),
        )

    def artifacts(self, store: Any, *, recordings: bool = False, label: str | None = None) -> AgentBuilder:
        """An artifact store (``ctx.service("artifacts")`` in tools, ``agent.get_artifact_store()``); with
        ``recordings=True`` every completed run's recording is filed into it."""
        return self._once("artifacts", lambda: features().artifacts(store=store, recordings=recordings, label=label))

    def integrity(
        self,
        *,
        integrity_posture: Literal["observe", "dev"] = "observe",
        notice_empty_lookups: bool = False,
        notice_prior_turn_evidence: bool = False,
        check_column_types: Literal["off", "warn"] = "off",
        external_grounds: Iterable[str] | None = None,
        claims: Callable[[str], Iterable[str]] | None = None,
    ) -> AgentBuilder:
        """Context-integrity checks and the one ``integrity.disposition`` event per run (see docs/integrity.md)."""
        seam = next((e for e in self._extensions if getattr(e, "implicit", False)), None)
        if seam is not None:  # the ledger ``.claims(fn)`` / ``.maps()`` made: this call configures it, both kept
            self._extensions.remove(seam)
            claims = claims if claims is not None else seam.claims  # type: ignore[attr-defined]
            maps = seam.maps  # type: ignore[attr-defined]
            invariants = getattr(seam, "invariants", None)
        else:
            maps = invariants = None
        return self._once(
            "integrity",
            lambda: features().integrity(
                integrity_posture=integrity_posture,
                notice_empty_lookups=notice_empty_lookups,
                notice_prior_turn_evidence=notice_prior_turn_evidence,
                check_column_types=check_column_types,
                external_grounds=None if external_grounds is None else list(external_grounds),
                claims=claims,
                maps=maps,
                invariants=invariants,
            ),
        )

    def record_receipt(self, enabled: bool = True) -> AgentBuilder:
        """Per-call receipts (on by default): ``False`` declines the mint and changes nothing else."""
        self._receipts = bool(enabled)
        if not enabled:
            kind = features().receipts
            self._extensions = [e for e in self._extensions if not isinstance(e, kind)]
        return self

    def skill_visibility(self, checker: Any) -> AgentBuilder:
        """Per-role skill visibility: ``checker(skill_id, ctx)`` hides every skill it does not allow (a raising
        checker hides, it never shows)."""
        return self._once("skill_visibility", lambda: features().skill_visibility(checker=checker))

    def skill_graph(self, graph: Any, *, continuity: Literal["turn", "conversation"] = "turn") -> AgentBuilder:
        """Route between skills by a declared graph (``skill_graph(skills=..., edges=..., rules=...)``): the turn
        starts in the skill its start rules pick, ``read_skill`` offers only the skills reachable from the cursor,
        and ``continuity="conversation"`` carries the cursor on ``checkpoint()``. The graph's skills are added."""
        present = {i.id for i in self._injections}
        for skill in getattr(graph, "skills", ()):
            if skill.id not in present:
                self._inject(skill, "skill")
        return self._once("skill_graph", lambda: features().skill_graph(graph=graph, continuity=continuity))

    # -- what travels with the answer (one AnswerContract object that each option arms) ------------------------
    def _arm(self, arm: Callable[[Any], object]) -> AgentBuilder:  # the extensions layer's AnswerContract
        with _build_error("ERR_ANSWER_CONTRACT"):
            arm(self._shared(features().answer_contract))
        return self

    def findings(self) -> AgentBuilder:
        """The model files its own standings on its tool results (``file_finding``) and may say what a call is for
        (``_basis``); ``agent.findings()`` reads the ledger (basis, standing, conflict, argument, period rows)."""
        return self._arm(lambda contract: contract.arm_findings())

    def limits_travel_with_the_answer(self) -> AgentBuilder:
        """What tools declared with ``coverage()`` / ``absent()`` travels with the answer: a block appended to a prose
        answer, or data beside a typed one (``agent.answer_coverage()``)."""
        return self._arm(lambda contract: contract.arm_limits())

    def negative_claims(self, *, append: bool = False) -> AgentBuilder:
        """Each ``absent()`` result becomes a library-composed negative statement with its limits
        (``agent.answer_negatives()``); ``append=True`` also appends them to a prose answer."""
        return self._arm(lambda contract: contract.arm_negatives(append))

    def answer_validation(self, *checks: Any, posture: Literal["flag", "block"] = "flag") -> AgentBuilder:
        """Terminal checks on the final answer (``answer_check(id, fn)`` or functions of the answer view);
        ``agent.answer_validation()`` reads the report; ``block`` refuses a failing answer."""
        return self._arm(lambda contract: contract.arm_validation(checks, posture))

    def inputs_layer(self, rules: Mapping[str, Mapping[str, Any]] | None = None) -> AgentBuilder:
        """Honesty layer 2: per tool argument, ``assume(value)`` or ``ask()`` when the model leaves it out; values
        the model sent that the record does not trace are filed too (``argument`` rows in ``findings()``)."""
        return self._arm(lambda contract: contract.arm_inputs(rules))

    def results_layer(self, periods: Mapping[str, Any] | None = None) -> AgentBuilder:
        """Honesty layer 3: ``period`` rows for results that declare the period they covered (``period()``), and
        ``undeclared`` for a tool named here (``{tool: (from_arg, to_arg)}``) whose result said nothing."""
        return self._arm(lambda contract: contract.arm_results(periods))

    def answer_layer(self, *, standing_line: bool | Literal["not-sure", "always"] = False) -> AgentBuilder:
        """Honesty layer 4: the answer's standing folded from its record (``agent.answer_standing()``);
        ``standing_line`` appends one line to a prose answer (``True``: when not sure; ``"always"``)."""
        return self._arm(lambda contract: contract.arm_standing(standing_line))

    # -- declared structure (one DeclaredStructure object that each option arms) -------------------------------
    def _declare(self, arm: Callable[[Any], R]) -> R:  # the extensions layer's DeclaredStructure
        with _build_error("ERR_DECLARED_STRUCTURE"):
            return arm(self._shared(features().declared_structure))

    def tool_choice(self, classifier: Any, *, serve: Literal["narrow", "hint"] = "narrow") -> AgentBuilder:
        """``classifier(message, tool_names) -> name(s)`` picks the tools for the turn; ``narrow`` offers only those
        (``hint`` offers all); the pick and each call's outcome are recorded under ``tool_choice``."""
        self._declare(lambda structure: structure.arm_tool_choice(classifier, serve))
        return self

    def ontology(self, spec: Mapping[str, Any]) -> AgentBuilder:
        """How the domain's things relate (``{"entities": {...}, "relations": [{from, to, name, via}]}``): frozen,
        recorded once per run as ``ontology``, and read by the model as the ``ontology`` fact (``via`` names a tool
        of the agent, checked at build)."""
        text = self._declare(lambda structure: structure.arm_ontology(spec))
        return self._inject(define_fact(id="ontology", data=text), "fact")

    def claims(self, contract: Mapping[str, Mapping[str, str]] | Callable[[str], Iterable[str]]) -> AgentBuilder:
        """Which typed answer field claims which settled fact (``{"nav_count": {"entity": "screen2", "field":
        "nav"}}``); checked against tools' ``semantic()`` facts after the run (``agent.claim_checks()``). A function
        ``fn(answer) -> claims`` instead: each claim is checked against the run's evidence (``unsupported-claim``)."""
        if callable(contract):
            self._ledger().claims = contract
            return self
        self._declare(lambda structure: structure.arm_claims(contract))
        return self

    def recipe(self, recipe: Any) -> AgentBuilder:
        """Apply a recipe (``define_agent_recipe``) here: its ``configure(builder)`` runs now; the run records
        ``{id, version}`` under ``agent_recipes``. A recipe applied twice or applying itself is refused by name."""
        from agentfootprint.agent.recipe import AgentRecipe

        if not isinstance(recipe, AgentRecipe):
            raise AgentBuildError("recipe() takes a recipe from define_agent_recipe", code="ERR_RECIPE")
        if recipe.id in self._recipe_stack:
            cycle = " <- ".join([*self._recipe_stack, recipe.id])
            raise AgentBuildError(f"recipe '{recipe.id}' is applying itself ({cycle})", code="ERR_RECIPE_CYCLE")
        if recipe.id in self._recipes_applied:
            raise AgentBuildError(f"recipe '{recipe.id}' is already applied to this agent", code="ERR_RECIPE_DUPLICATE")
        self._recipe_stack.append(recipe.id)
        try:
            returned = recipe.configure(self)
        finally:
            self._recipe_stack.pop()
        if inspect.isawaitable(returned):
            close = getattr(returned, "close", None)
            if callable(close):
                close()
            raise AgentBuildError(f"recipe '{recipe.id}' configure returned an awaitable", code="ERR_RECIPE_ASYNC")
        self._recipes_applied.append(recipe.id)
        row = recipe.row()
        self._declare(lambda structure: structure.add_recipe(row))
        return self

    def script_travels_with_the_answer(self, *, code: str | None = None) -> AgentBuilder:
        """The script a tool declared it ran (``script(value, code=...)``) travels with the answer: a fenced block
        appended to a prose answer, data beside a typed one (``agent.answer_script()``)."""
        if code is not None:
            raise OptionUnavailableError(
                "script_travels_with_the_answer(code=...)",
                "a code gate that re-runs the script and matches its output against the answer; scripts here "
                "travel as the record of what a tool ran, unchecked",
            )
        self._declare(lambda structure: structure.arm_script())
        return self

    def maps(self, spec: Mapping[str, Mapping[str, Any]]) -> AgentBuilder:
        """What the agent may conclude from what: ``{conclusion: {"from": [tools], "says": [phrases]}}``. An answer
        drawing a conclusion (one of its phrases) without a result of each of its tools is an
        ``unmapped-conclusion`` finding; the maps and each check are recorded (``maps``, ``map_checks``)."""
        ledger = self._ledger()
        with _build_error("ERR_MAPS"):
            ledger.arm_maps(spec)
        return self

    def invariants(self, checks: Mapping[str, Callable[[Any], bool | None]]) -> AgentBuilder:
        """What must hold of this agent's answer wherever a composition mounts it: ``{name: check}``, ``check(view)``
        (a ``MemberView``: answer, output, tools, message) says True, False or None (not applicable). Each mount
        files a row per invariant; a violation is an ``invariant-violation`` finding (see docs/integrity.md)."""
        ledger = self._ledger()
        with _build_error("ERR_INVARIANTS"):
            ledger.arm_invariants(checks)
        return self

    def _ledger(self) -> Any:
        """The integrity ledger this builder uses; one made here is replaced by a later ``.integrity()``."""
        kind = features().integrity
        ledger = next((e for e in self._extensions if isinstance(e, kind)), None)
        if ledger is None:
            ledger = kind()
            ledger.implicit = True
            self.use(ledger)
        return ledger

    def build(self) -> Agent:
        from agentfootprint.agent.agent import Agent

        used = {e.name for e in self._extensions}
        declined = () if self._receipts else (features().receipts,)
        defaults = (check_extension(make()) for make in self._config.default_extensions)
        extensions = (*(e for e in defaults if e.name not in used and not isinstance(e, declined)), *self._extensions)
        if self._output is not None or self._fallback is not None:
            extensions = (*extensions, self._contract())
        config = replace(
            self._config, tools=tuple(self._tools), injections=tuple(self._injections), extensions=extensions
        )
        for ext in extensions:
            check = getattr(ext, "check_build", None)
            if callable(check):
                check(config)
        if self._output is not None:
            check_contract_build(config)
        agent = Agent(config)
        recorders, translator = self._viewer
        if recorders or translator is not None:
            bind_viewer(agent, translator, replay_structure(agent.chart, recorders))
        ensure_context_event_types(agent.events)
        if self._output is not None:
            ensure_output_event_types(agent.events)
        for ext in extensions:
            for event_type in getattr(ext, "event_types", ()):
                if not agent.events.is_known(event_type):
                    agent.events.register_type(event_type)
        return agent

    def _contract(self) -> Extension:
        """The output contract, last in line (it judges the answer every other hook let through)."""
        if self._output is None:
            raise AgentBuildError("output_fallback() needs .output_schema(Model)", code="ERR_OUTPUT_FALLBACK")
        if self._fallback is not None:
            fallback, canned = self._fallback
            self._output.fallback = resolve_fallback(self._output.schema, fallback, canned)
        contract: Extension = self._output
        return contract


__all__ = ["AgentBuilder"]
