"""What every composition shares: one run opened at the outermost door, members mounted as subflows."""

from __future__ import annotations

import json
import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from agentfootprint._sync import run_sync
from agentfootprint.agent import (
    Agent,
    AgentPauseCheckpoint,
    ResumeIdentityConflictError,
    RunRecord,
    RunResult,
    StoppedEarly,
    UnknownSourceError,
    load_pause_checkpoint,
    normalize_run_input,
)
from agentfootprint.agent._invariants import checked_output as checked_output  # checks invariants at a mount
from agentfootprint.agent._viewer import bind_viewer, check_recorders, check_translator, replay_structure
from agentfootprint.compose._events import TeeEvents, composition_dispatcher
from agentfootprint.compose.member_run import (
    ParentRunRecord,
    ResumeRequestConflictError,
    close_parent_run,
    open_parent_run,
    open_run_for,
    resolve_parent_run,
)
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import AgentEvent, EventDispatcher, PayloadArg
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import CompositionEnter, CompositionExit
from agentfootprint.flow import (
    FlowChart,
    FlowResult,
    FlowSnapshot,
    InvalidCheckpointError,
    NarrativeEntry,
    Scope,
    SealKey,
    seal,
    seal_key,
    thaw,
)
from agentfootprint.flow import render_narrative as _render
from agentfootprint.flow.pause import PARALLEL_PAUSE
from agentfootprint.flow.redaction import RedactionPolicy
from agentfootprint.identity import Identity, coerce_identity

R = TypeVar("R")
C = TypeVar("C", bound="Composition")
_SLUG = re.compile(r"[^A-Za-z0-9_.:-]+")


class CompositionBuildError(AgentFootprintError, ValueError):
    """A composition that cannot run as configured (no members, no loop budget, bad names)."""

    code = "ERR_COMPOSITION_BUILD"


def member_id(name: str, index: int, taken: set[str]) -> str:
    """A stage id for a member mount from its display name (unique, without '/' or '#')."""
    base = _SLUG.sub("-", name).strip("-")[:60] or f"member-{index}"
    candidate = base
    n = 2
    while candidate in taken or candidate in ("seed", "final", "merge", "route", "check", "join"):
        candidate = f"{base}-{n}"
        n += 1
    taken.add(candidate)
    return candidate


def composition_key(key: str | bytes | None) -> SealKey | None:
    """A composition's ``checkpoint_key`` (a ``str`` means its UTF-8 bytes)."""
    try:
        return seal_key(key)
    except TypeError:
        raise CompositionBuildError("checkpoint_key must be a non-empty str or bytes") from None


def keyed(composition: C, key: SealKey | None) -> C:
    """``composition`` sealing its checkpoints with ``key`` (builders call this from ``build()``)."""
    composition.checkpoint_key = key
    return composition


def check_runner(runner: Any, where: str) -> Any:
    if not isinstance(runner, Agent | Composition):
        raise CompositionBuildError(f"{where} must be an Agent or a composition, got {type(runner).__name__}")
    return runner


def mount_input(message_of: Callable[[Scope], str]) -> Callable[[Scope], dict[str, Any]]:
    """Input map for a member mount: its message (tracked reads of the parent's state)."""

    def in_map(parent: Scope) -> dict[str, Any]:
        return {"member_message": message_of(parent)}

    return in_map


def mount_output(key: str) -> Callable[[Scope], dict[str, Any]]:
    """Output map for a member mount: its answer lands under ``key``."""

    def out_map(sub: Scope) -> dict[str, Any]:
        return {key: sub.get("answer", "")}

    return out_map


class CompositionRun:
    """A composition run's dependencies (the engine hands them to its stages and mounts as ``scope.deps``):
    the outermost run, and one member run per agent, made when the agent's mount is first entered."""

    def __init__(self, record: ParentRunRecord, seed: int | None, events: EventDispatcher) -> None:
        self.record = record
        self.seed = seed
        self.events = events
        self._members: dict[Agent, Any] = {}

    def member(self, agent: Agent) -> Any:
        """The run ``agent`` serves inside this composition run (its mount's deps)."""
        run = self._members.get(agent)
        if run is None:
            run = self._members[agent] = agent.member_run(
                run_id=self.record.run_id,
                identity=self.record.identity,
                session_id=self.record.session_id,
                seed=self.seed,
                events=TeeEvents(agent.events, self.events),
                request=self.record.request,
                link=self.record.link,
            )
        return run


