"""A run's record as a value: what one finished leg left (snapshot, events, conversation, input), held by its result."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from agentfootprint.agent._answer import (
    AnswerCoverage,
    AnswerNegatives,
    AnswerStanding,
    AnswerValidationReport,
    claims_of,
    coverage_of,
    findings_of,
    negatives_of,
    script_of,
    standing_of,
    validation_of,
)
from agentfootprint.agent._output import OutputContractUnmet, unmet_of
from agentfootprint.agent.errors import NoRunRecordError
from agentfootprint.agent.models import RunResult, StoppedEarly
from agentfootprint.events import AgentEvent
from agentfootprint.flow import FlowResult, FlowSnapshot, NarrativeEntry, render_narrative, thaw
from agentfootprint.identity import Identity

if TYPE_CHECKING:
    from agentfootprint.agent.agent import Agent

__all__ = [
    "EventLog",
    "NoRunRecordError",
    "RunRecord",
    "Runner",
    "ablatable_ids_of",
    "bound",
    "landed_parts_of",
    "record_of",
]


class Runner(Protocol):
    """What made a record and can run again: an Agent or a composition."""

    @property
    def name(self) -> str: ...

    def source_ids(self) -> dict[str, str]: ...


class EventLog(list[AgentEvent]):
    """One run's kept events, in order (a list a dispatcher route can hold weakly)."""

    __slots__ = ("__weakref__",)


class RunRecord:
    """One leg's record (completed, paused or crashed): the served snapshot, the engine's result, its own events,
    the conversation it left and the input it was given. A value: later runs of the same agent never change it."""

    __slots__ = (
        "_conversation",
        "_raw",
        "answered_ask",
        "events",
        "flow",
        "identity",
        "pending",
        "run_id",
        "run_input",
        "runner",
        "snapshot",
    )

    def __init__(
        self,
        runner: Any,
        run_id: str,
        snapshot: FlowSnapshot | None,
        *,
        flow: FlowResult | None = None,
        raw: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
        events: EventLog | None = None,
        conversation: str | Callable[[], str] | None = None,
        run_input: Mapping[str, Any] | None = None,
        identity: Identity | None = None,
        answered_ask: Mapping[str, Any] | None = None,
        pending: Mapping[str, Any] | None = None,
    ) -> None:
        self.runner = runner
        """The Agent (or composition) whose run this is: what a rerun or an ablation rebuilds."""
        self.run_id = run_id
        self.snapshot = snapshot
        """The served (redacted) record of the leg; None only when it crashed before its first stage."""
        self.flow = flow
        """The engine's result (None for a crashed leg)."""
        self._raw = raw
        self.events: EventLog = events if events is not None else EventLog()
        """This run's own events (kept with ``.keep_events()``), redacted; never another run's."""
        self._conversation = conversation
        self.run_input: dict[str, Any] | None = dict(run_input) if run_input is not None else None
        self.identity = identity
        self.answered_ask = dict(answered_ask) if answered_ask is not None else None
        self.pending = dict(pending) if pending is not None else None
        """The question the leg paused on (``question``, ``tool_call_id``, ``tool_name``, ``request_id``), or None."""

    def __repr__(self) -> str:
        return f"<RunRecord {self.run_id!r} of {getattr(self.runner, 'name', '?')!r}>"

    # -- the record ----------------------------------------------------------------------------------------------
    def committed_state(self) -> Mapping[str, Any] | None:
        """The leg's final state with real values, read in place (for the runtime and accessors, never to serve)."""
        raw = self._raw
        return raw() if callable(raw) else raw

    def last_snapshot(self) -> FlowSnapshot | None:
        """This run's served snapshot (the name explain reads any record by)."""
        return self.snapshot

    def last_flow(self) -> FlowResult | None:
        return self.flow

    def last_events(self) -> list[AgentEvent]:
        return list(self.events)

    def last_run_input(self) -> dict[str, Any] | None:
        """What the run was given (message, prior history, identity, session, seed): the rerun seam for explain."""
        return dict(self.run_input) if self.run_input is not None else None

    def narrative(self) -> list[NarrativeEntry]:
        return render_narrative(self.snapshot) if self.snapshot is not None else []

    last_narrative = narrative

    @property
    def conversation_text(self) -> str | None:
        """The conversation the run left as JSON text (real values; sealed with a key), or None."""
        kept = self._conversation
        if callable(kept):  # written out on first read
            kept = self._conversation = kept()
        return kept

    def checkpoint(self) -> dict[str, Any] | None:
        """The conversation the run left, for ``run(..., continue_from=...)``; None when it left none."""
        text = self.conversation_text
        return json.loads(text) if text is not None else None

    @property
    def name(self) -> str:
        return str(getattr(self.runner, "name", "agent"))

    @property
    def config(self) -> Any:
        """The runner's definition (an Agent's ``AgentConfig``): what a rerun rebuilds from."""
        return getattr(self.runner, "config", None)

    # -- what the run landed, for ablation -------------------------------------------------------------------------
    def source_ids(self) -> dict[str, str]:
        ids: dict[str, str] = self.runner.source_ids()
        return ids

    def ablatable_ids(self) -> dict[str, str]:
        """Every id ``without()`` takes for this run → its kind (sources, landed chunks/entries, tool results)."""
        config = getattr(self.runner, "config", None)
        if config is None:
            return self.source_ids()
        return ablatable_ids_of(config, self.committed_state())

    def without(self, *source_ids: str) -> Any:
        """The runner rebuilt without these sources, as this run knows them (its landed chunks and results too)."""
        runner = self.runner
        rebuild = getattr(runner, "without_landed", None)
        if rebuild is not None:
            return rebuild(source_ids, landed_parts_of(self.committed_state()))
        return runner.without(*source_ids)

    def run(self, input: Any, **kwargs: Any) -> Any:
        """Run the runner again (explain's reruns): a new, separate run."""
        return self.runner.run(input, **kwargs)

    # -- what travelled with the answer (detached copies) --------------------------------------------------------
    def stopped_early(self) -> StoppedEarly | None:
        stopped = (self.committed_state() or {}).get("stopped_early")
        return StoppedEarly.model_validate(thaw(stopped)) if stopped else None

    def findings(self) -> list[dict[str, Any]] | None:
        return findings_of(self.committed_state())

    def answer_negatives(self) -> AnswerNegatives | None:
        return negatives_of(self.committed_state())

    def answer_validation(self) -> AnswerValidationReport | None:
        return validation_of(self.committed_state())

    def answer_coverage(self) -> AnswerCoverage | None:
        return coverage_of(self.committed_state())

    def answer_standing(self) -> AnswerStanding | None:
        return standing_of(self.committed_state())

    def claim_checks(self) -> list[dict[str, Any]] | None:
        return claims_of(self.committed_state())

    def answer_script(self) -> dict[str, Any] | None:
        return script_of(self.committed_state())

    def output_contract_unmet(self) -> OutputContractUnmet | None:
        return unmet_of(self.committed_state())


