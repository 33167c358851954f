"""The tool-calls stage: run every call the model asked for, in order, through the extensions' tool chain.

A call that needs a person (``ask_human``, a check-in) pauses the run; on resume the calls already done are
replayed from the pause data, the paused one gets its answer, and the rest run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, cast

from agentfootprint.agent._clock import differs
from agentfootprint.agent._repeated import REPEATED_CALL_THRESHOLD, repeated_note
from agentfootprint.agent._run import AgentRun, ToolHookError
from agentfootprint.agent._run_input import describe_received
from agentfootprint.agent._stages import Catalog, emit
from agentfootprint.agent._typed_ask import read_repeat, read_typed_answer
from agentfootprint.agent.config import READ_SKILL, AgentConfig
from agentfootprint.agent.consent import ConsentDecision, consent_request_id, read_decision
from agentfootprint.agent.errors import DecisionRequiredError, PolicyHaltError, ResumeDecisionError
from agentfootprint.agent.extension import CallTool, ToolCallRequest
from agentfootprint.agent.turn import HistoryEntry, ToolCallRecord, ToolResultRecord, ToolReturn, Turn
from agentfootprint.events import EventSink
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import (
    AgentIterationEnd,
    CheckinDecision,
    ErrorTool,
    PauseRequested,
    PauseResumed,
    PermissionHalt,
    SkillActivated,
    StreamToolEnd,
    StreamToolStart,
    ToolsRepeatedCall,
    WarningToolRaised,
)
from agentfootprint.flow import FrozenDict, FrozenList, Scope, freeze, pause, resume_answer, thaw
from agentfootprint.tools import RunStoppingError, Tool, ToolContext, ToolOutcome
from agentfootprint.tools._codes import ERR_TOOL_RAISED
from agentfootprint.tools.execute import execute_tool

ERR_TOOL_HOOK = "ERR_TOOL_HOOK"
ERR_TYPED_ANSWER = "ERR_TYPED_ANSWER"
TWIN_THRESHOLD = 0.8


@dataclass
class _Batch:
    """What one iteration's calls produced so far: tool messages, result records, returns, activated skills."""

    messages: list[HistoryEntry]
    records: list[ToolResultRecord] = field(default_factory=list)
    returns: list[ToolReturn] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)

    def add(self, message: HistoryEntry, record: ToolResultRecord, returned: ToolReturn) -> None:
        self.messages.append(message)
        self.records.append(record)
        self.returns.append(returned)

    def completed(self) -> list[dict[str, Any]]:
        """The calls done before a pause, as pause data (replayed on resume, never run twice)."""
        return [
            {"message": m, "record": r, "return": t}
            for m, r, t in zip(self.messages[1:], self.records, self.returns, strict=True)
        ]


@dataclass(frozen=True)
class _Result:
    content: str
    is_error: bool
    code: str | None
    extra: dict[str, Any]