def member_deps(runner: Any) -> Callable[[Any], Any] | None:
    """A member mount's deps: an agent gets its member run from the composition run; a nested composition
    shares the run it is mounted in."""
    if not isinstance(runner, Agent):
        return None

    def deps(parent: Any) -> Any:
        return parent.member(runner) if isinstance(parent, CompositionRun) else None

    return deps


def seed_stage(scope: Scope) -> None:
    """A composition's seed: the message it was given (by its caller, or by the mount that holds it)."""
    message = scope.get("member_message")
    if message is None:
        message = scope.args["message"]
    scope["input"] = message


class Composition(ABC):
    """Base of every composition: a chart whose members are mounted runners (or, in a Workflow/Graph, functions)."""

    kind = "Composition"
    checkpoint_key: SealKey | None = None
    """With a key (``X.create(..., checkpoint_key=...)``), every pause checkpoint the composition hands out is sealed
    and ``resume`` refuses one whose seal is missing or wrong (``InvalidCheckpointError``, ``field == "seal"``)."""

    def __init__(self, name: str, members: list[tuple[str, Any]]) -> None:
        if not members:
            raise CompositionBuildError(f"{self.kind} needs at least one member")
        self.name = name
        self.members = members
        self._events = composition_dispatcher()
        self._last_snapshot: FlowSnapshot | None = None
        self._last_run_input: dict[str, Any] | None = None
        self._pending: dict[str, Any] | None = None
        self.chart: FlowChart = self._build_chart()

    # -- subclasses -----------------------------------------------------------------------------------------
    @abstractmethod
    def _build_chart(self) -> FlowChart:
        """The composition's chart, with every member mounted."""

    @abstractmethod
    def _rebuilt(self, members: list[tuple[str, Any]]) -> Composition:
        """The same composition over other members (used by ``without``)."""

    # -- members --------------------------------------------------------------------------------------------
    def agents(self) -> Iterator[Agent]:
        """Every agent reachable in this composition (nested compositions included)."""
        for _, runner in self.members:
            if isinstance(runner, Agent):
                yield runner
            elif isinstance(runner, Composition):
                yield from runner.agents()

    def source_ids(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for agent in self.agents():
            out.update(agent.config.source_ids())
        return out

    def viewer(self, *, structure_recorders: Iterable[Any] = (), group_translator: Any = None) -> Composition:
        """R004-134 on a composition: the recorders hear every node of its chart now (a raising hook is collected in
        ``structure_build_errors(composition)``), and ``ui_group(composition)`` draws it with the translator, once."""
        try:
            recorders = check_recorders(structure_recorders)
            translator = None if group_translator is None else check_translator(group_translator)
        except ValueError as exc:
            raise CompositionBuildError(str(exc)) from None
        bind_viewer(self, translator, replay_structure(self.chart, recorders))
        return self

    def without(self, *source_ids: str) -> Composition:
        """The same composition with those sources removed from every member that has them."""
        known = self.source_ids()
        unknown = [s for s in source_ids if s not in known]
        if unknown:
            raise UnknownSourceError(f"no member has a context source or tool named: {', '.join(unknown)[:300]}")
        members = []
        for name, runner in self.members:
            if isinstance(runner, Agent):
                mine = [s for s in source_ids if s in runner.config.source_ids()]
            elif isinstance(runner, Composition):
                mine = [s for s in source_ids if s in runner.source_ids()]
            else:  # a plain function step has no context sources
                mine = []
            members.append((name, runner.without(*mine) if mine else runner))
        return keyed(self._rebuilt(members), self.checkpoint_key)

    def with_agents(self, swap: Callable[[Agent], Agent]) -> Composition:
        """The same composition with every agent (nested ones too) replaced by ``swap(agent)`` (a fork's seam)."""
        members = [
            (name, swap(r) if isinstance(r, Agent) else r.with_agents(swap) if isinstance(r, Composition) else r)
            for name, r in self.members
        ]
        return keyed(self._rebuilt(members), self.checkpoint_key)

    # -- events and record ----------------------------------------------------------------------------------
    def on(self, type_or_glob: str, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]:
        """Listen to composition events and every member agent's events during this composition's runs."""
        return self._events.on(type_or_glob, fn)

    def last_snapshot(self) -> FlowSnapshot | None:
        return self._last_snapshot

    def last_narrative(self) -> list[NarrativeEntry]:
        return _render(self._last_snapshot) if self._last_snapshot is not None else []

    def last_run_input(self) -> dict[str, Any] | None:
        return dict(self._last_run_input) if self._last_run_input is not None else None

    def _emit(self, event_type: str, payload: PayloadArg, run_id: str) -> None:
        if self._events.has_listeners(event_type):
            self._events.emit(event_type, payload, run_id=run_id)

    # -- running --------------------------------------------------------------------------------------------
    def _policy(self) -> RedactionPolicy:
        policy = RedactionPolicy()
        for agent in self.agents():
            policy = policy.union(agent.config.redaction)
        return policy

    async def run(
        self,
        input: Any,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        parent_run: str | None = None,
        seed: int | None = None,
        request: Any = None,
        checkpoint_key: str | bytes | None = None,
    ) -> RunResult:
        """One run of the whole pipeline; members serve this run's identity, run id and ``request`` (never their own).

        ``parent_run`` (or the input's ``parent_run`` key): a live link to an enclosing run, served instead;
        ``checkpoint_key``: seal a pause with this key instead of the composition's."""
        door = f"{self.kind}.run"
        key = composition_key(checkpoint_key) if checkpoint_key is not None else self.checkpoint_key
        run_input = normalize_run_input(input, door)
        ident = coerce_identity(identity if identity is not None else run_input.extra.get("identity"))
        link = parent_run if parent_run is not None else run_input.extra.get("parent_run")
        inherited = resolve_parent_run(link, door) if link is not None else None
        if inherited is not None:
            record = inherited
            owned = False
        else:
            record = open_parent_run(uuid.uuid4().hex, ident, session_id, request)
            owned = True
        given: dict[str, Any] = {
            "message": run_input.message,
            "history": [],
            "identity": record.identity,
            "session_id": session_id,
            "seed": seed,
        }
        self._last_run_input = given
        try:
            return await self._execute(
                record,
                seed,
                lambda deps: self.chart.run(
                    args={"message": run_input.message, "run_id": record.run_id},
                    redaction=self._policy(),
                    run_id=record.run_id,
                    deps=deps,
                ),
                key,
                given,
            )
        finally:
            if owned:
                close_parent_run(record)

    def run_sync(self, input: Any, **kwargs: Any) -> RunResult:
        return run_sync(self.run(input, **kwargs), f"await {self.kind.lower()}.run(...)")

    async def _execute(
        self,
        record: ParentRunRecord,
        seed: int | None,
        start: Callable[[CompositionRun], Awaitable[FlowResult]],
        key: SealKey | None = None,
        run_input: dict[str, Any] | None = None,
    ) -> RunResult:
        self._emit(ev.COMPOSITION_ENTER, lambda: CompositionEnter(composition=self.name, kind=self.kind), record.run_id)
        try:
            try:
                flow = await start(CompositionRun(record, seed, self._events))
            except BaseException as exc:
                snap = getattr(exc, "snapshot", None)
                if isinstance(snap, FlowSnapshot):
                    self._last_snapshot = snap
                if hasattr(exc, "_agentfootprint_raw_state"):
                    delattr(exc, "_agentfootprint_raw_state")
                raise
        finally:
            await self._events.drain(timeout=5)
        self._last_snapshot = flow.snapshot
        own = RunRecord(
            self, record.run_id, flow.snapshot, flow=flow, raw=flow.committed_state, run_input=run_input,
            identity=record.identity,
        )  # fmt: skip
        exited = lambda: CompositionExit(composition=self.name, paused=flow.paused)  # noqa: E731
        self._emit(ev.COMPOSITION_EXIT, exited, record.run_id)
        if flow.paused:
            data = flow.checkpoint["pause_data"] if flow.checkpoint else {}
            data = data if isinstance(data, Mapping) else {}
            cp = AgentPauseCheckpoint(
                run_id=record.run_id,
                question=str(data.get("question", "")),
                tool_call_id=str(data.get("tool_call_id", "")),
                tool_name=str(data.get("tool_name", "")),
                identity=record.identity.model_dump(exclude_none=True) if record.identity else None,
                session_id=record.session_id,
                flow=flow.checkpoint or {},
            ).to_json()
            cp = seal(json.loads(json.dumps(cp)), key if key is not None else self.checkpoint_key)
            self._pending = {"question": data.get("question"), "tool_call_id": data.get("tool_call_id")}
            questions = questions_of(flow.pause_data)
            first = questions if not isinstance(questions, dict) else _first_question(questions)
            return RunResult(
                status="paused",
                run_id=record.run_id,
                question=first,
                questions=questions if isinstance(questions, dict) else None,
                checkpoint=cp,
                session_id=record.session_id,
            ).with_record(own)
        self._pending = None
        raw = flow.raw_state()
        served = self._policy().keys or self._policy().patterns
        answer = flow.state.get("answer") if served else raw.get("answer")
        return RunResult(
            status="completed",
            run_id=record.run_id,
            answer=str(answer or ""),
            session_id=record.session_id,
            output=thaw((flow.state if served else raw).get("output")),
            stopped_early=self._stopped_early(raw),
        ).with_record(own)

    def _stopped_early(self, raw: Mapping[str, Any]) -> StoppedEarly | None:
        """A composition's own budget that ended the run early (a Graph's steps); None for the others."""
        return None

    async def resume(
        self,
        checkpoint: Mapping[str, Any],
        answer: Any = None,
        *,
        identity: Identity | Mapping[str, Any] | None = None,
        request: Any = None,
        checkpoint_key: str | bytes | None = None,
    ) -> RunResult:
        """Continue a composition paused inside a member (e.g. ``ask_human``); one checkpoint for the whole run.

        The resumed leg runs for the paused run's caller, read off the checkpoint: ``identity``, when given, must be
        that caller (another one is refused, so members are never re-namespaced under it). With a key (the
        composition's, or ``checkpoint_key`` here) the seal is checked first, before anything runs."""
        door = f"{self.kind}.resume"
        key = composition_key(checkpoint_key) if checkpoint_key is not None else self.checkpoint_key
        cp = load_pause_checkpoint(checkpoint, key=key, door=door)
        paused_for = coerce_identity(cp.identity)
        ident = coerce_identity(identity) if identity is not None else paused_for
        still_open = open_run_for(cp.run_id)
        if still_open is not None and still_open.identity != ident:
            raise ResumeRequestConflictError(door)
        if ident != paused_for:
            raise ResumeIdentityConflictError(door)
        try:
            json.dumps(answer)
        except (TypeError, ValueError):
            raise InvalidCheckpointError("answer must be JSON-serialisable", field="answer") from None
        composite = resume_payload(cp.flow.get("pause_data"), answer)
        record = open_parent_run(cp.run_id, ident, cp.session_id, request)
        try:
            return await self._execute(
                record,
                None,
                lambda deps: self.chart.resume(cp.flow, composite, redaction=self._policy(), deps=deps),
                key,
                self._last_run_input,
            )
        finally:
            close_parent_run(record)

    def resume_sync(self, checkpoint: Mapping[str, Any], answer: Any = None, **kwargs: Any) -> RunResult:
        return run_sync(self.resume(checkpoint, answer, **kwargs), f"await {self.kind.lower()}.resume(...)")

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name!r} members={[n for n, _ in self.members]}>"