def landed_parts_of(state: Mapping[str, Any] | None) -> dict[str, str]:
    """Chunk ids (``rag``) and memory entry ids (``memory``) a run landed: ablatable one at a time."""
    records = [*((state or {}).get("system_prompt_injections") or ()), *((state or {}).get("message_injections") or ())]
    out: dict[str, str] = {}
    for r in records:
        for c in r.get("chunk_ids") or ():
            out.setdefault(str(c), "rag")
        for e in r.get("entry_ids") or ():
            out.setdefault(str(e), "memory")
    return out


def ablatable_ids_of(config: Any, state: Mapping[str, Any] | None) -> dict[str, str]:
    """The source ids, then what a run landed — chunks, memory entries and each tool result (``tool#n``)."""
    out = dict(config.source_ids())
    for sid, kind in landed_parts_of(state).items():
        out.setdefault(sid, kind)
    counts: dict[str, int] = {}
    for record in (state or {}).get("tool_results") or ():
        name = str(record.get("name"))
        counts[name] = counts.get(name, 0) + 1
        ref = f"{name}#{counts[name]}"
        if config.is_tool_result(ref):
            out.setdefault(ref, "tool")
    return out


def bound(record: RunRecord, agent: Agent | Any) -> RunRecord:
    """``record`` with ``agent`` as its runner (explain a run with a rebuilt or differently wired agent)."""
    if record.runner is agent or isinstance(agent, RunRecord):
        return record
    copy = RunRecord.__new__(RunRecord)
    for slot in RunRecord.__slots__:
        setattr(copy, slot, getattr(record, slot))
    copy.runner = agent
    return copy


def record_of(target: Any) -> Any:
    """A ``RunResult``'s record (what explain, audit and reports read of one run); any other target as it is."""
    if isinstance(target, RunResult):
        return target.recorded()
    return target
