"""The Agent runner: one recorded ReAct turn per ``run()``, explicit conversations, pause/resume, evidence."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from agentfootprint.agent.chart import build_agent_chart, read_skill_tool
from agentfootprint.agent.config import CURRENT_RUN, AgentConfig, RunContext
from agentfootprint.agent.errors import (
    AgentBuildError,
    InvalidConversationError,
    NoConversationError,
    OutputSchemaError,
    PendingQuestionError,
    RunInFlightError,
    UnknownSourceError,
    as_run_checkpoint_error,
)
from agentfootprint.agent.models import AgentPauseCheckpoint, ConversationCheckpoint, RunResult, StoppedEarly
from agentfootprint.agent.run_input import normalize_run_input
from agentfootprint.context import (
    ContextBudget,
    Injection,
    InvalidInjectionError,
    MemoryInjection,
    RagInjection,
    WindowPolicy,
    ensure_context_event_types,
    remember_turn,
)
from agentfootprint.errors import validation_field
from agentfootprint.events import AgentEvent, EventDispatcher
from agentfootprint.events import types as ev
from agentfootprint.flow import (
    FlowChart,
    FlowResult,
    FlowSnapshot,
    InvalidCheckpointError,
    NarrativeEntry,
    RedactionPolicy,
    Redactor,
    render_narrative,
)
from agentfootprint.flow.errors import RAW_STATE_ATTR
from agentfootprint.identity import Identity, coerce_identity
from agentfootprint.providers import Provider, Usage
from agentfootprint.tools import DuplicateToolError, PermissionChecker, Tool

if TYPE_CHECKING:
    from agentfootprint.agent import honesty as _honesty  # [honesty] evidence gate, assessment, check-in, chat

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
_MAX_ITERATIONS_CEILING = 1000


def _identity_dict(identity: Identity | None) -> dict[str, Any] | None:
    return identity.model_dump(exclude_none=True) if identity is not None else None


class AgentBuilder:
    """Collects an agent's configuration; ``build()`` validates it and compiles the chart."""

    def __init__(self, config: AgentConfig) -> None:
        self._config = config
        self._tools: list[Tool] = []
        self._injections: list[Injection] = []

    def system(self, text: str) -> AgentBuilder:
        """The base system prompt; context injections are appended after it."""
        if not isinstance(text, str):
            raise AgentBuildError(f"system prompt must be a str, got {type(text).__name__}")
        self._config = replace(self._config, system_prompt=text)
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
        """Keep these state keys / field names and regex matches off every recorded surface."""
        self._config = replace(
            self._config,
            redaction=self._config.redaction.union(RedactionPolicy.of(keys=list(keys), patterns=list(patterns))),
        )
        return self

    def output_schema(self, model: type[BaseModel], *, retries: int = 0) -> AgentBuilder:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise AgentBuildError("output_schema() takes a pydantic model class")
        self._config = replace(self._config, output_schema=model, output_retries=max(0, int(retries)))
        return self

    def pricing(self, table: Mapping[str, Mapping[str, float]]) -> AgentBuilder:
        """USD per 1,000 tokens by model: ``{"gpt-x": {"input": 0.5, "output": 1.5}}`` (``"*"`` for any)."""
        self._config = replace(self._config, pricing={k: dict(v) for k, v in table.items()})
        return self

    def cost_budget(self, amount: float, *, action: Literal["warn", "halt"] = "halt") -> AgentBuilder:
        if amount <= 0 or action not in ("warn", "halt"):
            raise AgentBuildError("cost_budget needs a positive amount and action 'warn' or 'halt'")
        self._config = replace(self._config, cost_budget=float(amount), cost_action=action)
        return self

    def permission(self, checker: PermissionChecker) -> AgentBuilder:
        """Called before every tool: ``allow`` / ``deny`` / ``halt`` (a raising checker denies)."""
        self._config = replace(self._config, permission=checker)
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

    def window(self, *, max_turns: int | None = None, max_chars: int | None = None) -> AgentBuilder:
        """Show the model only the last turns (whole oldest turns are dropped from view, never from history)."""
        try:
            policy = WindowPolicy(max_turns=max_turns, max_chars=max_chars)
        except InvalidInjectionError as exc:
            raise AgentBuildError(str(exc)) from None
        self._config = replace(self._config, window=policy)
        return self

    # -- [honesty] answer honesty (agent/evidence.py, agent/chat.py) -------------------------------------------
    def names_and_numbers_from_evidence(
        self, posture: Literal["assist", "guard", "rails"] = "assist", *, allow: Iterable[str] = ()
    ) -> AgentBuilder:
        """Check every name and number in the final answer against the run's evidence (assist / guard / rails)."""
        from agentfootprint.agent import honesty as _honesty

        self._config = _honesty.with_evidence_gate(self._config, posture, allow)
        return self

    def self_explain(self) -> AgentBuilder:
        """Give the model bounded trace tools over its previous run, so "why did you say X?" reads the record."""
        from agentfootprint.agent import honesty as _honesty

        self._config, tools = _honesty.with_self_explain(self._config)
        return self.tools(tools)

    # -- [/honesty] --------------------------------------------------------------------------------------------
    def build(self) -> Agent:
        config = replace(self._config, tools=tuple(self._tools), injections=tuple(self._injections))
        agent = Agent(config)
        ensure_context_event_types(agent.events)
        return agent