def questions_of(pause_data: Any) -> Any:
    """A pause's question; for several pending branches, ``{branch id: question}`` (nested forks nest)."""
    if not isinstance(pause_data, Mapping):
        return None
    if pause_data.get("kind") == PARALLEL_PAUSE:
        return {str(b): questions_of(d) for b, d in (pause_data.get("pending") or {}).items()}
    question = pause_data.get("question")
    return str(question) if question is not None else None


def _first_question(questions: Mapping[str, Any]) -> str | None:
    for q in questions.values():
        found = _first_question(q) if isinstance(q, Mapping) else q
        if found is not None:
            return str(found)
    return None


def resume_payload(pause_data: Any, answer: Any) -> Any:
    """What the paused stage gets back: an agent's tool pause takes its composite form, any other pause the answer;
    several pending branches take ``{branch id: answer}``, each in its own branch's form."""
    if isinstance(pause_data, Mapping) and pause_data.get("kind") == PARALLEL_PAUSE and isinstance(answer, Mapping):
        pending = pause_data.get("pending") or {}
        return {b: resume_payload(pending.get(b) if isinstance(b, str) else None, a) for b, a in answer.items()}
    if isinstance(pause_data, Mapping) and "tool_call_id" in pause_data:
        return {
            "kind": pause_data.get("kind", "ask_human"),
            "answer": answer,
            "completed": pause_data.get("completed", []),
        }
    return answer