class ToolCalls:
    """The stage, built once per agent config; each run arrives through ``scope.deps``."""

    def __init__(self, config: AgentConfig, catalog: Catalog, events: EventSink | None = None) -> None:
        self.config = config
        self.catalog = catalog
        self.events = events

    async def __call__(self, scope: Scope) -> None:
        run = AgentRun.of(scope, self.config, self.events)
        turn = Turn(scope)
        iteration = turn.iteration
        response = turn.last_response
        calls = response["tool_calls"]
        resuming, answer = resume_answer()
        kept = turn.clock if self.config.time_enabled else None
        if kept is not None and "clock" not in run.tool_services:  # a resumed leg serves the paused turn's clock
            run.tool_services["clock"] = thaw(kept)
        if resuming and run.resume_time is not None:  # the paused turn keeps its clock; another one is recorded
            passed, run.resume_time = run.resume_time, None
            if kept is not None:
                if differs(passed, kept):
                    row = {"kind": "clock-on-resume", "passed": passed, "kept": thaw(kept), "applied": False}
                    turn.append(Turn.clock_rows, row)
        completed: list[dict[str, Any]] = list(answer.get("completed", ())) if resuming else []
        asked = _asked(response)
        batch = _Batch(messages=[asked], activated=list(turn.activated_skills))
        offered = {spec["name"] for spec in turn.tool_specs}
        for index, call in enumerate(calls):
            if index < len(completed):
                self._replay(batch, call, completed[index])
                continue
            if resuming and index == len(completed):
                resuming = False
                result = await self._answer_pause(run, scope, turn, call, answer, batch)
            else:
                result = await self._dispatch(run, scope, turn, call, offered, batch)
            if self.config.ablated_results:
                result = self._ablated(turn, batch, call["name"], result)
            self._record(run, scope, batch, call, result, iteration)
        # the assistant entry shares the recorded reply's frozen calls; the tool messages are frozen as appended
        turn.scope._append_frozen(Turn.history.key, [asked, *[freeze(m) for m in batch.messages[1:]]])
        turn.append(Turn.tool_results, *batch.records)
        turn.last_tool_results = batch.returns
        margins = tool_choice_margins(calls, turn.tool_specs)
        if margins:
            turn.append(Turn.tool_choice_margins, *[{**m, "iteration": iteration} for m in margins])
        if batch.activated != list(turn.activated_skills):
            turn.activated_skills = list(dict.fromkeys(batch.activated))
        ended = lambda: AgentIterationEnd(iteration=iteration, tool_calls=len(calls))  # noqa: E731
        emit(run, scope, ev.AGENT_ITERATION_END, ended, iteration)

    def _ablated(self, turn: Turn, batch: _Batch, name: str, result: _Result) -> _Result:
        """The result blanked when ``without("tool#n")`` ablated this call: the tool's n-th result of the run."""
        earlier = [r for r in (*turn.tool_results, *batch.records) if r["name"] == name]
        if f"{name}#{len(earlier) + 1}" not in self.config.ablated_results:
            return result
        return _Result("", False, None, {**result.extra, "ablated": True})

    @staticmethod
    def _replay(batch: _Batch, call: ToolCallRecord, done: dict[str, Any]) -> None:
        batch.add(done["message"], done["record"], done["return"])
        if done["record"]["name"] == READ_SKILL and not done["record"]["is_error"]:
            batch.activated.append(thaw(call.get("args", {})).get("id"))

    # -- one call ---------------------------------------------------------------------------------------------
    async def _dispatch(
        self, run: AgentRun, scope: Scope, turn: Turn, call: ToolCallRecord, offered: set[str], batch: _Batch
    ) -> _Result:
        call_id, name, args = call["id"], call["name"], thaw(call.get("args", {}))
        iteration = turn.iteration
        emit(
            run,
            scope,
            ev.STREAM_TOOL_START,
            lambda: StreamToolStart(tool_call_id=call_id, name=name, args=thaw(call.get("args", {}))),
            iteration,
        )
        tool = self._tool(run, scope, name)
        request = ToolCallRequest(tool_call_id=call_id, name=name, args=args, tool=tool if name in offered else None)
        if name == READ_SKILL and READ_SKILL in self.catalog.by_name:
            innermost = self._skill_reader(run, scope, iteration, batch.activated)
        else:
            innermost = self._executor(run, iteration, available=sorted(offered), args_error=call.get("args_error"))
        outcome = await self._through_chain(run, scope, turn, request, innermost)
        if outcome.halted:
            emit(run, scope, ev.PERMISSION_HALT, lambda: PermissionHalt(tool=name, tool_call_id=call_id), iteration)
            raise PolicyHaltError(outcome.content)
        if outcome.paused or outcome.needs_check_in:
            self._pause(run, scope, call, outcome, batch, iteration)
        result = _Result(
            outcome.content,
            outcome.is_error,
            outcome.error_code,
            {"truncated": outcome.truncated, "elapsed_ms": round(outcome.elapsed_ms, 3)},
        )
        if result.is_error:
            failed = lambda: ErrorTool(tool_call_id=call_id, name=name, code=result.code)  # noqa: E731
            emit(run, scope, ev.ERROR_TOOL, failed, iteration)
        if result.code == ERR_TOOL_RAISED:
            self._warn_raised(run, scope, call_id, name, result.content, iteration)
        if self.config.repeated_call_nudge and not result.is_error and name != READ_SKILL:
            by_args = tool is not None and tool.repeated_when == "arguments"
            result = self._nudge(run, scope, call_id, name, args, result, iteration, by_args)
        return result

    @staticmethod
    def _nudge(
        run: AgentRun,
        scope: Scope,
        call_id: str,
        name: str,
        args: Any,
        result: _Result,
        iteration: int,
        by_args: bool = False,
    ) -> _Result:
        """The second identical landing of one call gets one sentence saying so (the call still ran); ``by_args``
        (a tool declared ``repeated_when="arguments"``): the same arguments count as a repeat whatever the result."""
        count, args_print, result_print = run.repeated_calls.land(name, args, "" if by_args else result.content)
        if count != REPEATED_CALL_THRESHOLD:
            return result
        payload = lambda: ToolsRepeatedCall(  # noqa: E731
            tool_call_id=call_id,
            name=name,
            occurrences=count,
            args_fingerprint=args_print,
            result_fingerprint=result_print,
        )
        emit(run, scope, ev.TOOLS_REPEATED_CALL, payload, iteration)
        return replace(result, content=result.content + repeated_note(name, count, by_args))

    @staticmethod
    def _warn_raised(run: AgentRun, scope: Scope, call_id: str, name: str, told: str, iteration: int) -> None:
        """A tool that raised is a bug to fix, not only a message for the model: warn the developer."""
        line = (
            f"tool {name!r} raised an exception (call {call_id}, {scope.runtime_stage_id}); the model was told: {told}"
        )
        run.warnings.append(run.redactor.redact(line) if run.redactor.active else line)
        payload = lambda: WarningToolRaised(tool_call_id=call_id, name=name, message=told)  # noqa: E731
        emit(run, scope, ev.WARNING_TOOL_RAISED, payload, iteration)

    async def _through_chain(
        self, run: AgentRun, scope: Scope, turn: Turn, request: ToolCallRequest, innermost: CallTool
    ) -> ToolOutcome:
        """The call through every ``wrap_tool_call``; a raising hook fails closed with an error result."""
        if not self.config.hooks.wrap_tool_call:
            return await innermost(request)
        try:
            return await run.tool_chain(innermost, turn)(request)
        except ToolHookError as err:
            return ToolOutcome(
                content=f"Error: tool call refused: extension '{err.extension}' failed ({type(err.error).__name__})",
                is_error=True,
                error_code=ERR_TOOL_HOOK,
            )

    def _pause(
        self,
        run: AgentRun,
        scope: Scope,
        call: ToolCallRecord,
        outcome: ToolOutcome,
        batch: _Batch,
        iteration: int,
        *,
        repeat: int = 0,
        question: str | None = None,
    ) -> None:
        """Pause the run to ask a person (the question, or consent to run the tool with the arguments shown)."""
        name, call_id = call["name"], call["id"]
        kind = "ask_human" if outcome.paused else "check_in"
        if question is None:
            question = (
                str((outcome.args or {}).get("question", ""))
                if outcome.paused
                else outcome.question or f"Allow tool '{name}' to run with the arguments shown?"
            )
        data: dict[str, Any] = {
            "kind": kind,
            "question": question,
            "tool_call_id": call_id,
            "tool_name": name,
            "request_id": consent_request_id(run.turn_id, iteration, call_id, name, thaw(call.get("args", {}))),
            "completed": batch.completed(),
        }
        tool = self._tool(run, scope, name)
        if outcome.paused and tool is not None and tool.answer_schema is not None:  # a typed ask
            data["answer_schema"] = thaw(tool.answer_schema)
            data["repeat"] = {"count": repeat}
        emit(
            run,
            scope,
            ev.PAUSE_REQUESTED,
            lambda: PauseRequested(kind=kind, question=question, tool_call_id=call_id, tool_name=name),
            iteration,
        )
        pause(data)

    def _tool(self, run: AgentRun, scope: Scope, name: str) -> Tool | None:
        """The tool an extension provided (or replaced) this iteration under this name, else the agent's own."""
        return run.provided.get(scope.namespace, {}).get(name) or self.catalog.by_name.get(name)

    def _executor(self, run: AgentRun, iteration: int, **options: Any) -> CallTool:
        """The innermost link of the tool chain: validate, permit, gate and run the tool (never raises for it)."""

        async def execute(request: ToolCallRequest) -> ToolOutcome:
            policy = run.redactor.policy
            ctx = ToolContext(
                tool_call_id=request.tool_call_id,
                run_id=run.run_id,
                identity=run.identity,
                iteration=iteration,
                tool_name=request.name,
                cancelled=run.cancelled,
                request=run.request,
                parent_run=run.link,
                services=MappingProxyType(run.tool_services),
                session_id=run.session_id,
                redact=None if policy.empty else policy,
                signal=run.signal,
            )
            return await execute_tool(
                request.tool,
                request.name,
                request.args,
                ctx,
                permission=self.config.permission,
                max_result_chars=self.config.max_result_chars,
                passthrough=(RunStoppingError,),
                **options,
            )

        return execute

    def _skill_reader(self, run: AgentRun, scope: Scope, iteration: int, activated: list[str]) -> CallTool:
        """The innermost link for ``read_skill``: activate the skill (the chain may refuse it first)."""

        async def read(request: ToolCallRequest) -> ToolOutcome:
            result = self._read_skill(request.args, activated)
            if not result.is_error:
                activated_skill = lambda: SkillActivated(skill_id=request.args.get("id"))  # noqa: E731
                emit(run, scope, ev.SKILL_ACTIVATED, activated_skill, iteration)
            return ToolOutcome(content=result.content, is_error=result.is_error, error_code=result.code)

        return read

    def _read_skill(self, args: Any, activated: list[str]) -> _Result:
        skill_ids = self.catalog.skill_ids
        skill_id = args.get("id") if isinstance(args, dict) else None
        if not isinstance(skill_id, str) or skill_id not in skill_ids:
            listed = ", ".join(sorted(skill_ids))
            return _Result(f"Error: unknown skill. Available skills: {listed}.", True, "ERR_UNKNOWN_SKILL", {})
        if skill_id not in activated:
            activated.append(skill_id)
        return _Result(f"Skill '{skill_id}' is active: its instructions are now in the system prompt.", False, None, {})

    # -- the paused call on resume ------------------------------------------------------------------------------
    async def _answer_pause(
        self,
        run: AgentRun,
        scope: Scope,
        turn: Turn,
        call: ToolCallRecord,
        answer: dict[str, Any],
        batch: _Batch,
    ) -> _Result:
        """The paused call's result: the person's answer (ask_human) or the consented tool run (check-in)."""
        kind = answer.get("kind", "ask_human")
        value = answer.get("answer")
        iteration = turn.iteration
        emit(run, scope, ev.PAUSE_RESUMED, lambda: PauseResumed(kind=kind, tool_call_id=call["id"]), iteration)
        tool = self._tool(run, scope, call["name"])
        if kind != "check_in" and tool is not None and tool.answer_schema is not None:
            return self._typed_answer(run, scope, call, tool, answer, batch, iteration)
        if kind != "check_in":
            content = value if isinstance(value, str) else json.dumps(value)
            return _Result(content, False, None, {"answered_by": "human"})
        request_id = consent_request_id(run.turn_id, iteration, call["id"], call["name"], thaw(call.get("args", {})))
        answered = spend_decision(self.config, value, request_id)
        decided_by, note = answered.by, answered.note
        decision = "approved" if answered.approved else "declined"
        emit(
            run,
            scope,
            ev.CHECKIN_DECISION,
            lambda: CheckinDecision(
                tool_call_id=call["id"],
                tool=call["name"],
                decision=decision,
                by=decided_by,
                note=note,
                request_id=request_id,
            ),
            iteration,
        )
        request = ToolCallRequest(
            tool_call_id=call["id"],
            name=call["name"],
            args=thaw(call.get("args", {})),
            tool=self._tool(run, scope, call["name"]),
        )
        innermost = self._executor(run, iteration, check_in=decision, check_in_note=note)
        outcome = await self._through_chain(run, scope, turn, request, innermost)
        return _Result(
            outcome.content, outcome.is_error, outcome.error_code, {"check_in": decision, "decided_by": decided_by}
        )

    def _typed_answer(
        self,
        run: AgentRun,
        scope: Scope,
        call: ToolCallRecord,
        tool: Tool,
        answer: dict[str, Any],
        batch: _Batch,
        iteration: int,
    ) -> _Result:
        """A typed ask's answer: validated against its declared type; one that does not fit is asked again (the
        count travels on the pause checkpoint) until ``max_reasks`` is spent, then the model is told."""
        schema = tool.answer_schema or {}
        repeat = read_repeat(answer.get("repeat"))
        value, issues = read_typed_answer(schema, answer.get("answer"))
        if not issues:
            run.answered_ask = {"tool_name": call["name"], "tool_call_id": call["id"], "reasks": repeat}
            content = value if isinstance(value, str) else json.dumps(value)
            return _Result(content, False, None, {"answered_by": "human", "typed_answer": True})
        listed = "; ".join(issue.message for issue in issues[:5])
        if repeat < tool.max_reasks:
            original = str(answer.get("question") or "")
            asked = original.split("\n(The answer given", 1)[0]
            question = f"{asked}\n(The answer given does not fit ({listed}); please answer again.)"
            outcome = ToolOutcome(content="", paused=True, args=thaw(call.get("args", {})))
            pause()  # takes this resume's answer (it did not fit), so the next pause() pauses the run again
            self._pause(run, scope, call, outcome, batch, iteration, repeat=repeat + 1, question=question)
        told = (
            f"Error: the person's answer did not fit the declared type after {repeat + 1} ask(s) ({listed}). "
            "Continue without it or ask differently."
        )
        return _Result(told, True, ERR_TYPED_ANSWER, {"answered_by": "human"})

    # -- the record ---------------------------------------------------------------------------------------------
    def _record(
        self, run: AgentRun, scope: Scope, batch: _Batch, call: ToolCallRecord, result: _Result, iteration: int
    ) -> None:
        call_id, name = call["id"], call["name"]
        record = cast(
            ToolResultRecord,
            {
                "call_id": call_id,
                "name": name,
                "args": thaw(call.get("args", {})),
                "content": result.content,
                "is_error": result.is_error,
                "error_code": result.code,
                "iteration": iteration,
                **result.extra,
            },
        )
        batch.add(
            {"role": "tool", "content": result.content, "tool_call_id": call_id, "tool_name": name},
            record,
            {"name": name, "call_id": call_id, "content": result.content, "is_error": result.is_error},
        )
        emit(
            run,
            scope,
            ev.STREAM_TOOL_END,
            lambda: StreamToolEnd(
                tool_call_id=call_id,
                name=name,
                content=result.content,
                is_error=result.is_error,
                error_code=result.code,
            ),
            iteration,
        )


