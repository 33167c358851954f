"""The ReAct loop's stages: seed, injection engine, the three slots, the model call, the route and the final answer.

Each stage receives its run explicitly (``scope.deps`` is the ``AgentRun``) and reads and writes the turn state
through the typed ``Turn``. The tool-calls stage lives in ``_tool_calls``.
"""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Sequence
from typing import Any, cast

from agentfootprint.agent._clock import clock_for
from agentfootprint.agent._limits import WRAP_UP_INSTRUCTION, EmptyAnswerWarning, empty_answer_line
from agentfootprint.agent._run import AgentRun
from agentfootprint.agent._run_config import RunConfig, RunConfigContext, resolve_run_config
from agentfootprint.agent._run_input import TurnInput
from agentfootprint.agent.config import READ_SKILL, AgentConfig
from agentfootprint.agent.extension import InputRefusedError
from agentfootprint.agent.turn import HistoryEntry, ModelCallRecord, ModelReply, ToolCallRecord, Turn, UsageTotal
from agentfootprint.context import Injection, InjectionContext, ToolReturn
from agentfootprint.context.budget import (
    CONTEXT_BUDGET_PRESSURE,
    CONTEXT_EVICTED,
    WindowPolicy,
    apply_window,
    check_budget,
    ensure_context_event_types,
    slot_breakdown,
)
from agentfootprint.context.cache import compute_cache_markers
from agentfootprint.context.evaluate import evaluate_injections
from agentfootprint.context.memory import remember_turn
from agentfootprint.context.window import current_request, pinned_tool_results
from agentfootprint.events import EventSink, PayloadArg
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import (
    AgentBudgetExhausted,
    AgentIterationEnd,
    AgentIterationStart,
    AgentRouteDecided,
    ContextBudgetPressure,
    ContextEvaluated,
    ContextEvicted,
    ContextInjected,
    CostBudgetWarning,
    CostUsage,
    ErrorProvider,
    StreamLlmEnd,
    StreamLlmStart,
)
from agentfootprint.flow import Scope, thaw
from agentfootprint.flow.decide import DecisionPlan, PlannedDecision
from agentfootprint.providers import (
    LLMRequest,
    LLMResponse,
    Message,
    ProviderResponseError,
    ThinkingRequest,
    ToolSpec,
    Usage,
)
from agentfootprint.tools import Tool, define_tool

_MAX_ARGS_DEPTH = 64


def emit(run: AgentRun, scope: Scope, event_type: str, payload: PayloadArg, iteration: int | None = None) -> None:
    """Emit a stage event stamped with the stage's runtime id (nothing is built when nobody listens)."""
    if run.events.has_listeners(event_type):  # asked first: no stamp read and no call when nobody listens
        run.emit(event_type, payload, runtime_stage_id=scope.runtime_stage_id, iteration=iteration)


def emit_context(run: AgentRun, scope: Scope, event_type: str, payload: PayloadArg, iteration: int) -> None:
    """Emit a context event type that may not be registered on this dispatcher yet (registers it first)."""
    ensure_context_event_types(run.events)
    emit(run, scope, event_type, payload, iteration)


def read_skill_tool(skills: Sequence[Injection]) -> Tool | None:
    """The built-in ``read_skill`` tool offering ``skills`` as its menu (None when there are none)."""
    if not skills:
        return None
    catalog = "; ".join(f"{s.id}: {s.description}" for s in skills)

    def never_called(args: dict[str, Any]) -> str:  # the loop handles read_skill itself
        return ""

    return define_tool(
        name=READ_SKILL,
        description=f"Activate a skill to get its instructions and tools. Available skills — {catalog}",
        input_schema={
            "type": "object",
            "properties": {"id": {"type": "string", "enum": [s.id for s in skills]}},
            "required": ["id"],
            "additionalProperties": False,
        },
        execute=never_called,
    )


