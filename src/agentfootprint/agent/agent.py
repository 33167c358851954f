"""The Agent runner: one recorded ReAct turn per ``run()``, explicit conversations, pause/resume, the record."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, ClassVar, Literal, TypeVar, overload

from pydantic import BaseModel
from typing_extensions import Unpack

from agentfootprint._sync import run_sync
from agentfootprint.agent._answer import AnswerCoverage, AnswerNegatives, AnswerStanding, AnswerValidationReport
from agentfootprint.agent._checkpoints import load_conversation, load_pause_checkpoint
from agentfootprint.agent._conversation import conversation_key, read_kept
from agentfootprint.agent._create import agent_config, validate
from agentfootprint.agent._legs import link_parent, passed_time, retry_point
from agentfootprint.agent._limits import CostBudget
from agentfootprint.agent._observers import ObserverDrainResult
from agentfootprint.agent._options import RunOptionArgs, RunOptions, read_options
from agentfootprint.agent._output import OutputContractUnmet, parse_output
from agentfootprint.agent._resume import caller, prepare_resume, stored_conversation
from agentfootprint.agent._run import AgentRun
from agentfootprint.agent._run_input import normalize_run_input
from agentfootprint.agent._runs import AgentRuns
from agentfootprint.agent._stages import Catalog
from agentfootprint.agent._typed_run import output_schema, parse_output_async, run_typed
from agentfootprint.agent.builder import AgentBuilder
from agentfootprint.agent.chart import build_agent_chart
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.consent import DecisionLedger
from agentfootprint.agent.errors import AgentBuildError, NoConversationError, RunInFlightError, UnknownSourceError
from agentfootprint.agent.extension import AnswersFromRecord, ChecksAnswerValues, Extension, HoldsArtifactStore
from agentfootprint.agent.models import RunResult, StoppedEarly
from agentfootprint.agent.record import RunRecord, ablatable_ids_of, landed_parts_of
from agentfootprint.agent.voice import Voice
from agentfootprint.events import AgentEvent, EventDispatcher, EventSink
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import PauseResumed
from agentfootprint.flow import FlowChart, FlowResult, FlowSnapshot, NarrativeEntry, Redactor
from agentfootprint.identity import Identity
from agentfootprint.providers import Provider
from agentfootprint.tools import Tool

T = TypeVar("T", bound=BaseModel)
E = TypeVar("E", bound=Extension)


class Agent:
    """A ReAct agent whose every model call, tool call and piece of context is recorded evidence."""

    runner_name: ClassVar[str] = "Agent"
    """How this runner's doors name themselves in refusals (``Agent.run``, ``LLMCall.run``, ...)."""

    def __init__(self, config: AgentConfig) -> None:
        validate(config)
        self.config = config
        self._tools = Catalog(config).by_name
        self._events = EventDispatcher(redact=self._redact_payload)
        self.chart: FlowChart = build_agent_chart(config, self._events)
        self._runs = AgentRuns(self)
        """This instance's runs: in flight, held conversations and pauses, waiting questions, the latest record."""

    # -- construction ------------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        *,
        provider: Provider,
        model: str = "",
        max_iterations: int = 10,
        name: str = "agent",
        id: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_result_chars: int | None = None,
        max_tool_result_chars: int | None = None,
        cost_budget: float | Mapping[str, Any] | None = None,
        wrap_up_at_max_iterations: bool = True,
        repeated_call_nudge: bool = True,
        keep_last_tool_results: int | bool = 2,
        caching: Literal["on", "off"] = "on",
        record_system_prompt: bool = False,
        read_tracking: Literal["summary", "full"] = "summary",
        commit_values: Literal["delta", "full"] = "delta",
        write_provenance: Literal["off", "reads-prefix"] = "off",
        react_mode: Literal["dynamic", "classic", "dynamic-grouped"] = "dynamic",
        observer_delivery: Literal["inline", "deferred"] = "inline",
        observer_queue: int = 10_000,
        checkpoint_key: str | bytes | None = None,
        decision_ledger: DecisionLedger | None = None,
    ) -> AgentBuilder:
        """Start building an agent on ``provider``; ``max_iterations`` caps model calls per turn.

        ``caching="off"`` sends no prompt-cache markers at all (a global kill switch over every cache policy);
        ``record_system_prompt=True`` puts the assembled system prompt and the messages sent on every
        ``stream.llm_start`` event.
        Recording dials: ``read_tracking="full"`` keeps the value each read saw on its commit, ``commit_values="full"``
        records appends and merges as whole values, ``write_provenance="reads-prefix"`` names each write's prior reads.
        ``react_mode``: ``dynamic`` recomposes the context every iteration, ``classic`` composes it once per turn,
        ``dynamic-grouped`` recomposes it as one recorded step. ``observer_delivery="deferred"`` delivers events to
        listeners after the run returns, from a queue of ``observer_queue`` events (see ``drain_observers``).
        ``id`` names the agent for stored conversations (only a chosen id is stamped and checked);
        ``checkpoint_key`` seals every checkpoint it hands out and refuses any it takes back without that seal;
        ``decision_ledger`` is where answered consent requests are spent (default: this process's).

        Limits: ``max_tool_result_chars`` (alias ``max_result_chars``) cuts tool results only when set;
        ``cost_budget`` is a number of USD (crossing it warns) or ``{"usd": n, "on_exceed": "halt"}``;
        ``wrap_up_at_max_iterations`` (on) asks once more, tools withheld, when the budget runs out mid-task;
        ``repeated_call_nudge`` (on) tells the model when a call repeated an identical call and result;
        ``keep_last_tool_results`` (2) is how many tools' newest results a window keeps in view."""
        options = dict(locals())  # every keyword option, checked by name in agent/_create.py
        del options["cls"]
        return AgentBuilder(agent_config(options))

    @property
    def name(self) -> str:
        """The agent's display name."""
        return self.config.name

    @property
    def id(self) -> str:
        """The agent's id: the one chosen with ``Agent.create(id=...)``, else ``"agent"``."""
        return self.config.id if self.config.id is not None else "agent"

    def without(self, *source_ids: str) -> Agent:
        """The same agent rebuilt without these facts/steering/instructions/skills/tools (the ablation seam); also
        a retrieved chunk or memory entry by its id, and one tool result as ``tool#n`` (its n-th result)."""
        return self.without_landed(source_ids, landed_parts_of(self._last_raw))

    def without_landed(self, source_ids: Iterable[str], landed: Mapping[str, str]) -> Agent:
        """``without`` for a given run: ``landed`` are the chunk and memory ids that run landed (``RunRecord``)."""
        source_ids = tuple(source_ids)
        self.refuse_unknown(source_ids, landed)
        return Agent(self.config.without(set(source_ids)))

    def refuse_unknown(self, source_ids: Iterable[str], landed: Mapping[str, str]) -> None:
        """What ``without_landed`` refuses (``UnknownSourceError``), without building the agent it would return."""
        known, config = self.config.source_ids(), self.config
        unknown = [
            s
            for s in source_ids
            if s not in known and s not in landed and not config.knows_chunk(s) and not config.is_tool_result(s)
        ]
        if unknown:
            raise UnknownSourceError.for_ids(unknown, known)

    @property
    def _latest(self) -> RunRecord | None:
        """The record of the latest leg that finished (completed, paused or crashed): what the accessors view."""
        return self._runs.latest

    @property
    def _last_raw(self) -> Mapping[str, Any] | None:
        """The latest leg's final state with real values, read-only (for the runtime, never to serve)."""
        return self._latest.committed_state() if self._latest is not None else None

    def ablatable_ids(self) -> dict[str, str]:
        """Every id ``without()`` takes now → its kind: the sources, then what the latest run landed."""
        return ablatable_ids_of(self.config, self._last_raw)

    def with_tools(self, *tools: Tool) -> Agent:
        """The same agent with extra tools (e.g. a host's allow-listed frontend tools); listeners carry over."""
        clone = Agent(replace(self.config, tools=(*self.config.tools, *tools)))
        self._events.copy_listeners_to(clone._events, skip=self._runs.routes.route)  # its runs route their own events
        return clone

    def with_decision_ledger(self, ledger: DecisionLedger) -> Agent:
        """The same agent spending its consent decisions in ``ledger`` (e.g. a host's, kept with its threads)."""
        clone = Agent(replace(self.config, decision_ledger=ledger))
        self._events.copy_listeners_to(clone._events, skip=self._runs.routes.route)
        return clone

    def get_system_prompt_cache_policy(self) -> str:
        """The base system prompt's cache policy (``always`` unless ``.system(text, cache=...)`` said otherwise)."""
        return self.config.system_prompt_cache

    def source_ids(self) -> dict[str, str]:
        """Every ablatable source id (facts, steering, instructions, skills, tools) → its kind."""
        return self.config.source_ids()

    @overload
    def extension(self, name: str) -> Extension | None: ...

    @overload
    def extension(self, name: type[E]) -> E | None: ...

    def extension(self, name: str | type[E]) -> Extension | E | None:
        """The extension this agent uses under ``name`` (or the first of that class), or None."""
        if isinstance(name, str):
            return self.config.extension(name)
        return next((e for e in self.config.extensions if isinstance(e, name)), None)

    def __repr__(self) -> str:
        return f"<Agent {self.name!r} model={self.config.model!r} tools={len(self.config.tools)}>"

    # -- events ------------------------------------------------------------------------------------------------
    def on(self, type_or_glob: str, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]:
        """Listen to ``agentfootprint.<domain>.<name>`` events (``"domain.*"`` or ``"*"``); returns unsubscribe."""
        return self._events.on(type_or_glob, fn)

    def _redact_payload(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The dispatcher's own redaction: the latest run's redactor (every secret it learned), else the policy."""
        red = self._runs.redactor or Redactor(self.config.redaction)
        if not red.active:
            return payload
        red.observe("", payload)
        redacted: dict[str, Any] = red.redact(payload)
        return redacted

    @property
    def events(self) -> EventDispatcher:
        return self._events

    def _emit_now(self, event_type: str, payload: dict[str, Any]) -> None:
        if self._events.has_listeners(event_type):
            self._events.emit(event_type, payload, run_id=self._latest.run_id if self._latest else None)

    # -- the turn ----------------------------------------------------------------------------------------------
    async def run(
        self,
        input: Any,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        continue_from: Mapping[str, Any] | None = None,
        parent_run: str | None = None,
        request: Any = None,
        **options: Unpack[RunOptionArgs],
    ) -> RunResult:
        """Answer ONE turn; a new conversation unless ``continue_from`` names a stored one. ``parent_run``: a live
        link to a composition's run this turn serves; ``request``: what a host serves it for (``ctx.request``)."""
        door = f"{self.runner_name}.run"
        run_input = normalize_run_input(input, door)
        opts = read_options(door, options)
        given_time = run_input.extra.get("time")  # the input's time wins over the option
        passed = passed_time(self.config, door, given_time if given_time is not None else opts.time)
        given = run_input.extra.get("identity")
        ident = caller(given if given is not None else identity)  # the input's identity wins over the option
        link = parent_run if parent_run is not None else run_input.extra.get("parent_run")
        ident, run_id, request, opts = link_parent(link, door, ident, request, opts)
        conv = stored_conversation(self.config, continue_from, door) if continue_from is not None else None
        if ident is None and conv is not None and conv.identity:
            ident = caller(conv.identity)
        key = conversation_key(conv)
        self._runs.guard(opts.session_id, key)
        with self._runs.claimed(key):
            return await self._runs.turn(
                run_input.message,
                list(conv.history) if conv is not None else [],
                ident,
                opts,
                carried=dict(conv.extensions or {}) if conv is not None else {},
                learn=run_input.extra,
                run_id=run_id,
                request=request,
                link=link if run_id is not None else None,
                conversation=conv,
                time=passed,
            )

    def run_sync(self, input: Any, **kwargs: Any) -> RunResult:
        """Blocking twin of :meth:`run`."""
        return run_sync(self.run(input, **kwargs), "await agent.run(...)")

    async def follow_up(
        self,
        message: str,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        **options: Unpack[RunOptionArgs],
    ) -> RunResult:
        """Continue this agent's latest conversation with ``message`` (a new run: it takes the same options as
        ``run``, and is covered by the ``redact`` it is given); refused while any turn of this agent is in flight."""
        door = f"{self.runner_name}.follow_up"
        run_input = normalize_run_input(message, door)
        opts = read_options(door, options)
        passed = passed_time(self.config, door, opts.time)
        self._runs.guard(opts.session_id, None, latest=True)
        return await self._continue(self._latest, run_input.message, identity, opts, passed)

    async def _continue(
        self,
        record: RunRecord | None,
        message: str,
        identity: Identity | Mapping[str, Any] | None,
        opts: RunOptions,
        passed: dict[str, Any] | None = None,
    ) -> RunResult:
        """One more turn of the conversation ``record`` left (its own, in memory: not a door)."""
        text = record.conversation_text if record is not None else None
        if record is None or text is None:
            raise NoConversationError(f"agent '{self.name}' has no completed conversation to follow up; call run()")
        own = read_kept(text)
        ident = caller(identity) if identity is not None else record.identity
        key = conversation_key(own)
        self._runs.guard(opts.session_id, key)
        with self._runs.claimed(key):
            carried = dict(own.extensions or {})
            return await self._runs.turn(
                message, list(own.history), ident, opts, carried=carried, conversation=own, time=passed
            )

    def follow_up_sync(self, message: str, **kwargs: Any) -> RunResult:
        return run_sync(self.follow_up(message, **kwargs), "await agent.follow_up(...)")

    def member_run(
        self,
        *,
        run_id: str,
        identity: Identity | None,
        session_id: str | None,
        seed: int | None,
        events: EventSink,
        request: Any = None,
        link: str | None = None,
    ) -> AgentRun:
        """The run this agent serves when a composition mounts it: the composition's run id and caller, events to
        ``events`` (a composition tees them to its own listeners too). Handed to the mount as its deps."""
        return AgentRun(
            self.config,
            events,
            run_id,
            identity=identity,
            session_id=session_id,
            seed=seed,
            redactor=Redactor(self.config.redaction),
            mounted=True,
            agent_state=self._runs.extension_state,
            request=request,
            link=link,
            meta={"session_id": session_id} if session_id else None,
        )

    # -- pause and resume --------------------------------------------------------------------------------------
    async def resume(
        self,
        checkpoint: Mapping[str, Any],
        answer: Any = None,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        request: Any = None,
        **options: Unpack[RunOptionArgs],
    ) -> RunResult:
        """Continue a paused turn: ``answer`` becomes the paused tool call's result (ask_human), or the consent
        decision (check-in: ``check_in_approved(paused, by=...)``). Works on any agent built the same way, in any
        process. The resumed leg is a new run (fresh run id) of the same turn, for the paused run's caller."""
        door = f"{self.runner_name}.resume"
        opts = read_options(door, options)
        passed = passed_time(self.config, door, opts.time)
        ready = prepare_resume(self.config, self.chart, self._tools, checkpoint, answer, identity, opts.redact, door)
        key = f"pause:{ready.checkpoint.run_id}"
        if key in self._runs.busy:
            raise RunInFlightError(f"agent '{self.name}' is already resuming this pause")
        with self._runs.claimed(key):
            return await self._runs.resume(ready, answer, opts, passed, request)

    def resume_sync(self, checkpoint: Mapping[str, Any], answer: Any = None, **kwargs: Any) -> RunResult:
        return run_sync(self.resume(checkpoint, answer, **kwargs), "await agent.resume(...)")

    async def resume_on_error(
        self,
        checkpoint: Mapping[str, Any],
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        **options: Unpack[RunOptionArgs],
    ) -> RunResult:
        """Replay a crashed turn from its last good conversation (tools may run again: make them idempotent)."""
        door = f"{self.runner_name}.resume_on_error"
        opts = read_options(door, options)
        passed = passed_time(self.config, door, opts.time)
        conv = stored_conversation(self.config, checkpoint, door)
        message, prior, history = retry_point(conv)
        ident = caller(identity) if identity is not None else caller(conv.identity)
        key = conversation_key(conv)
        self._runs.guard(opts.session_id, key)
        with self._runs.claimed(key):
            carried = dict(conv.extensions or {})
            return await self._runs.turn(
                message, prior, ident, opts, replay=history, carried=carried, conversation=conv, time=passed
            )

    def resume_on_error_sync(self, checkpoint: Mapping[str, Any], **kwargs: Any) -> RunResult:
        return run_sync(self.resume_on_error(checkpoint, **kwargs), "await agent.resume_on_error(...)")

    def abandon_pause(self) -> dict[str, Any] | None:
        """Drop the pending question on the record; returns what was dropped (None if nothing was pending)."""
        dropped = self._runs.pending.pop(next(reversed(self._runs.pending)), None) if self._runs.pending else None
        if dropped is not None:
            self._runs.abandoned.append(dict(dropped))
            if self._events.has_listeners(ev.PAUSE_RESUMED):
                self._events.emit(ev.PAUSE_RESUMED, PauseResumed(kind="abandoned", **dropped))
        return dict(dropped) if dropped is not None else None

    @property
    def abandoned_pauses(self) -> list[dict[str, Any]]:
        return [dict(d) for d in self._runs.abandoned]

    def pending(self) -> dict[str, Any] | None:
        """The newest question this agent is paused on (``question``, ``tool_call_id``, ``tool_name``), or None."""
        newest = next(reversed(self._runs.pending.values()), None)
        return dict(newest) if newest is not None else None

    @property
    def in_flight(self) -> bool:
        """True while any turn is running on this instance."""
        return self._runs.turns > 0

    # -- typed output (agent/_typed_run.py) --------------------------------------------------------------------
    @overload
    async def run_typed(self, input: Any, *, schema: type[T], retries: int | None = None, **kwargs: Any) -> T: ...

    @overload
    async def run_typed(self, input: Any, *, retries: int | None = None, **kwargs: Any) -> BaseModel: ...

    async def run_typed(
        self, input: Any, *, schema: type[T] | None = None, retries: int | None = None, **kwargs: Any
    ) -> BaseModel:
        """Run and validate the answer (JSON) against ``output_schema`` (or ``schema``); errors name the paths.
        The loop already spent the schema's ``retries``; ``retries=`` here asks again with follow-ups. With
        ``.output_fallback()`` a failed answer falls through to the fallback, then the canned value."""
        return await run_typed(self, input, schema, retries, kwargs)

    def run_typed_sync(self, input: Any, **kwargs: Any) -> BaseModel:
        """Blocking twin of :meth:`run_typed`."""
        typed: BaseModel = run_sync(self.run_typed(input, **kwargs), "await agent.run_typed(...)")
        return typed

    def parse_output(self, raw: str) -> BaseModel:
        """``raw`` validated against the output schema (``OutputSchemaError`` with ``raw_output``; no fallback)."""
        return parse_output(output_schema(self, "Agent.parse_output"), raw)

    async def parse_output_async(self, raw: str) -> BaseModel:
        """``parse_output`` that, with ``.output_fallback()``, falls through to the fallback, then the canned value."""
        return await parse_output_async(self, raw)

    def parse_output_async_sync(self, raw: str) -> BaseModel:
        """Blocking twin of :meth:`parse_output_async`."""
        return run_sync(self.parse_output_async(raw), "await agent.parse_output_async(...)")

    def output_contract_unmet(self) -> OutputContractUnmet | None:
        """How the last run's final answer failed the output schema; None when it passed or there is no schema."""
        latest = self._latest if self.config.output_schema is not None else None
        return latest.output_contract_unmet() if latest is not None else None

    # -- views of the latest finished run (each reads its RunRecord; detached copies) ----------------------------
    def findings(self) -> list[dict[str, Any]] | None:
        """The last run's findings ledger (basis, standing, conflict, argument, period rows), or None."""
        return self._latest.findings() if self._latest is not None else None

    def answer_negatives(self) -> AnswerNegatives | None:
        """The last run's library-composed negative statements and their limits (``.negative_claims()``)."""
        return self._latest.answer_negatives() if self._latest is not None else None

    def answer_validation(self) -> AnswerValidationReport | None:
        """The last run's answer checks; None means no terminal validation ran (never an implicit pass)."""
        return self._latest.answer_validation() if self._latest is not None else None

    def answer_coverage(self) -> AnswerCoverage | None:
        """The limits of the last typed answer as data (``.limits_travel_with_the_answer()``), or None."""
        return self._latest.answer_coverage() if self._latest is not None else None

    def answer_standing(self) -> AnswerStanding | None:
        """The last answer's standing folded from its record (``.answer_layer()``), or None."""
        return self._latest.answer_standing() if self._latest is not None else None

    def claim_checks(self) -> list[dict[str, Any]] | None:
        """The last typed answer's ``.claims()`` checked against the facts tools settled, one row per claim."""
        return self._latest.claim_checks() if self._latest is not None else None

    def answer_script(self) -> dict[str, Any] | None:
        """The script that travelled with the last answer (``.script_travels_with_the_answer()``)."""
        return self._latest.answer_script() if self._latest is not None else None

    def checkpoint(self) -> dict[str, Any] | None:
        """The last conversation as JSON (real values; sealed with a key), for ``run(..., continue_from=...)``."""
        return self._latest.checkpoint() if self._latest is not None else None

    def answered_ask(self) -> dict[str, Any] | None:
        """The typed ask the last run's resume answered (``tool_name``, ``tool_call_id``, ``reasks``), or None."""
        latest = self._latest
        return dict(latest.answered_ask) if latest is not None and latest.answered_ask is not None else None

    def stopped_early(self) -> StoppedEarly | None:
        """Why the last turn stopped short (``max-iterations`` / ``cost-budget``), or None."""
        return self._latest.stopped_early() if self._latest is not None else None

    def last_snapshot(self) -> FlowSnapshot | None:
        """The served (redacted) record of the newest run in flight, partially filled (from a listener or a tool);
        else of the last run. None until a run has started."""
        live = next(reversed(self._runs.running.values()), None)
        if live is None:
            return self._latest.snapshot if self._latest is not None else None
        snap = live.scope.live_snapshot() if live.scope is not None else None
        chart = self.chart
        return (
            snap
            if snap is not None
            else FlowSnapshot(run_id=live.run_id, chart_id=chart.id, chart_name=chart.name, state={}, commit_log=[])
        )

    def last_flow(self) -> FlowResult | None:
        """The engine's result of the last leg that finished (completed or paused), or None."""
        return self._latest.flow if self._latest is not None else None

    def last_record(self) -> RunRecord | None:
        """The record of the latest leg that finished (completed, paused or crashed), or None."""
        return self._latest

    def last_narrative(self) -> list[NarrativeEntry]:
        return self._latest.narrative() if self._latest is not None else []

    def last_events(self) -> list[AgentEvent]:
        """Events of the last run (only with ``.keep_events()``), already redacted."""
        return self._latest.last_events() if self._latest is not None else []

    def last_run_input(self) -> dict[str, Any] | None:
        """What the last run was given (message, prior history, identity, seed): the rerun seam for explain."""
        return self._latest.last_run_input() if self._latest is not None else None

    # -- this agent's definition and instance --------------------------------------------------------------------
    async def drain_observers(self, *, timeout: float | None = 5.0) -> ObserverDrainResult:
        """Deliver the last run's deferred events and await async listeners, up to ``timeout`` seconds."""
        if self._runs.observers is None or self.config.observer_delivery != "deferred":
            return ObserverDrainResult()
        return await self._runs.observers.drain(timeout)

    def drain_observers_sync(self, *, timeout: float | None = 5.0) -> ObserverDrainResult:
        """Blocking twin of :meth:`drain_observers`."""
        return run_sync(self.drain_observers(timeout=timeout), "await agent.drain_observers()")

    def cost_budget(self) -> CostBudget | None:
        """The cost budget as normalized at build (a bare number is ``on_exceed="warn"``), or None."""
        usd = self.config.cost_budget
        return CostBudget(usd=usd, on_exceed=self.config.cost_action) if usd is not None else None

    def extension_state(self, name: str) -> dict[str, Any]:
        """The state extension ``name`` keeps on this agent instance (``RunContext.agent_state``), live."""
        return self._runs.extension_state.setdefault(name, {})

    @property
    def voice(self) -> Voice:
        """How viewers speak about this agent: ``app_name``, commentary and thinking templates."""
        return self.config.voice

    def commentary(self, events: Iterable[AgentEvent] | None = None) -> list[str]:
        """Third-person lines for ``events`` (default: the last run's, kept with ``.keep_events()``)."""
        return self.config.voice.narrate(self.last_events() if events is None else events)

    def redaction_report(self) -> dict[str, Any]:
        """Which keys/patterns are redacted — names only, never values."""
        policy = self.config.redaction
        return {"keys": sorted(policy.keys), "patterns": list(policy.patterns)}

    # -- answer honesty: doors onto the extensions that answer from the record (found by capability) --------------
    def _honesty(self) -> AnswersFromRecord | None:
        return next((e for e in self.config.extensions if isinstance(e, AnswersFromRecord)), None)

    def get_artifact_store(self) -> Any:
        """The artifact store this agent was built with (``.artifacts(store)``), or None."""
        holder = next((e for e in self.config.extensions if isinstance(e, HoldsArtifactStore)), None)
        return holder.get_store() if holder is not None else None

    def unsupported_values(self) -> Any:
        """The last answer's names/numbers found in no evidence (honesty's ``UnsupportedValues``), or None."""
        gate = next((e for e in self.config.extensions if isinstance(e, ChecksAnswerValues)), None)
        return gate.unsupported_values(self) if gate is not None else None

    async def assessment(self, *, output_schema: Any = None) -> Any:
        """The last answer's standing from its record (honesty's ``Assessment``; None: no run, in flight, refused)."""
        honesty = self._honesty()
        if self.in_flight or honesty is None:
            return None
        schema = output_schema if output_schema is not None else self.config.output_schema
        return honesty.assessment(self, schema)

    def pending_check_in(self) -> Any:
        """The evidence pack (honesty's ``CheckInPack``) of the check-in this agent is paused on, or None."""
        honesty = self._honesty()
        return honesty.pending_check_in(self) if honesty is not None else None

    def can_explain(self) -> bool:
        """Whether self-explain's "why" questions have a completed run to answer from (needs ``.self_explain()``)."""
        honesty = self._honesty()
        return honesty is not None and honesty.can_explain(self)

    def why(self, question: str | None = None) -> Any:
        """Answer "why did you say X?" from the last answer's recording only (honesty's ``Explanation``)."""
        return self._required("why").why(self, question)

    def chat(self) -> Any:
        """A recorded chat on fresh agents built like this one (honesty's ``RecordedChat``)."""
        return self._required("chat").chat(self)

    def _required(self, door: str) -> AnswersFromRecord:
        honesty = self._honesty()
        if honesty is None:
            raise AgentBuildError(f"{door}() needs the honesty extension, which this agent was built without")
        return honesty


__all__ = ["Agent", "AgentBuilder", "load_conversation", "load_pause_checkpoint"]