class Agent:
    """A ReAct agent whose every model call, tool call and piece of context is recorded evidence."""

    def __init__(self, config: AgentConfig) -> None:
        _validate(config)
        self.config = config
        self.name = config.name
        self.chart: FlowChart = build_agent_chart(config)
        self._events = EventDispatcher(redact=self._redact_payload)
        self._in_flight = False
        self._pending: dict[str, Any] | None = None
        self._abandoned: list[dict[str, Any]] = []
        self._last_flow: FlowResult | None = None
        self._last_raw: dict[str, Any] | None = None
        self._last_snapshot: FlowSnapshot | None = None
        self._last_conversation: dict[str, Any] | None = None
        self._last_identity: Identity | None = None
        self._last_events: list[AgentEvent] = []
        self._last_run_input: dict[str, Any] | None = None
        self._unsubscribe_keeper: Callable[[], None] | None = None
        if config.keep_events:
            self._unsubscribe_keeper = self._events.on("*", self._last_events.append)

    # -- construction ------------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        *,
        provider: Provider,
        model: str = "",
        max_iterations: int = 10,
        name: str = "agent",
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_result_chars: int = 100_000,
    ) -> AgentBuilder:
        """Start building an agent on ``provider``; ``max_iterations`` caps model calls per turn."""
        if not hasattr(provider, "complete"):
            raise AgentBuildError(f"provider must implement complete(request), got {type(provider).__name__}")
        if not isinstance(max_iterations, int) or not 1 <= max_iterations <= _MAX_ITERATIONS_CEILING:
            raise AgentBuildError(f"max_iterations must be an int in 1..{_MAX_ITERATIONS_CEILING}")
        return AgentBuilder(
            AgentConfig(
                provider=provider,
                model=model,
                name=name,
                max_iterations=max_iterations,
                temperature=temperature,
                max_tokens=max_tokens,
                max_result_chars=max_result_chars,
            )
        )

    def without(self, *source_ids: str) -> Agent:
        """The same agent rebuilt without these facts/steering/instructions/skills/tools (the ablation seam)."""
        known = self.config.source_ids()
        unknown = [s for s in source_ids if s not in known]
        if unknown:
            raise UnknownSourceError(f"agent has no context source or tool named: {', '.join(map(str, unknown))[:300]}")
        clone = Agent(self.config.without(set(source_ids)))
        return clone

    def with_tools(self, *tools: Tool) -> Agent:
        """The same agent with extra tools (e.g. a host's allow-listed frontend tools); listeners carry over."""
        clone = Agent(replace(self.config, tools=(*self.config.tools, *tools)))
        self._events.copy_listeners_to(clone._events)
        return clone

    def source_ids(self) -> dict[str, str]:
        """Every ablatable source id (facts, steering, instructions, skills, tools) → its kind."""
        return self.config.source_ids()

    def __repr__(self) -> str:
        return f"<Agent {self.name!r} model={self.config.model!r} tools={len(self.config.tools)}>"

    # -- events ------------------------------------------------------------------------------------------------
    def on(self, type_or_glob: str, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]:
        """Listen to ``agentfootprint.<domain>.<name>`` events (``"domain.*"`` or ``"*"``); returns unsubscribe."""
        return self._events.on(type_or_glob, fn)

    def _redact_payload(self, payload: dict[str, Any]) -> dict[str, Any]:
        rc = CURRENT_RUN.get()
        red = rc.redactor if rc is not None else Redactor(self.config.redaction)
        if not red.active:
            return payload
        red.observe("", payload)
        redacted: dict[str, Any] = red.redact(payload)
        return redacted

    @property
    def events(self) -> EventDispatcher:
        return self._events

    # -- the turn ----------------------------------------------------------------------------------------------
    def _guard(self) -> None:
        if self._in_flight:
            raise RunInFlightError(f"agent '{self.name}' is already running a turn; one instance runs one at a time")
        if self._pending is not None:
            raise PendingQuestionError(
                f"agent '{self.name}' paused to ask a person a question that has not been answered; "
                "answer it with resume(checkpoint, answer) or drop it with abandon_pause()",
                question=self._pending.get("question"),
                tool_call_id=self._pending.get("tool_call_id"),
            )

    async def run(
        self,
        input: Any,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        continue_from: Mapping[str, Any] | None = None,
        seed: int | None = None,
        redact: RedactionPolicy | None = None,
    ) -> RunResult:
        """Answer ONE turn; a new conversation unless ``continue_from`` names a stored one."""
        run_input = normalize_run_input(input, "Agent.run")
        ident = coerce_identity(identity if identity is not None else run_input.extra.get("identity"))
        prior: list[dict[str, Any]] = []
        if continue_from is not None:
            conv = load_conversation(continue_from)
            prior = conv.history
            if ident is None and conv.identity:
                ident = coerce_identity(conv.identity)
        if session_id is not None and (not isinstance(session_id, str) or len(session_id) > 200):
            raise InvalidConversationError("session_id must be a str of at most 200 characters", field="session_id")
        self._guard()
        self._in_flight = True
        try:
            return await self._turn(run_input.message, prior, ident, session_id, seed, redact)
        finally:
            self._in_flight = False

    def run_sync(self, input: Any, **kwargs: Any) -> RunResult:
        """Blocking twin of :meth:`run`."""
        return _blocking(self.run(input, **kwargs))

    async def follow_up(
        self,
        message: str,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        seed: int | None = None,
    ) -> RunResult:
        """Continue this agent's last completed conversation with ``message``."""
        self._guard()
        if self._last_conversation is None:
            raise NoConversationError(f"agent '{self.name}' has no completed conversation to follow up; call run()")
        ident = identity if identity is not None else self._last_identity
        return await self.run(
            message, identity=ident, session_id=session_id, continue_from=self._last_conversation, seed=seed
        )

    def follow_up_sync(self, message: str, **kwargs: Any) -> RunResult:
        return _blocking(self.follow_up(message, **kwargs))

    def _context(
        self,
        run_id: str,
        identity: Identity | None,
        session_id: str | None,
        redactor: Redactor,
        seed: int | None = None,
        original_input: str | None = None,
    ) -> RunContext:
        return RunContext(
            config=self.config,
            events=self._events,
            run_id=run_id,
            identity=identity,
            session_id=session_id,
            seed=seed,
            redactor=redactor,
            cancelled=asyncio.Event(),
            original_input=original_input,
        )

    async def _turn(
        self,
        message: str,
        prior: list[dict[str, Any]],
        identity: Identity | None,
        session_id: str | None,
        seed: int | None,
        redact: RedactionPolicy | None,
        *,
        replay: list[dict[str, Any]] | None = None,
    ) -> RunResult:
        """One turn: ``prior`` conversation plus ``message``; or, for ``replay``, a stored history as it stands."""
        run_id = uuid.uuid4().hex
        policy = self.config.redaction.union(redact)
        rc = self._context(run_id, identity, session_id, Redactor(policy), seed, message)
        args = {
            "message": message,
            "history": replay if replay is not None else prior,
            "history_complete": replay is not None,
            "run_id": run_id,
            "session_id": session_id,
            "identity": _identity_dict(identity),
        }
        self._last_run_input = {
            "message": message,
            "history": prior,
            "identity": identity,
            "session_id": session_id,
            "seed": seed,
        }
        return await self._execute(rc, policy, lambda: self.chart.run(args=args, redaction=policy, run_id=run_id))

    async def _execute(
        self, rc: RunContext, policy: RedactionPolicy, start: Callable[[], Coroutine[Any, Any, FlowResult]]
    ) -> RunResult:
        if self.config.keep_events:
            self._last_events.clear()
        token = CURRENT_RUN.set(rc)
        try:
            self._emit(
                rc,
                ev.AGENT_TURN_START,
                lambda: {"agent": self.name, "session_id": rc.session_id, "message": rc.original_input},
            )
            try:
                flow: FlowResult = await start()
            except BaseException as exc:
                if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                    raise
                raise self._crashed(rc, exc) from exc
            return self._finish(rc, flow)
        finally:
            await self._events.drain(timeout=5)
            CURRENT_RUN.reset(token)
            if self.config.keep_events and rc.redactor.active:
                self._rescrub_events(rc.redactor)

    def _rescrub_events(self, redactor: Redactor) -> None:
        """Kept events are redacted again with everything the run learned (a secret typed before it was known)."""
        for event in self._last_events:
            redactor.observe("", event.payload)
        self._last_events[:] = [e.model_copy(update={"payload": redactor.redact(e.payload)}) for e in self._last_events]

    def _emit(self, rc: RunContext, event_type: str, payload: Any) -> None:
        if self._events.has_listeners(event_type):
            self._events.emit(event_type, payload, run_id=rc.run_id)

    def _crashed(self, rc: RunContext, exc: BaseException) -> BaseException:
        raw = getattr(exc, RAW_STATE_ATTR, None)
        if raw is not None:
            delattr(exc, RAW_STATE_ATTR)
        snapshot = getattr(exc, "snapshot", None)
        if isinstance(snapshot, FlowSnapshot):
            self._last_snapshot = snapshot
            self._last_raw = raw
        self._emit(rc, ev.ERROR_RUN, lambda: {"error_type": type(exc).__name__, "code": getattr(exc, "code", None)})
        history = list((raw or {}).get("history") or [])
        checkpoint = ConversationCheckpoint(
            run_id=rc.run_id,
            history=history,
            identity=_identity_dict(rc.identity),
            last_completed_iteration=rc.last_completed_iteration,
            original_input=rc.original_input,
        ).model_dump(mode="json")
        return as_run_checkpoint_error(exc, checkpoint)

    def _finish(self, rc: RunContext, flow: FlowResult) -> RunResult:
        raw = flow.raw_state()
        self._last_flow = flow
        self._last_raw = raw
        self._last_snapshot = flow.snapshot
        from agentfootprint.agent import honesty as _honesty

        _honesty.after_run(self.config, rc, flow)  # [honesty] check-in pack, self-explain binding, rails refusal
        usage = Usage.model_validate(raw.get("usage_total") or {})
        cost = raw.get("cost_total")
        iterations = int(raw.get("iteration") or 0)
        if flow.paused:
            data = flow.checkpoint["pause_data"] if flow.checkpoint else {}
            cp = AgentPauseCheckpoint(
                run_id=flow.run_id,
                question=data["question"],
                tool_call_id=data["tool_call_id"],
                tool_name=data["tool_name"],
                identity=_identity_dict(rc.identity),
                session_id=rc.session_id,
                flow=flow.checkpoint or {},
            ).model_dump(mode="json")
            self._pending = {
                "question": data["question"],
                "tool_call_id": data["tool_call_id"],
                "tool_name": data["tool_name"],
            }
            self._last_conversation = None
            question = rc.redactor.redact(data["question"]) if rc.redactor.active else data["question"]
            self._emit(rc, ev.AGENT_TURN_END, lambda: {"status": "paused", "iterations": iterations})
            return RunResult(
                status="paused",
                run_id=flow.run_id,
                question=question,
                checkpoint=cp,
                session_id=rc.session_id,
                usage=usage,
                cost=cost,
                iterations=iterations,
            )
        self._pending = None
        answer = raw.get("answer") or ""
        history = list(raw.get("history") or [])
        self._last_conversation = ConversationCheckpoint(
            run_id=flow.run_id,
            history=[*history, {"role": "assistant", "content": answer}],
            identity=_identity_dict(rc.identity),
            last_completed_iteration=iterations,
            original_input=rc.original_input,
        ).model_dump(mode="json")
        self._last_identity = rc.identity
        remember_turn(  # context memory: write the completed turn under the run's identity namespace
            self.config.injections,
            identity=rc.identity,
            run_id=flow.run_id,
            user_message=str(raw.get("user_message") or ""),
            answer=answer,
            events=self._events,
        )
        stopped = raw.get("stopped_early")
        stopped_model = StoppedEarly.model_validate(stopped) if stopped else None
        served_answer = flow.state.get("answer") if isinstance(flow.state.get("answer"), str) else answer
        self._emit(
            rc,
            ev.AGENT_TURN_END,
            lambda: {"status": "completed", "answer": answer, "iterations": iterations, "usage": usage.model_dump()},
        )
        return RunResult(
            answer=answer if not rc.redactor.active else served_answer,
            status="completed",
            run_id=flow.run_id,
            session_id=rc.session_id,
            usage=usage,
            cost=cost,
            iterations=iterations,
            stopped_early=stopped_model,
        )

    # -- pause and resume --------------------------------------------------------------------------------------
    async def resume(
        self,
        checkpoint: Mapping[str, Any],
        answer: Any = None,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        redact: RedactionPolicy | None = None,
    ) -> RunResult:
        """Continue a paused turn: ``answer`` becomes the paused tool call's result (ask_human), or the
        consent decision (check-in). Works on any agent built the same way, in any process."""
        cp = load_pause_checkpoint(checkpoint)
        ident = coerce_identity(identity) if identity is not None else coerce_identity(cp.identity)
        if identity is not None and cp.identity and _identity_dict(ident) != cp.identity:
            raise InvalidCheckpointError("identity does not match the paused run's caller", field="identity")
        try:
            json.dumps(answer)
        except (TypeError, ValueError):
            raise InvalidCheckpointError(
                f"answer must be JSON-serialisable, got {type(answer).__name__}", field="answer"
            ) from None
        if self._in_flight:
            raise RunInFlightError(f"agent '{self.name}' is already running a turn")
        self._in_flight = True
        try:
            pause_data = cp.flow.get("pause_data") or {}
            composite = {
                "kind": pause_data.get("kind", "ask_human"),
                "answer": answer,
                "completed": pause_data.get("completed", []),
            }
            policy = self.config.redaction.union(redact)
            redactor = Redactor(policy)
            if redactor.active:  # learn the paused leg's secrets so the resumed leg's events stay clean
                for ns in (cp.flow.get("namespaces") or {}).values():
                    for key, value in (ns.get("state") or {}).items():
                        redactor.observe(key, value)
                redactor.observe("", pause_data)
            rc = self._context(cp.run_id, ident, session_id or cp.session_id, redactor)
            result = await self._execute(rc, policy, lambda: self.chart.resume(cp.flow, composite, redaction=policy))
            return result
        finally:
            self._in_flight = False

    def resume_sync(self, checkpoint: Mapping[str, Any], answer: Any = None, **kwargs: Any) -> RunResult:
        return _blocking(self.resume(checkpoint, answer, **kwargs))

    async def resume_on_error(
        self,
        checkpoint: Mapping[str, Any],
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> RunResult:
        """Replay a crashed turn from its last good conversation (tools may run again: make them idempotent)."""
        conv = load_conversation(checkpoint)
        history = list(conv.history)
        last_user = max((i for i, m in enumerate(history) if m.get("role") == "user"), default=None)
        if last_user is None:
            raise InvalidConversationError("checkpoint has no user turn to retry", field="history")
        message = str(history[last_user].get("content") or "")
        ident = coerce_identity(identity) if identity is not None else coerce_identity(conv.identity)
        self._guard()
        self._in_flight = True
        try:
            return await self._turn(message, history[:last_user], ident, session_id, None, None, replay=history)
        finally:
            self._in_flight = False

    def resume_on_error_sync(self, checkpoint: Mapping[str, Any], **kwargs: Any) -> RunResult:
        return _blocking(self.resume_on_error(checkpoint, **kwargs))

    def abandon_pause(self) -> dict[str, Any] | None:
        """Drop the pending question on the record; returns what was dropped (None if nothing was pending)."""
        dropped = self._pending
        self._pending = None
        if dropped is not None:
            self._abandoned.append(dict(dropped))
            if self._events.has_listeners(ev.PAUSE_RESUMED):
                self._events.emit(ev.PAUSE_RESUMED, {"kind": "abandoned", **dropped})
        return dict(dropped) if dropped is not None else None

    @property
    def abandoned_pauses(self) -> list[dict[str, Any]]:
        return [dict(d) for d in self._abandoned]

    # -- typed output ------------------------------------------------------------------------------------------
    async def run_typed(self, input: Any, *, retries: int | None = None, **kwargs: Any) -> Any:
        """Run and validate the answer (JSON) against ``output_schema``; errors name the failing paths."""
        schema = self.config.output_schema
        if schema is None:
            raise AgentBuildError(f"agent '{self.name}' has no output_schema; add .output_schema(Model)")
        budget = self.config.output_retries if retries is None else retries
        result = await self.run(input, **kwargs)
        while True:
            if result.status != "completed":
                raise OutputSchemaError(
                    "run paused before producing an answer; use run() for pausing agents", issues=[]
                )
            try:
                return _parse_output(schema, result.answer or "")
            except OutputSchemaError as err:
                if budget <= 0:
                    raise
                budget -= 1
                listed = "; ".join(f"{i['path']}: {i['problem']}" for i in err.issues)
                result = await self.follow_up(
                    f"Your answer did not match the required JSON schema ({listed}). Reply with JSON only."
                )

    def run_typed_sync(self, input: Any, **kwargs: Any) -> Any:
        return _blocking(self.run_typed(input, **kwargs))

    # -- the record --------------------------------------------------------------------------------------------
    def checkpoint(self) -> dict[str, Any] | None:
        """The last completed conversation as JSON (real values), for ``run(..., continue_from=...)``."""
        return json.loads(json.dumps(self._last_conversation)) if self._last_conversation is not None else None

    def stopped_early(self) -> StoppedEarly | None:
        """Why the last turn stopped short (``max-iterations`` / ``cost-budget``), or None."""
        raw = self._last_raw or {}
        stopped = raw.get("stopped_early")
        return StoppedEarly.model_validate(stopped) if stopped else None

    def last_snapshot(self) -> FlowSnapshot | None:
        """The last run's served (redacted) record: state, commit log, execution tree."""
        return self._last_snapshot

    def last_narrative(self) -> list[NarrativeEntry]:
        snap = self._last_snapshot
        return render_narrative(snap) if snap is not None else []

    def last_events(self) -> list[AgentEvent]:
        """Events of the last run (only with ``.keep_events()``), already redacted."""
        return list(self._last_events)

    def last_run_input(self) -> dict[str, Any] | None:
        """What the last run was given (message, prior history, identity, seed): the rerun seam for explain."""
        return dict(self._last_run_input) if self._last_run_input is not None else None

    def redaction_report(self) -> dict[str, Any]:
        """Which keys/patterns are redacted — names only, never values."""
        policy = self.config.redaction
        return {"keys": sorted(policy.keys), "patterns": list(policy.patterns)}

    # -- [honesty] answer honesty: evidence verdict, assessment, check-in pack, explanations -----------------------
    def unsupported_values(self) -> _honesty.UnsupportedValues | None:
        """The last answer's names/numbers found in no evidence (None when all were grounded or no gate ran)."""
        from agentfootprint.agent import honesty as _honesty

        return _honesty.unsupported_of(self._last_snapshot)

    async def assessment(self, *, output_schema: Any = None) -> _honesty.Assessment | None:
        """The last answer's standing folded from its committed record (None: no run, in flight, or refused)."""
        if self._in_flight:
            return None
        schema = output_schema if output_schema is not None else self.config.output_schema
        from agentfootprint.agent import honesty as _honesty

        return _honesty.assessment_of(self._last_snapshot, schema)

    def pending_check_in(self) -> _honesty.CheckInPack | None:
        """The evidence pack of the check-in this agent is paused on (will_do, read, drivers, trail), or None."""
        flow = self._last_flow
        if self._pending is None or flow is None or flow.checkpoint is None:
            return None
        from agentfootprint.agent import honesty as _honesty

        return _honesty.check_in_pack_of(flow.checkpoint)

    def can_explain(self) -> bool:
        """Whether a completed run is on record to answer "why did you say X?" from."""
        from agentfootprint.agent import honesty as _honesty

        return _honesty.can_explain(self.config, self._last_snapshot)

    def why(self, question: str | None = None) -> _honesty.Explanation:
        """Answer "why did you say X?" about the last answer from its recording only (no model call)."""
        from agentfootprint.agent import honesty as _honesty

        return _honesty.explain_answer(self, question)

    def chat(self) -> _honesty.RecordedChat:
        """A recorded chat on fresh agents built like this one (send, reason, why, rerun_turn, fork)."""
        config = self.config
        from agentfootprint.agent import honesty as _honesty

        return _honesty.recorded_chat(lambda: Agent(config))

    # -- [/honesty] ----------------------------------------------------------------------------------------------


def _parse_output(schema: type[BaseModel], text: str) -> Any:
    candidate = text.strip()
    if candidate.startswith("```"):
        candidate = candidate.strip("`")
        candidate = candidate[candidate.find("{") :] if "{" in candidate else candidate
    try:
        return schema.model_validate_json(candidate)
    except ValidationError as err:
        issues = [
            {
                "path": ".".join(str(p) for p in e.get("loc", ())) or "(root)",
                "problem": str(e.get("msg", "invalid"))[:200],
            }
            for e in err.errors()[:20]
        ]
        listed = "; ".join(f"{i['path']}: {i['problem']}" for i in issues)
        raise OutputSchemaError(f"answer does not match {schema.__name__}: {listed}", issues=issues) from None


def load_conversation(value: Any) -> ConversationCheckpoint:
    """Validate a stored conversation (untrusted JSON); errors name the field, never the value."""
    if not isinstance(value, Mapping):
        raise InvalidConversationError(f"conversation must be a dict, got {type(value).__name__}", field="checkpoint")
    try:
        conv = ConversationCheckpoint.model_validate(dict(value))
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None
    from agentfootprint.providers import Message

    for i, entry in enumerate(conv.history):
        try:
            Message.model_validate(entry)
        except ValidationError as err:
            field = f"history.{i}.{validation_field(err)}"
            raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None
    return conv


def load_pause_checkpoint(value: Any) -> AgentPauseCheckpoint:
    if not isinstance(value, Mapping):
        raise InvalidCheckpointError(f"checkpoint must be a dict, got {type(value).__name__}", field="checkpoint")
    try:
        return AgentPauseCheckpoint.model_validate(dict(value))
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidCheckpointError(f"checkpoint field '{field[:120]}' is invalid", field=field) from None


def _validate(config: AgentConfig) -> None:
    seen: dict[str, Tool] = {}
    builtin = read_skill_tool(config)
    all_tools: list[Tool] = [*config.tools, *(t for s in config.skills for t in s.tools)]
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


def _blocking(coro: Coroutine[Any, Any, R]) -> R:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise RuntimeError("a *_sync method was called inside a running event loop; await the async method instead")


__all__ = ["Agent", "AgentBuilder", "load_conversation", "load_pause_checkpoint"]
