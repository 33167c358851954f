"""The Agent runner: one recorded ReAct turn per ``run()``, explicit conversations, pause/resume, the record."""

from __future__ import annotations

import asyncio
import json
import uuid
import weakref
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, ClassVar, Literal, TypeVar, cast, overload

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError
from typing_extensions import Unpack

from agentfootprint._sync import run_sync
from agentfootprint.agent._answer import (
    AnswerCoverage,
    AnswerNegatives,
    AnswerStanding,
    AnswerValidationReport,
    coverage_of,
)
from agentfootprint.agent._checkpoints import load_conversation, load_pause_checkpoint
from agentfootprint.agent._clock import read_time
from agentfootprint.agent._limits import (
    CostBudget,
    read_cost_budget,
    read_keep_last,
    read_result_ceiling,
    read_switch,
)
from agentfootprint.agent._manifest import run_manifest
from agentfootprint.agent._observers import DeferredSink, ObserverDrainResult
from agentfootprint.agent._options import InvalidRunOptionError, RunOptionArgs, RunOptions, read_options
from agentfootprint.agent._output import (
    OutputContract,
    OutputContractUnmet,
    OutputFallback,
    check_output_strategy,
    parse_output,
    retries_spent_of,
    settle,
)
from agentfootprint.agent._resume import caller, prepare_resume, run_redaction, stamp, stored_conversation
from agentfootprint.agent._roles import check_message_roles
from agentfootprint.agent._run import AgentRun
from agentfootprint.agent._run_input import TurnInput, normalize_run_input
from agentfootprint.agent._seal import seal, seal_key
from agentfootprint.agent._stages import Catalog, read_skill_tool
from agentfootprint.agent.builder import AgentBuilder
from agentfootprint.agent.chart import build_agent_chart
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.consent import DecisionLedger
from agentfootprint.agent.errors import (
    AgentBuildError,
    InvalidConversationError,
    InvalidLimitError,
    NoConversationError,
    NoOutputSchemaError,
    OutputSchemaError,
    ParentRunRefusedError,
    PendingQuestionError,
    RunDataError,
    RunInFlightError,
    UnknownSourceError,
    as_run_checkpoint_error,
)
from agentfootprint.agent.extension import (
    AnswersFromRecord,
    ChecksAnswerValues,
    Extension,
    HoldsArtifactStore,
    InputRefusedError,
    RunOutcome,
)
from agentfootprint.agent.member_run import resolve_parent_run
from agentfootprint.agent.models import AgentPauseCheckpoint, ConversationCheckpoint, RunResult, StoppedEarly
from agentfootprint.agent.record import EventLog, RunRecord, ablatable_ids_of, landed_parts_of
from agentfootprint.agent.voice import Voice
from agentfootprint.context.memory import remember_turn
from agentfootprint.events import AgentEvent, EventDispatcher, EventSink
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import AgentRunConfigured, AgentTurnEnd, AgentTurnStart, ErrorRun, PauseResumed
from agentfootprint.flow import (
    FlowChart,
    FlowResult,
    FlowSnapshot,
    NarrativeEntry,
    Redactor,
)
from agentfootprint.flow._trusted import trusted
from agentfootprint.flow.errors import RAW_STATE_ATTR
from agentfootprint.flow.recording import RecordingDials
from agentfootprint.identity import Identity
from agentfootprint.providers import Provider, Usage
from agentfootprint.tools import DuplicateToolError, Tool

T = TypeVar("T", bound=BaseModel)
E = TypeVar("E", bound=Extension)
_MAX_ITERATIONS_CEILING = 1000
_conversation_checkpoint = trusted(ConversationCheckpoint)  # model_construct, planned once


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


def _identity_dict(identity: Identity | None) -> dict[str, Any] | None:
    return identity.model_dump(exclude_none=True) or None if identity is not None else None


def _resumed_from(flow: FlowResult) -> str | None:
    origin = flow.snapshot.resumed_from
    run_id = origin.get("run_id") if origin else None
    return run_id if isinstance(run_id, str) else None