class Catalog:
    """The tools an agent can offer, computed once per chart: by name, which are skill-scoped, which always on."""

    def __init__(self, config: AgentConfig) -> None:
        by_name: dict[str, Tool] = {t.name: t for t in config.all_tools()}
        for skill in config.skills:
            for t in skill.tools:
                by_name.setdefault(t.name, t)
        skill_tool = read_skill_tool(config.skills)
        if skill_tool is not None:
            by_name[READ_SKILL] = skill_tool
        self.by_name = by_name
        self.skill_ids = {s.id for s in config.skills}
        self.scoped = {t.name for s in config.skills if s.scope_tools for t in s.tools}
        self.base = [t for t in by_name.values() if t.name not in self.scoped]


class Stages:
    """The loop's stages for one agent config (closures over nothing: every run arrives through ``scope.deps``)."""

    def __init__(self, config: AgentConfig, events: EventSink | None = None) -> None:
        self.config = config
        self.events = events
        """The agent's own listeners, for a run adopted from a caller-built chart's mount input."""
        self.catalog = Catalog(config)
        self.cache_policies = {"system": config.system_prompt_cache, **{i.id: i.cache for i in config.injections}}
        rules: list[dict[str, Any]] = [
            {
                "when": {"pending_tool_calls": {"gt": 0}, "iteration": {"lt": config.max_iterations}},
                "then": "tool-calls",
                "label": "Model asked for tools",
            },
        ]
        if config.wrap_up_at_max_iterations:  # the action budget ran out mid-task: ask once more, tools withheld
            rules.append(
                {
                    "when": {"pending_tool_calls": {"gt": 0}, "iteration": {"eq": config.max_iterations}},
                    "then": "wrap-up",
                    "label": "Action budget exhausted",
                }
            )
        if config.cost_budget is not None and config.cost_action == "halt":
            rules.insert(
                0, {"when": {"budget_exceeded": {"eq": True}}, "then": "final", "label": "Cost budget exceeded"}
            )
        self.rules = rules
        plan = DecisionPlan.plan(rules, "final")
        assert plan is not None  # the loop's own rules are plain filters
        self.route_plan = plan

    def run_of(self, scope: Scope) -> AgentRun:
        return AgentRun.of(scope, self.config, self.events)

    # -- seed -------------------------------------------------------------------------------------------------
    async def seed(self, scope: Scope) -> None:
        run = self.run_of(scope)
        turn = Turn(scope)
        passed_time: dict[str, Any] | None = None  # a member's turn keeps the builder's zone and its own start
        if run.mounted:  # a composition member: the message comes from the mount, the run from the composition
            await run.each("before_run")
            message = await self._let_in(run, turn, turn.member_message)
            turn.run = {
                "run_id": run.run_id,
                "agent": self.config.name,
                "session_id": run.session_id,
                "identity": run.identity.model_dump(exclude_none=True) if run.identity else None,
                "member": True,
            }
            turn.user_message = message
            turn.history = [{"role": "user", "content": message}]
        else:
            given = TurnInput.from_args(scope.args)
            for ext in self.config.hooks.restore:
                if ext.name in run.continued:
                    await ext.restore(run.ctx(ext, turn), run.continued[ext.name])
            message = await self._let_in(run, turn, given.message)
            turn.run = {
                "run_id": given.run_id,
                "agent": self.config.name,
                "session_id": given.session_id,
                "identity": given.identity,
            }
            turn.user_message = message
            turn.history = given.opening_history(message)
            if given.folded:  # what earlier summaries stand for travels with the conversation
                turn.folded_spans = list(given.folded)
            if given.window_measure:
                turn.window_measure = given.window_measure
            passed_time = given.time
        if self.config.time_enabled:  # the turn's clock: read at the door, or the builder's zone and the start
            turn.clock = clock_for(passed_time, self.config.time_zone)
            run.tool_services["clock"] = thaw(turn.clock)
        if self.config.run_config is not None:
            turn.run_config = await resolve_run_config(
                self.config.run_config,
                RunConfigContext(
                    message=message,
                    identity=run.identity,
                    run_id=run.run_id,
                    session_id=run.session_id,
                    defaults=RunConfig(model=self.config.model or None, instructions=self.config.system_prompt),
                ),
            )
        turn.iteration = 0
        turn.activated_skills = []
        turn.last_tool_results = []
        turn.usage_total = {"input_tokens": 0, "output_tokens": 0}

    async def _let_in(self, run: AgentRun, turn: Turn, message: str) -> str:
        """The message through every ``on_input`` hook (each may rewrite it or refuse it by raising)."""
        for ext in self.config.hooks.on_input:
            message = await ext.on_input(run.ctx(ext, turn), message)
            if not isinstance(message, str) or not message.strip():
                raise InputRefusedError(f"extension '{ext.name}' let no message through", extension=ext.name)
        return message

    # -- injection engine and slots ---------------------------------------------------------------------------
    def injection_engine(self, scope: Scope) -> None:
        run = self.run_of(scope)
        turn = Turn(scope)
        iteration = turn.iteration + 1
        turn.iteration = iteration
        run.last_completed_iteration = iteration - 1
        if self.config.react_mode == "classic" and iteration > 1:  # classic ReAct: the context is composed once
            emit(run, scope, ev.AGENT_ITERATION_START, lambda: AgentIterationStart(iteration=iteration), iteration)
            return
        returns = tuple(
            ToolReturn(name=r["name"], call_id=r["call_id"], content=r["content"], is_error=r["is_error"])
            for r in turn.last_tool_results
        )
        ctx = InjectionContext(
            user_message=turn.user_message,
            iteration=iteration,
            last_tool_results=returns,
            activated_skills=tuple(turn.activated_skills),
            identity=run.memory_identity,
            run_id=run.turn_id,
        )
        previous = {
            r["source_id"]: r["since_iteration"] for r in (*turn.system_prompt_injections, *turn.message_injections)
        }
        configured = turn.run_config
        base = configured["instructions"] if configured else self.config.system_prompt
        result = evaluate_injections(self.config.injections, ctx, base, previous)
        turn.system_prompt_injections = result["system_prompt"]
        turn.message_injections = result["messages"]
        turn.tool_injections = result["tools"]
        turn.context_evaluated = result["summary"]
        emit(run, scope, ev.AGENT_ITERATION_START, lambda: AgentIterationStart(iteration=iteration), iteration)
        emit(run, scope, ev.CONTEXT_EVALUATED, lambda: ContextEvaluated(**result["summary"]), iteration)
        if run.events.has_listeners(ev.CONTEXT_INJECTED):
            for slot in ("system_prompt", "messages"):
                for record in result[slot]:
                    emit(run, scope, ev.CONTEXT_INJECTED, ContextInjected(**record, slot=slot), iteration)

    def _frozen(self, turn: Turn) -> bool:
        """Classic ReAct composes the slots on the first iteration only."""
        return self.config.react_mode == "classic" and turn.iteration > 1

    def system_prompt_slot(self, scope: Scope) -> None:
        turn = Turn(scope)
        if self._frozen(turn):
            return
        turn.system_prompt = "\n\n".join(r["text"] for r in turn.system_prompt_injections)

    def messages_slot(self, scope: Scope) -> None:
        turn = Turn(scope)
        if self._frozen(turn):
            return
        turn.message_slot = [
            {"role": r["role"], "content": r["text"], "source_id": r["source_id"]} for r in turn.message_injections
        ]

    async def context_slots(self, scope: Scope) -> None:
        """``dynamic-grouped``: the three slots composed as one recorded step."""
        self.system_prompt_slot(scope)
        self.messages_slot(scope)
        await self.tools_slot(scope)

    async def tools_slot(self, scope: Scope) -> None:
        turn = Turn(scope)
        if self._frozen(turn):
            return
        catalog = self.catalog
        active_skill_tools = {r["tool"] for r in turn.tool_injections}
        offered = [*catalog.base] + [
            catalog.by_name[n] for n in sorted(active_skill_tools) if n in catalog.by_name and n in catalog.scoped
        ]
        hooks = self.config.hooks
        if hooks.provide_tools:
            offered += await self._provided(self.run_of(scope), turn)
        if hooks.filter_tools:
            offered = await self._filtered(self.run_of(scope), turn, offered)
        specs: list[dict[str, Any]] = []
        seen: set[str] = set()
        for t in offered:
            if t.name not in seen:
                seen.add(t.name)
                specs.append(t.to_spec())
        turn.tool_specs = specs

    async def _filtered(self, run: AgentRun, turn: Turn, offered: list[Tool]) -> list[Tool]:
        """The offer through every ``filter_tools`` gate; a tool replaced under its own name is the one dispatched."""
        allowed = {t.name for t in offered}
        for ext in self.config.hooks.filter_tools:
            gated = list(await ext.filter_tools(run.ctx(ext, turn), list(offered)))
            for t in gated:
                if not isinstance(t, Tool) or t.name not in allowed:
                    raise TypeError(f"extension '{ext.name}' filter_tools may only drop or replace offered tools")
            offered = gated
        provided = run.provided.setdefault(turn.scope.namespace, {})
        for t in offered:
            if self.catalog.by_name.get(t.name) not in (None, t):
                provided[t.name] = t
        return offered

    async def _provided(self, run: AgentRun, turn: Turn) -> list[Tool]:
        """This iteration's extension-provided tools (a name the agent already has is not offered twice)."""
        provided: dict[str, Tool] = {}
        for ext in self.config.hooks.provide_tools:
            for t in await ext.provide_tools(run.ctx(ext, turn)):
                if not isinstance(t, Tool):
                    raise TypeError(f"extension '{ext.name}' provided {type(t).__name__}, not a Tool")
                if t.name not in self.catalog.by_name and t.name not in self.config.ablated:
                    provided.setdefault(t.name, t)
        run.provided[turn.scope.namespace] = provided
        return list(provided.values())

    # -- the model call ---------------------------------------------------------------------------------------
    def model_of(self, turn: Turn) -> str:
        """The model this run's calls use: what ``.configure()`` resolved, else the agent's own."""
        configured = turn.run_config
        return configured["model"] if configured else self.config.model

    def _request(self, run: AgentRun, scope: Scope, turn: Turn) -> tuple[LLMRequest, list[Message]]:
        """The request this iteration sends, with the context pipeline applied (window, cache markers, budgets)."""
        config = self.config
        iteration = turn.iteration
        injected = turn.message_slot
        messages = [Message(role=m["role"], content=m["content"]) for m in injected]
        conversation = run.messages_for(turn.history, scope.namespace)
        if isinstance(config.window, WindowPolicy):  # drops oldest turns from view, never from history
            history = turn.history
            pins = pinned_tool_results(
                history, config.keep_last_tool_results, current_request(history, turn.user_message)
            )
            held: list[int] = []
            conversation, dropped = apply_window(conversation, config.window, pins, held)
            if dropped:
                turn.window_dropped = dropped
                if held:  # the newest tool results stayed in view (keep_last_tool_results)
                    evicted = lambda: ContextEvicted(slot="messages", dropped=dropped, pinned=held)  # noqa: E731
                else:
                    evicted = lambda: ContextEvicted(slot="messages", dropped=dropped)  # noqa: E731
                emit_context(run, scope, CONTEXT_EVICTED, evicted, iteration)
        elif config.window is not None:  # a token-budget window: the window stage chose what leaves the view
            gone = {int(d["index"]) for d in scope.get("window_dropped") or ()}
            conversation = [m for i, m in enumerate(conversation) if i not in gone] if gone else conversation
        messages.extend(conversation)
        specs = turn.tool_specs if iteration <= config.max_iterations else ()  # the wrap-up call offers no tools
        system_records = turn.system_prompt_injections
        markers = compute_cache_markers(system_records, injected, self.cache_policies) if config.caching == "on" else []
        if markers:
            turn.cache_markers = markers
        if config.context_budget is not None:
            breakdown = slot_breakdown(system_records, messages[: len(injected)], injected, conversation, specs)
            pressure = check_budget(config.context_budget, breakdown)
            if pressure:
                turn.budget_pressure = pressure
                for p in pressure if run.events.has_listeners(CONTEXT_BUDGET_PRESSURE) else ():
                    emit_context(
                        run, scope, CONTEXT_BUDGET_PRESSURE, ContextBudgetPressure(**p, iteration=iteration), iteration
                    )
        request = LLMRequest(
            system_prompt=turn.system_prompt,
            messages=[],
            tools=[ToolSpec.model_validate(thaw(s)) for s in specs],
            model=self.model_of(turn),
            seed=run.seed,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            thinking=ThinkingRequest(budget=config.thinking_budget) if config.thinking_budget else None,
            cache_markers=[
                m
                for m in markers
                if m.get("slot") == "system_prompt" or int(m.get("message_index", 1 << 30)) < len(injected)
            ],
        )
        # Every item is a ``Message`` built above or by ``messages_for``, in a list built here: validating them again
        # would only copy that list (an O(history) walk per call), so the request takes it as it is.
        request.messages = messages
        return request, messages

    async def call_llm(self, scope: Scope) -> None:
        from agentfootprint.agent._integrity_wire import WireMemo, wire_manifest
        from agentfootprint.agent._model_call import call_provider

        run = self.run_of(scope)
        turn = Turn(scope)
        iteration = turn.iteration
        request, messages = self._request(run, scope, turn)
        count = len(messages)  # counted before any hook sees the request
        names = [t.name for t in request.tools]
        model = self.model_of(turn)
        record: ModelCallRecord = {
            "iteration": iteration,
            "model": model,
            "seed": run.seed,
            "message_count": count,
            "tools": names,
        }
        turn.llm_call = record

        def llm_start() -> StreamLlmStart:
            if self.config.record_system_prompt:  # off by default: the prompt may carry what a log should not
                return StreamLlmStart(
                    model=model,
                    iteration=iteration,
                    message_count=count,
                    tools=names,
                    system_prompt_text=request.system_prompt,
                    messages=[m.model_dump(exclude_defaults=True) for m in request.messages],
                )
            return StreamLlmStart(model=model, iteration=iteration, message_count=count, tools=names)

        emit(run, scope, ev.STREAM_LLM_START, llm_start, iteration)

        async def innermost(req: LLMRequest) -> LLMResponse:
            if run.redactor.active and run.wire_key is None:  # under redaction: digests nobody can guess back
                run.wire_key = secrets.token_bytes(32)
            key = run.wire_key if run.redactor.active else None
            if run.wire_memo is None or run.wire_memo.key != key:
                run.wire_memo = WireMemo(key)
            manifest = wire_manifest(req, iteration, key, memo=run.wire_memo)  # kept: from the memo's last call
            turn.llm_call = {**record, "wire": manifest}  # what crosses, after every hook
            return await call_provider(run, scope, req, iteration)

        try:
            try:
                response = await run.model_chain(innermost, turn)(request)
            except RecursionError:
                raise ProviderResponseError(
                    "the model's response is nested too deeply to process", provider=self.config.provider.name
                ) from None
        except Exception as exc:
            attempts = [a.model_dump() for a in getattr(exc, "attempts", None) or () if hasattr(a, "model_dump")]
            if attempts:  # a retry that gave up: every attempt is evidence on the failed commit, as a success's is
                turn.failed_call = {"iteration": iteration, "code": getattr(exc, "code", None), "attempts": attempts}
            emit(
                run,
                scope,
                ev.ERROR_PROVIDER,
                lambda failed=exc: ErrorProvider(  # type: ignore[misc]
                    error_type=type(failed).__name__,
                    code=getattr(failed, "code", None),
                    message=str(failed)[:300],
                    attempts=attempts,
                ),
                iteration,
            )
            raise
        handler = self.config.thinking_handler
        if handler is not None:  # thinking is reasoning, never the answer, whatever the provider sent
            response = handler.normalize(response)
        self._take_response(run, scope, turn, response)

    def _take_response(self, run: AgentRun, scope: Scope, turn: Turn, response: LLMResponse) -> None:
        """Record the reply, its usage and cost (a crossed budget either halts the loop or warns once)."""
        iteration = turn.iteration
        calls = [_safe_call(c) for c in response.tool_calls]
        reply: ModelReply = {
            "content": response.content,
            "tool_calls": calls,
            "finish_reason": response.finish_reason,
            "model": response.model,
            "usage": response.usage.model_dump(),
            "attempts": [a.model_dump() for a in response.attempts],
        }
        if response.reasoning:
            reply["reasoning"] = [block.model_dump(exclude_none=True) for block in response.reasoning]
        turn.last_response = reply
        turn.pending_tool_calls = len(calls)
        total = turn.usage_total
        usage = Usage(**total) + response.usage
        turn.usage_total = cast(UsageTotal, usage.model_dump())
        cost = cost_of(self.config, response)
        if cost is not None:
            spent = float(turn.cost_total) + cost
            turn.cost_total = round(spent, 10)
            budget = self.config.cost_budget
            if budget is not None and spent > budget:
                if self.config.cost_action == "halt":
                    turn.budget_exceeded = True
                elif not run.budget_warned:
                    run.budget_warned = True
                    warning = lambda: CostBudgetWarning(spent=spent, budget=budget)  # noqa: E731
                    emit(run, scope, ev.COST_BUDGET_WARNING, warning, iteration)
        thought = [block.text for block in response.reasoning if block.text]
        extra: dict[str, Any] = {"reasoning": thought} if thought else {}  # only when there is some
        if response.model:  # the provider's own name for the model that answered, when it says
            extra["response_model"] = response.model
        if response.id:  # the vendor's id for this response, when it sends one
            extra["response_id"] = response.id
        emit(
            run,
            scope,
            ev.STREAM_LLM_END,
            lambda: StreamLlmEnd(
                content=response.content,
                tool_calls=calls,
                usage=response.usage.model_dump(),
                finish_reason=response.finish_reason,
                **extra,
            ),
            iteration,
        )
        emit(
            run,
            scope,
            ev.COST_USAGE,
            lambda: CostUsage(usage=response.usage.model_dump(), total=usage.model_dump(), cost=cost),
            iteration,
        )

    # -- route and final --------------------------------------------------------------------------------------
    def route(self, scope: Scope) -> PlannedDecision:
        decision = self.route_plan(scope)  # decide(scope, self.rules, "final"), planned once per chart
        run = self.run_of(scope)
        iteration = scope["iteration"]
        emit(
            run,
            scope,
            ev.AGENT_ROUTE_DECIDED,
            lambda: AgentRouteDecided(
                chosen=decision.branch,
                pending_tool_calls=scope["pending_tool_calls"],
                reason=next((r.label for r in decision.evidence.rules if r.matched), "no tool calls"),
            ),
            iteration,
        )
        return decision

    def wrap_up(self, scope: Scope) -> None:
        """The action budget ran out while the model still asked for tools: those calls never run; the turn asks
        once more, with the tools withheld, for a final answer (the next call is exempt from the cap)."""
        run = self.run_of(scope)
        turn = Turn(scope)
        iteration = turn.iteration
        pending = turn.pending_tool_calls
        turn.stopped_early = {
            "reason": "max-iterations",
            "iteration": iteration,
            "pending_tool_calls": pending,
            "answer_was_empty": not turn.last_response["content"],
            "wrapped_up": True,
        }
        ask: HistoryEntry = {"role": "user", "content": WRAP_UP_INSTRUCTION}
        turn.append(Turn.history, ask)
        self._exhausted(run, scope, "max-iterations", iteration, pending, "wrapped-up")
        emit(
            run, scope, ev.AGENT_ITERATION_END, lambda: AgentIterationEnd(iteration=iteration, tool_calls=0), iteration
        )

    def _exhausted(self, run: AgentRun, scope: Scope, reason: str, iteration: int, pending: int, action: str) -> None:
        def exhausted() -> AgentBudgetExhausted:
            if reason == "max-iterations":
                limit = self.config.max_iterations
                return AgentBudgetExhausted(
                    reason=reason, iteration=iteration, limit=limit, pending_tool_calls=pending, action=action
                )
            return AgentBudgetExhausted(reason=reason, iteration=iteration, pending_tool_calls=pending, action=action)

        emit(run, scope, ev.AGENT_BUDGET_EXHAUSTED, exhausted, iteration)

    async def final(self, scope: Scope) -> None:
        run = self.run_of(scope)
        turn = Turn(scope)
        response = turn.last_response
        iteration = turn.iteration
        pending = turn.pending_tool_calls
        answer = response["content"]
        run.answer_rewrites = []
        for ext in self.config.hooks.on_answer:
            before, answer = answer, await ext.on_answer(run.ctx(ext, turn), answer)
            if not isinstance(answer, str):
                raise TypeError(f"extension '{ext.name}' on_answer returned {type(answer).__name__}, not a str")
            if answer != before:
                run.answer_rewrites.append(ext.name)
        cut = turn.stopped_early
        stopped: dict[str, Any] | None = None
        if cut is not None and cut.get("wrapped_up"):  # the wrap-up's answer is the one handed back
            stopped = {**cut, "answer_was_empty": not answer}
        elif self.config.cost_budget is not None and turn.budget_exceeded:
            stopped = {"reason": "cost-budget", "iteration": iteration, "pending_tool_calls": pending}
        elif pending > 0:
            stopped = {"reason": "max-iterations", "iteration": iteration, "pending_tool_calls": pending}
        if stopped is not None and not stopped.get("wrapped_up"):
            stopped["answer_was_empty"] = not answer
            self._exhausted(run, scope, stopped["reason"], iteration, stopped["pending_tool_calls"], "cut-short")
        if stopped is not None and stopped["answer_was_empty"]:
            warn_empty_answer(run, stopped)
        turn.answer = answer
        scope["stopped_early"] = stopped
        run.last_completed_iteration = iteration
        if run.mounted:  # a composition member has no turn end of its own: write its turn to memory here
            await remember_turn(
                self.config.injections,
                identity=run.memory_identity,
                run_id=run.turn_id,
                user_message=turn.user_message,
                answer=answer,
                events=run.events,
            )
        emit(
            run, scope, ev.AGENT_ITERATION_END, lambda: AgentIterationEnd(iteration=iteration, tool_calls=0), iteration
        )


