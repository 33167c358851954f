"""How a leg ends, as a result: the extensions' after-run hooks, then the completed or paused ``RunResult`` (with
the conversation it leaves and its turn-end event), or the checkpointed error a crashed leg raises."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from agentfootprint.agent._answer import coverage_of
from agentfootprint.agent._conversation import conversation, conversation_text, identity_dict
from agentfootprint.agent._resume import run_redaction, stamp
from agentfootprint.agent._run import AgentRun
from agentfootprint.agent._seal import seal
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import RunDataError, as_run_checkpoint_error
from agentfootprint.agent.extension import RunOutcome
from agentfootprint.agent.models import AgentPauseCheckpoint, RunResult, StoppedEarly
from agentfootprint.agent.record import RunRecord
from agentfootprint.context.memory import remember_turn
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import AgentTurnEnd, ErrorRun
from agentfootprint.flow import FlowResult
from agentfootprint.providers import Usage


async def after_run(config: AgentConfig, run: AgentRun, flow: FlowResult) -> dict[str, Any]:
    """Every ``after_run`` hook (one may refuse the answer by raising), then what each adds to the result."""
    raw = flow.committed_state()  # read in place: what leaves here is scalars, models or fresh JSON
    outcome = RunOutcome(
        status="paused" if flow.paused else "completed",
        answer=None if flow.paused else str(raw.get("answer") or ""),
        flow=flow,
    )
    await run.each("after_run", outcome)
    extensions = {}
    for ext in config.hooks.result:
        value = ext.result(run.ctx(ext), outcome)
        if value is not None:
            extensions[ext.name] = value
    return extensions


async def completed(
    config: AgentConfig, run: AgentRun, flow: FlowResult, record: RunRecord, extensions: dict[str, Any]
) -> RunResult:
    """The completed leg's result; its record keeps the conversation with the answer appended."""
    raw = flow.committed_state()
    usage, cost, iterations = _spent(raw)
    answer = raw.get("answer") or ""
    history = list(raw.get("history") or [])
    record._conversation = conversation_text(
        config, run, [*history, {"role": "assistant", "content": answer}], iterations, raw
    )
    record.identity = run.identity
    await remember_turn(  # context memory: write the completed turn under the run's memory namespace
        config.injections,
        identity=run.memory_identity,
        run_id=run.turn_id,
        user_message=str(raw.get("user_message") or ""),
        answer=answer,
        events=run.events,
    )
    stopped = raw.get("stopped_early")
    stopped_model = StoppedEarly.model_validate(stopped) if stopped else None

    def turn_end() -> AgentTurnEnd:
        extra: dict[str, Any] = {}
        if stopped_model is not None:  # a limit ended the turn: say so where dashboards read the outcome
            extra["stopped_early"] = stopped_model.model_dump()
        limits = coverage_of(raw)
        if limits is not None:  # a typed answer's limits travel beside it
            extra["answer_coverage"] = limits.model_dump(mode="json")
        return AgentTurnEnd(status="completed", answer=answer, iterations=iterations, usage=usage.model_dump(), **extra)

    run.emit(ev.AGENT_TURN_END, turn_end)
    return RunResult(
        answer=answer if not run.redactor.active else _served(flow, answer),
        status="completed",
        run_id=flow.run_id,
        resumed_from=resumed_from(flow),
        session_id=run.session_id,
        usage=usage,
        cost=cost,
        iterations=iterations,
        stopped_early=stopped_model,
        extensions=extensions,
        warnings=list(run.warnings),
    ).with_record(record)


def _served(flow: FlowResult, answer: str) -> str:
    """The answer as the redacted state serves it."""
    served = flow.state.get("answer")
    return served if isinstance(served, str) else answer


def pending_of(flow: FlowResult) -> dict[str, Any]:
    """The question a paused leg waits on (``question``, ``tool_call_id``, ``tool_name``, ``request_id``)."""
    data = flow.checkpoint["pause_data"] if flow.checkpoint else {}
    keys = ("question", "tool_call_id", "tool_name")
    return {**{k: data[k] for k in keys}, "request_id": data.get("request_id")}


def paused(
    config: AgentConfig,
    run: AgentRun,
    flow: FlowResult,
    record: RunRecord,
    extensions: dict[str, Any],
    pending: dict[str, Any],
) -> RunResult:
    """The paused leg's result with its sealed pause checkpoint; its record keeps the conversation as of the pause."""
    usage, cost, iterations = _spent(flow.committed_state())
    cp = AgentPauseCheckpoint.model_construct(
        run_id=flow.run_id,
        question=pending["question"],
        tool_call_id=pending["tool_call_id"],
        tool_name=pending["tool_name"],
        identity=identity_dict(run.identity),
        session_id=run.session_id,
        flow=flow.checkpoint or {},
        contains_unredacted_values=True,
        request_id=pending["request_id"],
        redaction=run_redaction(run.redactor.policy),
        agent=stamp(config),
        seal=None,
    ).to_json()
    sealed = seal(json.loads(json.dumps(cp)), config.checkpoint_key)
    raw = flow.raw_state()  # the conversation as of the pause: no answer appended (a pause is unfinished)
    record._conversation = conversation_text(config, run, list(raw.get("history") or []), iterations, raw)
    record.identity = run.identity
    record.pending = dict(pending)
    question = run.redactor.redact(pending["question"]) if run.redactor.active else pending["question"]
    run.emit(ev.AGENT_TURN_END, lambda: AgentTurnEnd(status="paused", iterations=iterations))
    return RunResult(
        status="paused",
        run_id=flow.run_id,
        resumed_from=resumed_from(flow),
        question=question,
        request_id=pending["request_id"],
        checkpoint=sealed,
        session_id=run.session_id,
        usage=usage,
        cost=cost,
        iterations=iterations,
        extensions=extensions,
        warnings=list(run.warnings),
    ).with_record(record)


def crashed(config: AgentConfig, run: AgentRun, exc: BaseException, raw: Any) -> BaseException:
    """The error a crashed leg raises: typed (never pydantic's text), with the last good conversation to retry."""
    if isinstance(exc, ValidationError):  # never let pydantic's text (it quotes values) out of a door
        exc = RunDataError.from_validation(exc)
    run.emit(ev.ERROR_RUN, lambda: ErrorRun(error_type=type(exc).__name__, code=getattr(exc, "code", None)))
    history = list((raw or {}).get("history") or [])
    checkpoint = conversation(config, run, history, run.last_completed_iteration, raw)
    scrub = run.redactor.scrub_text if run.redactor.active else None
    return as_run_checkpoint_error(exc, checkpoint, scrub=scrub)


async def tell_error(run: AgentRun, exc: BaseException) -> None:
    """Every ``on_error`` hook hears of the failure; a hook that raises never masks the run's own error."""
    for ext in run.config.hooks.on_error:
        try:
            await ext.on_error(run.ctx(ext), exc)
        except Exception:
            continue


def resumed_from(flow: FlowResult) -> str | None:
    """The run id the engine resumed this leg from, or None."""
    origin = flow.snapshot.resumed_from
    run_id = origin.get("run_id") if origin else None
    return run_id if isinstance(run_id, str) else None


def _spent(raw: Any) -> tuple[Usage, Any, int]:
    """The leg's usage, cost and completed iterations, from its committed state."""
    return Usage.model_validate(raw.get("usage_total") or {}), raw.get("cost_total"), int(raw.get("iteration") or 0)
