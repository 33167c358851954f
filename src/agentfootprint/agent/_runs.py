"""One agent instance's runs: those in flight, the conversations and pauses they hold, the questions waiting for a
person, and the record of the latest leg that finished (what the agent's accessors view). Each leg runs here."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentfootprint.agent._finish import after_run, completed, crashed, paused, pending_of, tell_error
from agentfootprint.agent._legs import resumed_answer
from agentfootprint.agent._manifest import run_manifest
from agentfootprint.agent._observers import DeferredSink
from agentfootprint.agent._options import RunOptions
from agentfootprint.agent._output import check_output_strategy
from agentfootprint.agent._resume import PreparedResume
from agentfootprint.agent._roles import check_message_roles
from agentfootprint.agent._routes import Route, RunRoutes, release, rescrub
from agentfootprint.agent._run import AgentRun
from agentfootprint.agent._run_input import TurnInput
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import PendingQuestionError, RunInFlightError
from agentfootprint.agent.extension import InputRefusedError
from agentfootprint.agent.models import ConversationCheckpoint, RunResult
from agentfootprint.agent.record import EventLog, RunRecord
from agentfootprint.events import AgentEvent, EventSink
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import AgentRunConfigured, AgentTurnStart
from agentfootprint.flow import FlowResult, FlowSnapshot, Redactor
from agentfootprint.flow.errors import RAW_STATE_ATTR
from agentfootprint.identity import Identity

if TYPE_CHECKING:
    from agentfootprint.agent.agent import Agent


class AgentRuns:
    """What one agent instance is running and last ran; any number of runs at once, each with its own record."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.running: dict[str, AgentRun] = {}
        """The runs in flight, by run id, oldest first."""
        self.busy: set[str] = set()
        """Conversations and pauses a run is continuing now: a second turn of the same one is refused."""
        self.turns = 0
        self.pending: dict[str | None, dict[str, Any]] = {}
        """Unanswered questions by session (None: runs without one), the newest last."""
        self.abandoned: list[dict[str, Any]] = []
        self.latest: RunRecord | None = None
        """The record of the latest leg that finished (completed, paused or crashed)."""
        self.routes = RunRoutes(agent.events, self.config.keep_events, self._latest_events)
        self.redactor: Redactor | None = None
        """The latest run's redactor (with every secret it learned): the agent's dispatcher redacts with it."""
        self.observers: DeferredSink | None = None
        self.extension_state: dict[str, dict[str, Any]] = {}

    @property
    def config(self) -> AgentConfig:
        return self.agent.config

    def _latest_events(self) -> EventLog | None:
        return self.latest.events if self.latest is not None else None

    # -- who may run now ---------------------------------------------------------------------------------------
    def guard(self, session: str | None, key: str | None, *, latest: bool = False) -> None:
        """Refuse a second turn of a conversation (or pause) in flight, and a turn while its session's question is
        unanswered; ``latest`` (follow_up) continues the latest conversation, which any turn may change."""
        name = self.agent.name
        if (key is not None and key in self.busy) or (latest and self.turns):
            raise RunInFlightError(
                f"agent '{name}' is already running a turn of this conversation; a conversation runs one turn "
                "at a time (other conversations run side by side)"
            )
        pending = next(reversed(self.pending.values()), None) if latest else self.pending.get(session)
        if pending is not None:
            raise PendingQuestionError(
                f"agent '{name}' paused to ask a person a question that has not been answered; "
                "answer it with resume(checkpoint, answer) or drop it with abandon_pause()",
                question=pending.get("question"),
                tool_call_id=pending.get("tool_call_id"),
            )

    @contextmanager
    def claimed(self, key: str | None) -> Iterator[None]:
        """Hold ``key`` (a conversation or a pause) for one turn; released however the turn ends."""
        self.turns += 1
        if key is not None:
            self.busy.add(key)
        try:
            yield
        finally:
            self.turns -= 1
            if key is not None:
                self.busy.discard(key)

    # -- one leg -------------------------------------------------------------------------------------------------
    def context(
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
        """The context one leg's stages share; with deferred delivery its events are captured for later."""
        sink: EventSink = self.agent.events
        if self.config.observer_delivery == "deferred":  # captured now, delivered after the run returns
            self.observers = DeferredSink(self.agent.events, self.config.observer_queue)
            sink = self.observers
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
            agent_state=self.extension_state,
            continued=carried,
            resumed=resumed,
            turn_id=turn_id,
            meta={**options.meta(), "session_id": session} if session else options.meta(),
            signal=options.signal,
            request=request,
            link=link,
        )

    async def turn(
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
        """One turn: ``prior`` plus ``message``, or a ``replay``ed history as it stands; ``conversation``: the stored
        conversation continued, whose folded spans and window scale travel on."""
        run_id = run_id or uuid.uuid4().hex
        policy = self.config.redaction.union(options.redact)
        redactor = Redactor(policy)
        if redactor.active:  # learn the secrets a listener could see before the run writes them anywhere
            redactor.observe("", {"history": replay if replay is not None else prior, "input": learn or {}})
        run = self.context(run_id, identity, options, redactor, message, carried=carried, request=request, link=link)
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
        return await self.execute(
            run,
            options.on_event,
            lambda: self.agent.chart.run(
                args=args,
                redaction=policy,
                run_id=run_id,
                deps=run,
                cancel=run.signal,
                timeout=options.timeout,
                recording=self.config.recording,
            ),
        )

    async def resume(
        self, ready: PreparedResume, answer: Any, opts: RunOptions, passed: dict[str, Any] | None, request: Any
    ) -> RunResult:
        """The resumed leg of a paused turn: a new run (fresh run id) of the same turn, for the paused run's caller."""
        cp, flow = ready.checkpoint, ready.flow
        composite, redactor = resumed_answer(ready, answer)
        run_id = uuid.uuid4().hex
        run = self.context(
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
        prior = self.latest  # the paused turn's input, as this agent last recorded it
        run.run_input = prior.run_input if prior is not None else None
        origin = {"sealed": self.config.checkpoint_key is not None, "checkpoint_sha256": ready.digest}
        return await self.execute(
            run,
            opts.on_event,
            lambda: self.agent.chart.resume(
                flow,  # the checkpoint load_checkpoint validated for this chart: not validated again
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

    async def execute(
        self,
        run: AgentRun,
        listener: Callable[[AgentEvent], Any] | None,
        start: Callable[[], Coroutine[Any, Any, FlowResult]],
    ) -> RunResult:
        """Run one leg from its first event to its record, however it ends (the one place run and resume share)."""
        check_message_roles(self.config)  # refused before any paid call
        check_output_strategy(self.config)
        agent = self.agent
        log = self.routes.open(run, listener)
        self.redactor = run.redactor
        self.running[run.run_id] = run
        try:
            run.emit(
                ev.AGENT_TURN_START,
                lambda: AgentTurnStart(agent=agent.name, session_id=run.session_id, message=run.original_input),
            )
            run.emit(
                ev.AGENT_RUN_CONFIGURED, lambda: AgentRunConfigured(**run_manifest(self.config, agent.runner_name))
            )
            await run.each("before_run")
            try:
                flow: FlowResult = await start()
            except BaseException as exc:
                self.running.pop(run.run_id, None)
                if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                    raise
                await tell_error(run, exc)
                raise self.crashed(run, exc, log) from exc
            self.running.pop(run.run_id, None)
            return await self.finish(run, flow, log)
        finally:
            self.running.pop(run.run_id, None)
            run.release()
            if self.observers is not None and self.config.observer_delivery == "deferred":
                self.observers.flush_later()
            else:
                await agent.events.drain(timeout=5)
            if log is not None and log.keep and run.redactor.active:
                rescrub(log, run.redactor)
            if log is not None and log.held is not None:
                await release(log, run.redactor, agent.events)

    def recorded(self, run: AgentRun, log: Route | None, snapshot: FlowSnapshot | None, **fields: Any) -> RunRecord:
        """The leg's record; what it does not say (a crash's conversation, identity, answered ask) is the latest's."""
        prior = self.latest
        carried: dict[str, Any] = {
            "conversation": prior.conversation_text if prior is not None else None,
            "identity": prior.identity if prior is not None else None,
            "answered_ask": prior.answered_ask if prior is not None else None,
        }
        carried.update(fields)
        events = log if log is not None else EventLog()
        return RunRecord(self.agent, run.run_id, snapshot, events=events, run_input=run.run_input, **carried)

    def crashed(self, run: AgentRun, exc: BaseException, log: Route | None) -> BaseException:
        """Record the crashed leg (when it reached a stage, or refused its input); the error it raises."""
        raw = getattr(exc, RAW_STATE_ATTR, None)
        if raw is not None:
            delattr(exc, RAW_STATE_ATTR)
        snapshot = getattr(exc, "snapshot", None)
        refused = {"conversation": None} if isinstance(exc, InputRefusedError) else {}  # a refused input: none
        if isinstance(snapshot, FlowSnapshot):
            self.latest = self.recorded(run, log, snapshot, raw=raw, **refused)
        elif refused and self.latest is not None:
            prior = self.latest
            self.latest = self.recorded(run, log, prior.snapshot, raw=prior.committed_state(), **refused)
        return crashed(self.config, run, exc, raw)

    async def finish(self, run: AgentRun, flow: FlowResult, log: Route | None) -> RunResult:
        """Record the finished leg (the accessors view it from now on), then its after-run hooks and its result."""
        answered = run.answered_ask if not flow.paused else None
        record = self.recorded(run, log, flow.snapshot, flow=flow, raw=flow.committed_state, answered_ask=answered)
        self.latest = record
        run.final_flow = flow
        extensions = await after_run(self.config, run, flow)  # may refuse the answer by raising; the record stays
        self.pending.pop(run.session_id, None)  # answered, or re-set as the newest
        if not flow.paused:
            return await completed(self.config, run, flow, record, extensions)
        pending = self.pending[run.session_id] = pending_of(flow)
        return paused(self.config, run, flow, record, extensions, pending)