def warn_empty_answer(run: AgentRun, stopped: dict[str, Any]) -> None:
    """Once per run: a limit cut the turn and the answer is empty (a warning, and a line in the result)."""
    if run.empty_warned:
        return
    run.empty_warned = True
    line = empty_answer_line(stopped)
    run.warnings.append(line)
    warnings.warn_explicit(line, EmptyAnswerWarning, "agentfootprint/agent", 0, module="agentfootprint.agent")


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` (iterative: hostile input cannot blow the stack)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1) for v in item)
    return False


def _safe_call(call: Any) -> ToolCallRecord:
    """A model's tool call as plain data; arguments nested beyond reason become an arguments error, not a crash."""
    if _depth_exceeds(call.args, _MAX_ARGS_DEPTH):
        return {
            "id": call.id,
            "name": call.name,
            "args": {},
            "args_error": f"arguments are nested more than {_MAX_ARGS_DEPTH} levels deep",
        }
    data: ToolCallRecord = call.model_dump(exclude_none=True)
    return data


def cost_of(config: AgentConfig, response: LLMResponse) -> float | None:
    """The price of one model response by the agent's pricing table (None without a table or a price); prompt-cache
    reads and writes at their own rates (``cached_input``, ``cache_write``) where the table has them, else ``input``."""
    if not config.pricing:
        return None
    price = (
        config.pricing.get(response.model or config.model)
        or config.pricing.get(config.model)
        or config.pricing.get("*")
    )
    if price is None:
        return None
    usage, rate = response.usage, price.get("input", 0.0)
    cached, written = usage.cached_input_tokens, usage.cache_write_tokens
    fresh = max(usage.input_tokens - cached - written, 0)  # the cached parts are counted in input_tokens
    return (
        fresh * rate
        + cached * price.get("cached_input", rate)
        + written * price.get("cache_write", rate)
        + usage.output_tokens * price.get("output", 0.0)
    ) / 1000.0


__all__ = ["Catalog", "Stages", "cost_of", "emit", "emit_context", "read_skill_tool"]