class Agent:
    """A ReAct agent whose every model call, tool call and piece of context is recorded evidence."""

    runner_name: ClassVar[str] = "Agent"
    """How this runner's doors name themselves in refusals (``Agent.run``, ``LLMCall.run``, ...)."""

    def __init__(self, config: AgentConfig) -> None:
        _validate(config)
        self.config = config
        self._tools = Catalog(config).by_name
        self._events = EventDispatcher(redact=self._redact_payload)
        self.chart: FlowChart = build_agent_chart(config, self._events)
        self._running: dict[str, AgentRun] = {}
        """The runs in flight, by run id, oldest first: any number at once (each result keeps its own record)."""
        self._busy: set[str] = set()
        self._turns = 0
        """Conversations and pauses a run is continuing now: a second turn of the same one is refused."""
        self._pending: dict[str | None, dict[str, Any]] = {}
        """Unanswered questions by session (None: runs without one), the newest last."""
        self._abandoned: list[dict[str, Any]] = []
        self._latest: RunRecord | None = None
        """The record of the latest leg that finished (completed, paused or crashed): what the accessors view."""
        self._routes: weakref.WeakValueDictionary[str, _Route] = weakref.WeakValueDictionary()
        self._routing = False
        self._extension_state: dict[str, dict[str, Any]] = {}
        self._redactor: Redactor | None = None
        self._observers: DeferredSink | None = None
        if config.keep_events:
            self._route_events()

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
        ``record_system_prompt=True`` puts the assembled system prompt on every ``stream.llm_start`` event.
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
        if react_mode not in ("dynamic", "classic", "dynamic-grouped"):
            raise AgentBuildError("react_mode must be 'dynamic', 'classic' or 'dynamic-grouped'")
        if observer_delivery not in ("inline", "deferred"):
            raise AgentBuildError("observer_delivery must be 'inline' or 'deferred'")
        if isinstance(observer_queue, bool) or not isinstance(observer_queue, int) or not 1 <= observer_queue:
            raise AgentBuildError("observer_queue must be a positive int")
        if caching not in ("on", "off"):
            raise AgentBuildError("caching must be 'on' or 'off'")
        if not isinstance(record_system_prompt, bool):
            raise AgentBuildError("record_system_prompt must be True or False")
        dials = recording_dials(read_tracking, commit_values, write_provenance)
        if not hasattr(provider, "complete"):
            raise AgentBuildError(f"provider must implement complete(request), got {type(provider).__name__}")
        if not isinstance(max_iterations, int) or not 1 <= max_iterations <= _MAX_ITERATIONS_CEILING:
            raise AgentBuildError(f"max_iterations must be an int in 1..{_MAX_ITERATIONS_CEILING}")
        if id is not None and (not isinstance(id, str) or not id.strip() or len(id) > 200):
            raise AgentBuildError("id must be a non-empty str of at most 200 characters")
        try:
            key = seal_key(checkpoint_key)
        except TypeError:
            raise AgentBuildError("checkpoint_key must be a non-empty str or bytes") from None
        if decision_ledger is not None and not isinstance(decision_ledger, DecisionLedger):
            raise AgentBuildError("decision_ledger must have spend(request_id) -> bool and is_spent(request_id)")
        if max_result_chars is not None and max_tool_result_chars is not None:
            raise InvalidLimitError("max_tool_result_chars", "and max_result_chars are one option: give one of them")
        ceiling = read_result_ceiling(
            "max_tool_result_chars" if max_result_chars is None else "max_result_chars",
            max_tool_result_chars if max_result_chars is None else max_result_chars,
        )
        budget = read_cost_budget(cost_budget)
        return AgentBuilder(
            AgentConfig(
                provider=provider,
                model=model,
                name=name,
                id=id,
                max_iterations=max_iterations,
                temperature=temperature,
                max_tokens=max_tokens,
                max_result_chars=ceiling,
                cost_budget=budget.usd if budget is not None else None,
                cost_action=budget.on_exceed if budget is not None else "warn",
                wrap_up_at_max_iterations=read_switch("wrap_up_at_max_iterations", wrap_up_at_max_iterations),
                repeated_call_nudge=read_switch("repeated_call_nudge", repeated_call_nudge),
                keep_last_tool_results=read_keep_last(keep_last_tool_results),
                caching=caching,
                record_system_prompt=record_system_prompt,
                recording=dials,
                react_mode=react_mode,
                observer_delivery=observer_delivery,
                observer_queue=observer_queue,
                checkpoint_key=key,
                decision_ledger=decision_ledger,
            )
        )

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
        known = self.config.source_ids()
        unknown = [
            s
            for s in source_ids
            if s not in known
            and s not in landed
            and not self.config.knows_chunk(s)
            and not self.config.is_tool_result(s)
        ]
        if unknown:
            raise UnknownSourceError.for_ids(unknown, known)
        return Agent(self.config.without(set(source_ids)))

    @property
    def _last_raw(self) -> Mapping[str, Any] | None:
        """The latest leg's final state with real values, read-only (for the runtime, never to serve): an accessor
        copies only what it hands out."""
        return self._latest.committed_state() if self._latest is not None else None

    def ablatable_ids(self) -> dict[str, str]:
        """Every id ``without()`` takes now → its kind: the source ids, then what the latest run landed — retrieved
        chunks, recalled memory entries and each tool result (``tool#n``)."""
        return ablatable_ids_of(self.config, self._last_raw)

    def with_tools(self, *tools: Tool) -> Agent:
        """The same agent with extra tools (e.g. a host's allow-listed frontend tools); listeners carry over."""
        clone = Agent(replace(self.config, tools=(*self.config.tools, *tools)))
        self._events.copy_listeners_to(clone._events, skip=self._route_event)  # its runs route their own events
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
        """The dispatcher's own redaction: the latest run's redactor (with every secret it learned), else the
        agent's policy. A run's stages pass their run's redactor with each event."""
        red = self._redactor or Redactor(self.config.redaction)
        if not red.active:
            return payload
        red.observe("", payload)
        redacted: dict[str, Any] = red.redact(payload)
        return redacted

    @property
    def events(self) -> EventDispatcher:
        return self._events

    def _route_events(self) -> None:
        """Deliver each event to its own run's log and listener (``keep_events``, ``on_event``): installed once."""
        if not self._routing:
            self._routing = True
            self._events.on("*", self._route_event)

    def _route_event(self, event: AgentEvent) -> Any:
        run_id = event.meta.run_id
        route = self._routes.get(run_id) if run_id is not None else self._latest_route()
        if route is None:
            return None
        if route.keep:
            route.append(event)
        return route.listener(event) if route.listener is not None else None

    def _latest_route(self) -> _Route | None:
        """Where an event of no run goes (an abandoned pause): the latest run's own log."""
        latest = self._latest.events if self._latest is not None else None
        return latest if isinstance(latest, _Route) else None

    def _open_route(self, run: AgentRun, listener: Callable[[AgentEvent], Any] | None) -> _Route | None:
        """This run's own event log (and listener), routed by its run id and turn id; None when nothing keeps them."""
        if not self.config.keep_events and listener is None:
            return None
        route = _Route(self.config.keep_events, listener)
        self._routes[run.run_id] = route
        self._routes[run.turn_id] = route
        self._route_events()
        return route

    # -- the turn ----------------------------------------------------------------------------------------------
    def _guard(self, session: str | None, key: str | None, *, latest: bool = False) -> None:
        """Refuse a second turn of a conversation (or pause) already in flight, and a turn while its session's
        question is unanswered; ``latest`` (follow_up) continues the latest conversation, which any turn may change."""
        if (key is not None and key in self._busy) or (latest and self._turns):
            raise RunInFlightError(
                f"agent '{self.name}' is already running a turn of this conversation; a conversation runs one turn "
                "at a time (other conversations run side by side)"
            )
        pending = next(reversed(self._pending.values()), None) if latest else self._pending.get(session)
        if pending is not None:
            raise PendingQuestionError(
                f"agent '{self.name}' paused to ask a person a question that has not been answered; "
                "answer it with resume(checkpoint, answer) or drop it with abandon_pause()",
                question=pending.get("question"),
                tool_call_id=pending.get("tool_call_id"),
            )

    @contextmanager
    def _claimed(self, key: str | None) -> Iterator[None]:
        """Hold ``key`` (a conversation or a pause) for one turn; released however the turn ends."""
        self._turns += 1
        if key is not None:
            self._busy.add(key)
        try:
            yield
        finally:
            self._turns -= 1
            if key is not None:
                self._busy.discard(key)

    @property
    def _in_flight(self) -> bool:
        return self._turns > 0

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
        """Answer ONE turn; a new conversation unless ``continue_from`` names a stored one.

        ``correlation_id``, ``trace_id`` and ``session_id`` ride on every event's meta; ``signal`` (a
        ``CancelToken``) and ``timeout`` (seconds) abort the run; ``env`` is ``{signal, timeout_ms, trace_id}``.
        ``parent_run`` (or the input's ``parent_run`` key): a live link to a composition's run, which this turn then
        serves (its run id, caller and request); a link that is not live is refused before any model call.
        ``request``: what a host serves this turn for (tools see it as ``ctx.request``)."""
        door = f"{self.runner_name}.run"
        run_input = normalize_run_input(input, door)
        opts = read_options(door, options)
        given_time = run_input.extra.get("time")  # the input's time wins over the option
        passed = self._passed_time(door, given_time if given_time is not None else opts.time)
        given = run_input.extra.get("identity")
        ident = caller(given if given is not None else identity)  # the input's identity wins over the option
        link = parent_run if parent_run is not None else run_input.extra.get("parent_run")
        run_id: str | None = None
        if link is not None:
            record = resolve_parent_run(link, door)
            if ident is not None and ident != caller(record.identity):
                raise ParentRunRefusedError(door, "identity is not the linked run's caller")
            if request is not None and request is not record.request:
                raise ParentRunRefusedError(door, "request is not the one the linked run serves")
            ident, run_id, request = record.identity, record.run_id, record.request
            if opts.session_id is None and record.session_id is not None:
                opts = replace(opts, session_id=record.session_id)
        conv = stored_conversation(self.config, continue_from, door) if continue_from is not None else None
        if ident is None and conv is not None and conv.identity:
            ident = caller(conv.identity)
        key = _conversation_key(conv)
        self._guard(opts.session_id, key)
        with self._claimed(key):
            return await self._turn(
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
        passed = self._passed_time(door, opts.time)
        self._guard(opts.session_id, None, latest=True)
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
        conversation = json.loads(text)
        ident = caller(identity) if identity is not None else record.identity
        own = _conversation_checkpoint(
            **{k: v for k, v in conversation.items() if k in ConversationCheckpoint.model_fields}
        )
        key = _conversation_key(own)
        self._guard(opts.session_id, key)
        with self._claimed(key):
            return await self._turn(
                message,
                list(own.history),
                ident,
                opts,
                carried=dict(own.extensions or {}),
                conversation=own,
                time=passed,
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
            agent_state=self._extension_state,
            request=request,
            link=link,
            meta={"session_id": session_id} if session_id else None,
        )

    def _context(
        self,
        run_id: str,
        identity: Identity | None,
        options: RunOptions,
        redactor: Redactor,
        original_input: str | None = None,
        *,
        carried: dict[str, Any] | None = None,
        resumed: bool = False,
        turn_id: str | None = None,
        session_id: str | None = None,
        request: Any = None,
        link: str | None = None,
    ) -> AgentRun:
        sink: EventSink = self._events
        if self.config.observer_delivery == "deferred":  # captured now, delivered after the run returns
            self._observers = DeferredSink(self._events, self.config.observer_queue)
            sink = self._observers
        session = session_id if session_id is not None else options.session_id
        return AgentRun(
            self.config,
            sink,
            run_id,
            identity=identity,
            session_id=session,
            seed=options.seed,
            redactor=redactor,
            original_input=original_input,
            agent_state=self._extension_state,
            continued=carried,
            resumed=resumed,
            turn_id=turn_id,
            meta={**options.meta(), "session_id": session} if session else options.meta(),
            signal=options.signal,
            request=request,
            link=link,
        )

    async def _turn(
        self,
        message: str,
        prior: list[dict[str, Any]],
        identity: Identity | None,
        options: RunOptions,
        *,
        replay: list[dict[str, Any]] | None = None,
        carried: dict[str, Any] | None = None,
        learn: Any = None,
        run_id: str | None = None,
        request: Any = None,
        link: str | None = None,
        conversation: ConversationCheckpoint | None = None,
        time: dict[str, Any] | None = None,
    ) -> RunResult:
        """One turn: ``prior`` conversation plus ``message``; or, for ``replay``, a stored history as it stands.

        ``conversation``: the stored conversation continued, whose folded spans and window scale travel on."""
        run_id = run_id or uuid.uuid4().hex
        policy = self.config.redaction.union(options.redact)
        redactor = Redactor(policy)
        if redactor.active:  # learn the secrets a listener could see before the run writes them anywhere
            redactor.observe("", {"history": replay if replay is not None else prior, "input": learn or {}})
        run = self._context(run_id, identity, options, redactor, message, carried=carried, request=request, link=link)
        turn = TurnInput.for_turn(
            message,
            prior,
            run_id=run_id,
            session_id=run.session_id,
            identity=identity,
            seed=options.seed,
            replay=replay,
            time=time,
            conversation=conversation,
        )
        run.run_input = turn.run_input()
        args = turn.args()
        return await self._execute(
            run,
            options.on_event,
            lambda: self.chart.run(
                args=args,
                redaction=policy,
                run_id=run_id,
                deps=run,
                cancel=run.signal,
                timeout=options.timeout,
                recording=self.config.recording,
            ),
        )

    async def _execute(
        self,
        run: AgentRun,
        listener: Callable[[AgentEvent], Any] | None,
        start: Callable[[], Coroutine[Any, Any, FlowResult]],
    ) -> RunResult:
        check_message_roles(self.config)  # the one place run() and resume() share: refused before any paid call
        check_output_strategy(self.config)
        log = self._open_route(run, listener)
        self._redactor = run.redactor
        self._running[run.run_id] = run
        try:
            run.emit(
                ev.AGENT_TURN_START,
                lambda: AgentTurnStart(agent=self.name, session_id=run.session_id, message=run.original_input),
            )
            run.emit(ev.AGENT_RUN_CONFIGURED, lambda: AgentRunConfigured(**run_manifest(self.config, self.runner_name)))
            await run.each("before_run")
            try:
                flow: FlowResult = await start()
            except BaseException as exc:
                self._running.pop(run.run_id, None)
                if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                    raise
                await _tell_error(run, exc)
                raise self._crashed(run, exc, log) from exc
            self._running.pop(run.run_id, None)
            return await self._finish(run, flow, log)
        finally:
            self._running.pop(run.run_id, None)
            run.release()
            if self._observers is not None and self.config.observer_delivery == "deferred":
                self._observers.flush_later()
            else:
                await self._events.drain(timeout=5)
            if log is not None and log.keep and run.redactor.active:
                _rescrub(log, run.redactor)

    def _recorded(self, run: AgentRun, log: _Route | None, snapshot: FlowSnapshot | None, **fields: Any) -> RunRecord:
        """The leg's record; what it does not say (a crash's conversation, identity, answered ask) is the latest's."""
        prior = self._latest
        carried: dict[str, Any] = {
            "conversation": prior.conversation_text if prior is not None else None,
            "identity": prior.identity if prior is not None else None,
            "answered_ask": prior.answered_ask if prior is not None else None,
        }
        carried.update(fields)
        events = log if log is not None else EventLog()
        return RunRecord(self, run.run_id, snapshot, events=events, run_input=run.run_input, **carried)

    def _crashed(self, run: AgentRun, exc: BaseException, log: _Route | None) -> BaseException:
        raw = getattr(exc, RAW_STATE_ATTR, None)
        if raw is not None:
            delattr(exc, RAW_STATE_ATTR)
        snapshot = getattr(exc, "snapshot", None)
        refused = {"conversation": None} if isinstance(exc, InputRefusedError) else {}  # a refused input: none
        if isinstance(snapshot, FlowSnapshot):
            self._latest = self._recorded(run, log, snapshot, raw=raw, **refused)
        elif refused and self._latest is not None:
            prior = self._latest
            self._latest = self._recorded(run, log, prior.snapshot, raw=prior.committed_state(), **refused)
        if isinstance(exc, ValidationError):  # never let pydantic's text (it quotes values) out of a door
            exc = RunDataError.from_validation(exc)
        run.emit(ev.ERROR_RUN, lambda: ErrorRun(error_type=type(exc).__name__, code=getattr(exc, "code", None)))
        history = list((raw or {}).get("history") or [])
        checkpoint = self._conversation(run, history, run.last_completed_iteration, raw)
        scrub = run.redactor.scrub_text if run.redactor.active else None
        return as_run_checkpoint_error(exc, checkpoint, scrub=scrub)

    def _conversation(
        self, run: AgentRun, history: list[dict[str, Any]], iterations: int, raw: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """The conversation checkpoint (sealed with a key), with what each extension carries across turns and, from
        the run's own committed state, the folded spans behind its summaries (one reader for both carriers)."""
        conversation = self._conversation_model(run, history, iterations, raw).to_json()
        return seal(conversation, self.config.checkpoint_key)  # freshly built plain JSON: nothing shared

    def _conversation_text(
        self, run: AgentRun, history: list[dict[str, Any]], iterations: int, raw: Mapping[str, Any] | None
    ) -> str:
        """``json.dumps(self._conversation(...))`` up to spacing: the kept form of the last conversation."""
        model = self._conversation_model(run, history, iterations, raw)
        if self.config.checkpoint_key is None:
            try:
                return model.to_json_text()
            except PydanticSerializationError:
                pass  # text only Python's encoder writes (a lone surrogate), or a value to_json refuses as well
        return json.dumps(seal(model.to_json(), self.config.checkpoint_key))

    def _conversation_model(
        self, run: AgentRun, history: list[dict[str, Any]], iterations: int, raw: Mapping[str, Any] | None
    ) -> ConversationCheckpoint:
        carried = {}
        for ext in self.config.hooks.checkpoint:
            value = ext.checkpoint(run.ctx(ext))
            if value is not None:
                carried[ext.name] = json.loads(json.dumps(value))
        return _conversation_checkpoint(
            run_id=run.run_id,
            history=history,
            identity=_identity_dict(run.identity),
            last_completed_iteration=iterations,
            original_input=run.original_input,
            extensions=carried or None,
            folded=_thawed(raw, "folded_spans"),
            window_measure=_measure(raw),
            agent=stamp(self.config),
            seal=None,
        )

    async def _finish(self, run: AgentRun, flow: FlowResult, log: _Route | None) -> RunResult:
        raw = flow.committed_state()  # read in place: what leaves here is scalars, models or fresh JSON
        record = self._recorded(  # the accessors read the state in place: each copies only what it hands out
            run,
            log,
            flow.snapshot,
            flow=flow,
            raw=flow.committed_state,
            answered_ask=run.answered_ask if not flow.paused else None,
        )
        self._latest = record
        run.final_state = flow.state
        outcome = RunOutcome(
            status="paused" if flow.paused else "completed",
            answer=None if flow.paused else str(raw.get("answer") or ""),
            flow=flow,
        )
        await run.each("after_run", outcome)  # may refuse the answer by raising; the record above stays
        extensions = {}
        for ext in self.config.hooks.result:
            value = ext.result(run.ctx(ext), outcome)
            if value is not None:
                extensions[ext.name] = value
        usage = Usage.model_validate(raw.get("usage_total") or {})
        cost = raw.get("cost_total")
        iterations = int(raw.get("iteration") or 0)
        if flow.paused:
            return self._paused(run, flow, record, usage, cost, iterations, extensions)
        self._pending.pop(run.session_id, None)
        answer = raw.get("answer") or ""
        history = list(raw.get("history") or [])
        record._conversation = self._conversation_text(
            run, [*history, {"role": "assistant", "content": answer}], iterations, raw
        )
        record.identity = run.identity
        await remember_turn(  # context memory: write the completed turn under the run's memory namespace
            self.config.injections,
            identity=run.memory_identity,
            run_id=run.turn_id,
            user_message=str(raw.get("user_message") or ""),
            answer=answer,
            events=run.events,
        )
        stopped = raw.get("stopped_early")
        stopped_model = StoppedEarly.model_validate(stopped) if stopped else None
        served_answer = flow.state.get("answer") if isinstance(flow.state.get("answer"), str) else answer

        def turn_end() -> AgentTurnEnd:
            extra: dict[str, Any] = {}
            if stopped_model is not None:  # a limit ended the turn: say so where dashboards read the outcome
                extra["stopped_early"] = stopped_model.model_dump()
            limits = coverage_of(raw)
            if limits is not None:  # a typed answer's limits travel beside it
                extra["answer_coverage"] = limits.model_dump(mode="json")
            return AgentTurnEnd(
                status="completed", answer=answer, iterations=iterations, usage=usage.model_dump(), **extra
            )

        run.emit(ev.AGENT_TURN_END, turn_end)
        return RunResult(
            answer=answer if not run.redactor.active else served_answer,
            status="completed",
            run_id=flow.run_id,
            resumed_from=_resumed_from(flow),
            session_id=run.session_id,
            usage=usage,
            cost=cost,
            iterations=iterations,
            stopped_early=stopped_model,
            extensions=extensions,
            warnings=list(run.warnings),
        ).with_record(record)

    def _paused(
        self,
        run: AgentRun,
        flow: FlowResult,
        record: RunRecord,
        usage: Usage,
        cost: float | None,
        iterations: int,
        extensions: dict[str, Any],
    ) -> RunResult:
        data = flow.checkpoint["pause_data"] if flow.checkpoint else {}
        cp = AgentPauseCheckpoint.model_construct(
            run_id=flow.run_id,
            question=data["question"],
            tool_call_id=data["tool_call_id"],
            tool_name=data["tool_name"],
            identity=_identity_dict(run.identity),
            session_id=run.session_id,
            flow=flow.checkpoint or {},
            contains_unredacted_values=True,
            request_id=data.get("request_id"),
            redaction=run_redaction(run.redactor.policy),
            agent=stamp(self.config),
            seal=None,
        ).to_json()
        sealed = seal(json.loads(json.dumps(cp)), self.config.checkpoint_key)
        pending = {
            "question": data["question"],
            "tool_call_id": data["tool_call_id"],
            "tool_name": data["tool_name"],
            "request_id": data.get("request_id"),
        }
        self._pending.pop(run.session_id, None)  # re-set as the newest
        self._pending[run.session_id] = pending
        raw = flow.raw_state()  # the conversation as of the pause: no answer appended (a pause is unfinished)
        record._conversation = self._conversation_text(run, list(raw.get("history") or []), iterations, raw)
        record.identity = run.identity
        record.pending = dict(pending)
        question = run.redactor.redact(data["question"]) if run.redactor.active else data["question"]
        run.emit(ev.AGENT_TURN_END, lambda: AgentTurnEnd(status="paused", iterations=iterations))
        return RunResult(
            status="paused",
            run_id=flow.run_id,
            resumed_from=_resumed_from(flow),
            question=question,
            request_id=data.get("request_id"),
            checkpoint=sealed,
            session_id=run.session_id,
            usage=usage,
            cost=cost,
            iterations=iterations,
            extensions=extensions,
            warnings=list(run.warnings),
        ).with_record(record)

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
        passed = self._passed_time(door, opts.time)
        ready = prepare_resume(self.config, self.chart, self._tools, checkpoint, answer, identity, opts.redact, door)
        key = f"pause:{ready.checkpoint.run_id}"
        if key in self._busy:
            raise RunInFlightError(f"agent '{self.name}' is already resuming this pause")
        with self._claimed(key):
            cp, flow = ready.checkpoint, ready.flow
            pause_data = flow.pause_data if isinstance(flow.pause_data, dict) else {}
            composite = {
                "kind": ready.facts.kind,
                "answer": answer,
                "completed": pause_data.get("completed", []),
                "question": pause_data.get("question"),
                "repeat": pause_data.get("repeat"),
            }
            redactor = Redactor(ready.policy)
            if redactor.active:  # learn the paused leg's secrets so the resumed leg's events stay clean
                for ns in flow.namespaces.values():
                    for key, value in ns.state.items():
                        redactor.observe(key, value)
                redactor.observe("", pause_data)
            run_id = uuid.uuid4().hex
            run = self._context(
                run_id,
                ready.identity,
                opts,
                redactor,
                resumed=True,
                turn_id=ready.facts.turn_id,
                session_id=opts.session_id or cp.session_id,
                request=request,
            )
            run.resume_time = passed  # the paused turn keeps its clock: a differing one is only recorded
            prior = self._latest  # the paused turn's input, as this agent last recorded it
            run.run_input = prior.run_input if prior is not None else None
            origin = {"sealed": self.config.checkpoint_key is not None, "checkpoint_sha256": ready.digest}
            return await self._execute(
                run,
                opts.on_event,
                lambda: self.chart.resume(
                    flow.model_dump(mode="json"),
                    composite,
                    redaction=ready.policy,
                    deps=run,
                    run_id=run_id,
                    origin=origin,
                    cancel=run.signal,
                    timeout=opts.timeout,
                    recording=self.config.recording,
                ),
            )

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
        passed = self._passed_time(door, opts.time)
        conv = stored_conversation(self.config, checkpoint, door)
        history = list(conv.history)
        last_user = max((i for i, m in enumerate(history) if m.get("role") == "user"), default=None)
        if last_user is None:
            raise InvalidConversationError("checkpoint has no user turn to retry", field="history")
        message = str(history[last_user].get("content") or "")
        ident = caller(identity) if identity is not None else caller(conv.identity)
        key = _conversation_key(conv)
        self._guard(opts.session_id, key)
        with self._claimed(key):
            return await self._turn(
                message,
                history[:last_user],
                ident,
                opts,
                replay=history,
                carried=dict(conv.extensions or {}),
                conversation=conv,
                time=passed,
            )

    def resume_on_error_sync(self, checkpoint: Mapping[str, Any], **kwargs: Any) -> RunResult:
        return run_sync(self.resume_on_error(checkpoint, **kwargs), "await agent.resume_on_error(...)")

    def abandon_pause(self) -> dict[str, Any] | None:
        """Drop the pending question on the record; returns what was dropped (None if nothing was pending)."""
        dropped = self._pending.pop(next(reversed(self._pending)), None) if self._pending else None
        if dropped is not None:
            self._abandoned.append(dict(dropped))
            if self._events.has_listeners(ev.PAUSE_RESUMED):
                self._events.emit(ev.PAUSE_RESUMED, PauseResumed(kind="abandoned", **dropped))
        return dict(dropped) if dropped is not None else None

    @property
    def abandoned_pauses(self) -> list[dict[str, Any]]:
        return [dict(d) for d in self._abandoned]

    # -- typed output ------------------------------------------------------------------------------------------
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
        door = f"{self.runner_name}.run_typed"
        normalize_run_input(input, door)  # the run-input door first: nothing runs for an input that is no message
        model = cast("type[BaseModel] | None", schema or self.config.output_schema)
        if model is None:
            raise NoOutputSchemaError(door, self.name)
        budget = 0 if retries is None else retries
        result = await self.run(input, **kwargs)
        while True:
            if result.status != "completed":
                raise OutputSchemaError(
                    f"{door}: the run paused before producing an answer; use run() for pausing agents", issues=[]
                )
            try:
                return parse_output(model, result.answer or "")
            except OutputSchemaError as err:
                fallback = self._output_fallback()
                record = result.record
                if budget <= 0 and fallback is not None:
                    spent = retries_spent_of(record.committed_state() if record is not None else None)
                    return await settle(model, result.answer or "", err, fallback, self._emit_now, spent)
                if budget <= 0:
                    raise
                budget -= 1
                listed = "; ".join(f"{i['path']}: {i['problem']}" for i in err.issues)
                result = await self._continue(  # this run's own conversation, whatever else the agent runs
                    record,
                    f"Your answer did not match the required JSON schema ({listed}). Reply with JSON only.",
                    None,
                    read_options(door, {}),
                )

    def run_typed_sync(self, input: Any, **kwargs: Any) -> BaseModel:
        """Blocking twin of :meth:`run_typed`."""
        typed: BaseModel = run_sync(self.run_typed(input, **kwargs), "await agent.run_typed(...)")
        return typed

    def parse_output(self, raw: str) -> BaseModel:
        """``raw`` parsed and validated against the output schema; ``OutputSchemaError`` (with ``raw_output``) when
        it does not fit (the fallback is not consulted: see ``parse_output_async``); refused without a schema."""
        schema = cast("type[BaseModel] | None", self.config.output_schema)
        if schema is None:
            raise NoOutputSchemaError("Agent.parse_output", self.name)
        return parse_output(schema, raw)

    async def parse_output_async(self, raw: str) -> BaseModel:
        """``parse_output`` that, with ``.output_fallback()``, falls through to the fallback, then the canned value."""
        schema = cast("type[BaseModel] | None", self.config.output_schema)
        if schema is None:
            raise NoOutputSchemaError("Agent.parse_output_async", self.name)
        try:
            return parse_output(schema, raw)
        except OutputSchemaError as err:
            fallback = self._output_fallback()
            if fallback is None:
                raise
            last = (self._last_raw or {}).get("answer")
            spent = retries_spent_of(self._last_raw) if isinstance(raw, str) and raw == last else None
            return await settle(schema, raw if isinstance(raw, str) else "", err, fallback, self._emit_now, spent)

    def parse_output_async_sync(self, raw: str) -> BaseModel:
        """Blocking twin of :meth:`parse_output_async`."""
        typed: BaseModel = run_sync(self.parse_output_async(raw), "await agent.parse_output_async(...)")
        return typed

    def output_contract_unmet(self) -> OutputContractUnmet | None:
        """How the last run's final answer failed the output schema (stage, error, path, attempts, retries spent,
        ``broken_by``); None when it passed, on an agent without a schema, and before the first run."""
        latest = self._latest if self.config.output_schema is not None else None
        return latest.output_contract_unmet() if latest is not None else None

    # -- what travels with the answer (answer-contract options; detached copies of the last run's record) ---------
    def findings(self) -> list[dict[str, Any]] | None:
        """The last run's findings ledger (``basis`` / ``standing`` / ``conflict`` / ``argument`` / ``period`` rows,
        the last standing per ``tool_call_id`` current), detached; None when nothing filed a row."""
        return self._latest.findings() if self._latest is not None else None

    def answer_negatives(self) -> AnswerNegatives | None:
        """The library-composed negative statements of the last run and their recorded limits (``.negative_claims()``);
        detached, real values (the caller's own data; the record is redacted)."""
        return self._latest.answer_negatives() if self._latest is not None else None

    def answer_validation(self) -> AnswerValidationReport | None:
        """The last run's answer checks, detached; None means no terminal validation ran (never an implicit pass)."""
        return self._latest.answer_validation() if self._latest is not None else None

    def answer_coverage(self) -> AnswerCoverage | None:
        """The limits of the last TYPED answer as data (``.limits_travel_with_the_answer()`` with an output schema):
        checked, not checked, cannot cover, assumed values, periods; None on a prose answer (the block is in it)."""
        return self._latest.answer_coverage() if self._latest is not None else None

    def answer_standing(self) -> AnswerStanding | None:
        """The last answer's standing folded from its record (``.answer_layer()``), detached; None when not armed."""
        return self._latest.answer_standing() if self._latest is not None else None

    def claim_checks(self) -> list[dict[str, Any]] | None:
        """The last typed answer's ``.claims()`` checked against the facts tools settled: one row per claim
        (``checked-pass``, ``checked-fail`` with ``advisory``, ``unreachable``, ``not-applicable``), detached."""
        return self._latest.claim_checks() if self._latest is not None else None

    def answer_script(self) -> dict[str, Any] | None:
        """The script that travelled with the last answer (``.script_travels_with_the_answer()``), detached."""
        return self._latest.answer_script() if self._latest is not None else None

    def _output_fallback(self) -> OutputFallback | None:
        contract = self.config.extension(OutputContract.name)
        return contract.fallback if isinstance(contract, OutputContract) else None

    def _emit_now(self, event_type: str, payload: dict[str, Any]) -> None:
        if self._events.has_listeners(event_type):
            self._events.emit(event_type, payload, run_id=self._latest.run_id if self._latest else None)

    # -- the record --------------------------------------------------------------------------------------------
    def checkpoint(self) -> dict[str, Any] | None:
        """The last conversation as JSON (real values; sealed with a key), for ``run(..., continue_from=...)``.
        After a run that paused, the conversation as of the pause, with no answer appended."""
        return self._latest.checkpoint() if self._latest is not None else None

    async def drain_observers(self, *, timeout: float | None = 5.0) -> ObserverDrainResult:
        """Deliver the last run's deferred events and await async listeners, up to ``timeout`` seconds; reports
        what was delivered and what is still pending (zeros before the first run and with inline delivery)."""
        if self._observers is None or self.config.observer_delivery != "deferred":
            return ObserverDrainResult()
        return await self._observers.drain(timeout)

    def drain_observers_sync(self, *, timeout: float | None = 5.0) -> ObserverDrainResult:
        """Blocking twin of :meth:`drain_observers`."""
        return run_sync(self.drain_observers(timeout=timeout), "await agent.drain_observers()")

    def answered_ask(self) -> dict[str, Any] | None:
        """The typed ask the last run's resume answered (``tool_name``, ``tool_call_id``, ``reasks``: how many times
        it was asked again first), or None — set for that run only."""
        latest = self._latest
        return dict(latest.answered_ask) if latest is not None and latest.answered_ask is not None else None

    def _passed_time(self, door: str, value: Any) -> dict[str, Any] | None:
        """A door's ``time``, read — or refused: on an agent without ``.time()`` (a door that ignored it would look
        configured and do nothing), or malformed."""
        if value is None:
            return None
        if not self.config.time_enabled:
            raise InvalidRunOptionError(door, "time", "is read only by an agent built with .time()")
        return read_time(door, value)

    def cost_budget(self) -> CostBudget | None:
        """The cost budget as normalized at build (a bare number is ``on_exceed="warn"``), or None."""
        usd = self.config.cost_budget
        return CostBudget(usd=usd, on_exceed=self.config.cost_action) if usd is not None else None

    def stopped_early(self) -> StoppedEarly | None:
        """Why the last turn stopped short (``max-iterations`` / ``cost-budget``), or None."""
        return self._latest.stopped_early() if self._latest is not None else None

    def last_snapshot(self) -> FlowSnapshot | None:
        """The served (redacted) record of the run in flight, partially filled, when called mid-run (from a
        listener or a tool); else of the last run. None until a run has started."""
        live = next(reversed(self._running.values()), None)  # the newest run in flight
        if live is not None:
            snap = live.scope.live_snapshot() if live.scope is not None else None
            if snap is not None:
                return snap
            return FlowSnapshot(
                run_id=live.run_id, chart_id=self.chart.id, chart_name=self.chart.name, state={}, commit_log=[]
            )
        return self._latest.snapshot if self._latest is not None else None

    def last_flow(self) -> FlowResult | None:
        """The engine's result of the last leg that finished (completed or paused), or None."""
        return self._latest.flow if self._latest is not None else None

    def last_record(self) -> RunRecord | None:
        """The record of the latest leg that finished (completed, paused or crashed), or None."""
        return self._latest

    def pending(self) -> dict[str, Any] | None:
        """The newest question this agent is paused on (``question``, ``tool_call_id``, ``tool_name``), or None."""
        newest = next(reversed(self._pending.values()), None)
        return dict(newest) if newest is not None else None

    @property
    def in_flight(self) -> bool:
        """True while any turn is running on this instance."""
        return self._turns > 0

    def extension_state(self, name: str) -> dict[str, Any]:
        """The state extension ``name`` keeps on this agent instance (``RunContext.agent_state``), live."""
        return self._extension_state.setdefault(name, {})

    def last_narrative(self) -> list[NarrativeEntry]:
        return self._latest.narrative() if self._latest is not None else []

    @property
    def voice(self) -> Voice:
        """How viewers speak about this agent: ``app_name``, commentary and thinking templates."""
        return self.config.voice

    def commentary(self, events: Iterable[AgentEvent] | None = None) -> list[str]:
        """Third-person lines for ``events`` (default: the last run's, kept with ``.keep_events()``)."""
        return self.config.voice.narrate(self.last_events() if events is None else events)

    def last_events(self) -> list[AgentEvent]:
        """Events of the last run (only with ``.keep_events()``), already redacted."""
        return self._latest.last_events() if self._latest is not None else []

    def last_run_input(self) -> dict[str, Any] | None:
        """What the last run was given (message, prior history, identity, seed): the rerun seam for explain."""
        return self._latest.last_run_input() if self._latest is not None else None

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
        if self._in_flight or honesty is None:
            return None
        schema = output_schema if output_schema is not None else self.config.output_schema
        return honesty.assessment(self, schema)

    def pending_check_in(self) -> Any:
        """The evidence pack (honesty's ``CheckInPack``) of the check-in this agent is paused on, or None."""
        honesty = self._honesty()
        return honesty.pending_check_in(self) if honesty is not None else None

    def can_explain(self) -> bool:
        """Whether self-explain's "why" questions have a completed run to answer from: False for an agent built
        without ``.self_explain()``, and before its first completed turn."""
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


class _Route(EventLog):
    """One run's own events (when kept) and its own listener, reached by the agent's router."""

    __slots__ = ("keep", "listener")

    def __init__(self, keep: bool, listener: Callable[[AgentEvent], Any] | None) -> None:
        super().__init__()
        self.keep = keep
        self.listener = listener


def _rescrub(log: EventLog, redactor: Redactor) -> None:
    """Kept events are redacted again with everything the run learned (a secret typed before it was known)."""
    for event in log:
        redactor.observe("", event.payload)
    log[:] = [e.model_copy(update={"payload": redactor.redact(e.payload)}) for e in log]


def _conversation_key(conversation: ConversationCheckpoint | None) -> str | None:
    """The key a turn of a stored conversation holds while it runs (None: a new conversation, never contended)."""
    return f"conversation:{conversation.run_id}" if conversation is not None and conversation.run_id else None


async def _tell_error(run: AgentRun, exc: BaseException) -> None:
    """Every ``on_error`` hook hears of the failure; a hook that raises never masks the run's own error."""
    for ext in run.config.hooks.on_error:
        try:
            await ext.on_error(run.ctx(ext), exc)
        except Exception:
            continue


def _thawed(raw: Mapping[str, Any] | None, key: str) -> list[dict[str, Any]] | None:
    """A list from the run's committed state as plain JSON (None when absent or empty)."""
    value = (raw or {}).get(key)
    return json.loads(json.dumps(value)) if value else None


def _measure(raw: Mapping[str, Any] | None) -> dict[str, int] | None:
    """The last request's provider token count and characters, when a counted window measured it."""
    chars = int((raw or {}).get("window_chars") or 0)
    tokens = int(((raw or {}).get("last_response") or {}).get("usage", {}).get("input_tokens") or 0)
    if chars and tokens:
        return {"input_tokens": tokens, "chars": chars}
    carried = (raw or {}).get("window_measure")
    return dict(carried) if carried else None


def _validate(config: AgentConfig) -> None:
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


__all__ = ["Agent", "AgentBuilder", "load_conversation", "load_pause_checkpoint"]