def _asked(response: Mapping[str, Any]) -> HistoryEntry:
    """The history entry of the model's tool-calling reply, frozen: ``freeze`` of the entry built from thawed copies
    of the reply's calls and reasoning, with the recorded (immutable) ones shared instead of copied again."""
    calls = response["tool_calls"]
    entry = {"role": "assistant", "content": freeze(response["content"]), "tool_calls": _shared(calls)}
    if response.get("reasoning"):
        entry["reasoning"] = _shared(response["reasoning"])
    return cast(HistoryEntry, FrozenDict(entry))


def _shared(value: Any) -> Any:
    return value if type(value) is FrozenList else freeze(value)


def check_decision(answer: Any, request_id: str) -> ConsentDecision:
    """``answer`` as the decision on ``request_id``; refused when it is not a decision, or answers another request."""
    decision = read_decision(answer)
    if decision is None:
        raise DecisionRequiredError(received=describe_received(answer), request_id=request_id)
    if decision.request_id is None:
        raise ResumeDecisionError("no-request", request_id=request_id)
    if decision.request_id != request_id:
        raise ResumeDecisionError("other-request", request_id=request_id)
    return decision


def spend_decision(config: AgentConfig, answer: Any, request_id: str) -> ConsentDecision:
    """Check the decision, then spend its request: a request a resume already answered is refused, so the tool
    never runs twice on one consent."""
    decision = check_decision(answer, request_id)
    if not config.ledger().spend(request_id):
        raise ResumeDecisionError("spent", request_id=request_id)
    return decision


def tool_choice_margins(calls: Any, specs: Any) -> list[dict[str, Any]]:
    """When the model picked a tool that has a near-twin among those offered, record how alike they read."""
    if len(specs) < 2:
        return []
    from agentfootprint.tools.lint import description_similarity

    out: list[dict[str, Any]] = []
    by_name = {s["name"]: s for s in specs}
    for call in calls:
        chosen = by_name.get(call["name"])
        if chosen is None:
            continue
        for other in specs:
            if other["name"] == chosen["name"]:
                continue
            similarity = description_similarity(str(chosen.get("description", "")), str(other.get("description", "")))
            if similarity >= TWIN_THRESHOLD:
                out.append(
                    {
                        "tool_call_id": call["id"],
                        "chosen": chosen["name"],
                        "twin": other["name"],
                        "similarity": round(similarity, 4),
                        "margin": round(1.0 - similarity, 4),
                    }
                )
    return out


__all__ = ["ERR_TOOL_HOOK", "TWIN_THRESHOLD", "ToolCalls", "check_decision", "spend_decision", "tool_choice_margins"]
