"""The ReAct loop as a recorded chart: seed → injection-engine → slots → call-llm → route → tool-calls | final."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint.agent.config import READ_SKILL, AgentConfig, RunContext, current_run
from agentfootprint.agent.errors import PolicyHaltError
from agentfootprint.context import InjectionContext, ToolReturn, evaluate_injections
from agentfootprint.context.budget import (
    CONTEXT_BUDGET_PRESSURE,
    CONTEXT_EVICTED,
    apply_window,
    check_budget,
    ensure_context_event_types,
    slot_breakdown,
)
from agentfootprint.context.cache import compute_cache_markers
from agentfootprint.events import types as ev
from agentfootprint.flow import FlowChart, Scope, decide, flow_chart, pause, resume_answer
from agentfootprint.flow._frozen import thaw
from agentfootprint.providers import LLMRequest, LLMResponse, Message, ProviderResponseError, ToolSpec, Usage
from agentfootprint.tools import Tool, ToolContext, execute_tool

STAGE_IDS = (
    "seed",
    "injection-engine",
    "system-prompt",
    "messages",
    "tools",
    "call-llm",
    "route",
    "tool-calls",
    "final",
)


def _emit(rc: RunContext, scope: Scope, event_type: str, payload: Any, iteration: int | None = None) -> None:
    events = rc.events
    if events.has_listeners(event_type):
        events.emit(event_type, payload, run_id=rc.run_id, runtime_stage_id=scope.runtime_stage_id, iteration=iteration)


def _emit_context(rc: RunContext, scope: Scope, event_type: str, payload: Any, iteration: int) -> None:
    """Emit a context event type that may not be registered on this dispatcher yet (registers it first)."""
    ensure_context_event_types(rc.events)
    _emit(rc, scope, event_type, payload, iteration)


def read_skill_tool(config: AgentConfig) -> Tool | None:
    """The built-in ``read_skill`` tool, offered whenever the agent has skills."""
    from agentfootprint.tools import define_tool

    skills = config.skills
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


def build_agent_chart(config: AgentConfig) -> FlowChart:
    """Compile the agent's loop; stages close over ``config`` and read per-run facts from ``current_run()``."""
    tools_by_name: dict[str, Tool] = {t.name: t for t in config.tools}
    for skill in config.skills:
        for t in skill.tools:
            tools_by_name.setdefault(t.name, t)
    skill_tool = read_skill_tool(config)
    if skill_tool is not None:
        tools_by_name[READ_SKILL] = skill_tool
    skill_ids = {s.id for s in config.skills}
    scoped = {t.name for s in config.skills if s.scope_tools for t in s.tools}
    base_tools = [t for t in tools_by_name.values() if t.name not in scoped]
    cache_policies = {i.id: i.cache for i in config.injections}

    def seed(scope: Scope) -> None:
        rc = current_run(config)
        if rc.mounted:  # a composition member: the message comes from the mount, the run from the composition
            message = scope["member_message"]
            scope["run"] = {
                "run_id": rc.run_id,
                "agent": config.name,
                "session_id": rc.session_id,
                "identity": rc.identity.model_dump(exclude_none=True) if rc.identity else None,
                "member": True,
            }
            scope["user_message"] = message
            scope["history"] = [{"role": "user", "content": message}]
        else:
            args = scope.args
            message = args["message"]
            scope["run"] = {
                "run_id": args["run_id"],
                "agent": config.name,
                "session_id": args.get("session_id"),
                "identity": args.get("identity"),
            }
            scope["user_message"] = message
            if args.get("history_complete"):
                scope["history"] = list(args["history"])
            else:
                scope["history"] = [*args.get("history", ()), {"role": "user", "content": message}]
        scope["iteration"] = 0
        scope["activated_skills"] = []
        scope["last_tool_results"] = []
        scope["usage_total"] = {"input_tokens": 0, "output_tokens": 0}

    def injection_engine(scope: Scope) -> None:
        rc = current_run(config)
        iteration = scope["iteration"] + 1
        scope["iteration"] = iteration
        rc.last_completed_iteration = iteration - 1
        returns = tuple(
            ToolReturn(name=r["name"], call_id=r["call_id"], content=r["content"], is_error=r["is_error"])
            for r in scope["last_tool_results"]
        )
        ctx = InjectionContext(
            user_message=scope["user_message"],
            iteration=iteration,
            last_tool_results=returns,
            activated_skills=tuple(scope["activated_skills"]),
            identity=rc.identity,
            run_id=rc.run_id,
        )
        previous = {
            r["source_id"]: r["since_iteration"]
            for key in ("system_prompt_injections", "message_injections")
            for r in scope.get(key, ())
        }
        result = evaluate_injections(config.injections, ctx, config.system_prompt, previous)
        scope["system_prompt_injections"] = result["system_prompt"]
        scope["message_injections"] = result["messages"]
        scope["tool_injections"] = result["tools"]
        scope["context_evaluated"] = result["summary"]
        _emit(rc, scope, ev.AGENT_ITERATION_START, {"iteration": iteration}, iteration)
        _emit(rc, scope, ev.CONTEXT_EVALUATED, lambda: dict(result["summary"]), iteration)
        if rc.events.has_listeners(ev.CONTEXT_INJECTED):
            for slot in ("system_prompt", "messages"):
                for record in result[slot]:
                    _emit(rc, scope, ev.CONTEXT_INJECTED, {**record, "slot": slot}, iteration)

    def system_prompt_slot(scope: Scope) -> None:
        records = scope["system_prompt_injections"]
        scope["system_prompt"] = "\n\n".join(r["text"] for r in records)

    def messages_slot(scope: Scope) -> None:
        records = scope["message_injections"]
        scope["message_slot"] = [
            {"role": r["role"], "content": r["text"], "source_id": r["source_id"]} for r in records
        ]

    def tools_slot(scope: Scope) -> None:
        active_skill_tools = {r["tool"] for r in scope["tool_injections"]}
        offered = [t for t in base_tools] + [
            tools_by_name[n] for n in sorted(active_skill_tools) if n in tools_by_name and n in scoped
        ]
        specs: list[dict[str, Any]] = []
        seen: set[str] = set()
        for t in offered:
            if t.name not in seen:
                seen.add(t.name)
                specs.append(t.to_spec())
        scope["tool_specs"] = specs

    async def call_llm(scope: Scope) -> None:
        rc = current_run(config)
        iteration = scope["iteration"]
        history = scope["history"]
        injected = scope["message_slot"]
        messages = [Message(role=m["role"], content=m["content"]) for m in injected]
        conversation = rc.messages_for(history, scope.namespace)
        # -- context: window (drops oldest turns from view, never from history), cache markers, budgets --
        if config.window is not None:
            conversation, dropped = apply_window(conversation, config.window)
            if dropped:
                scope["window_dropped"] = dropped
                _emit_context(rc, scope, CONTEXT_EVICTED, {"slot": "messages", "dropped": dropped}, iteration)
        messages.extend(conversation)
        specs = scope["tool_specs"]
        system_records = scope["system_prompt_injections"]
        markers = compute_cache_markers(system_records, injected, cache_policies)
        if markers:
            scope["cache_markers"] = markers
        if config.context_budget is not None:
            breakdown = slot_breakdown(system_records, messages[: len(injected)], injected, conversation, specs)
            pressure = check_budget(config.context_budget, breakdown)
            if pressure:
                scope["budget_pressure"] = pressure
                for p in pressure:
                    _emit_context(rc, scope, CONTEXT_BUDGET_PRESSURE, {**p, "iteration": iteration}, iteration)
        # -- end context --
        request = LLMRequest(
            system_prompt=scope["system_prompt"],
            messages=messages,
            tools=[ToolSpec.model_validate(thaw(s)) for s in specs],
            model=config.model,
            seed=rc.seed,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            cache_markers=[
                m
                for m in markers
                if m.get("slot") == "system_prompt" or int(m.get("message_index", 1 << 30)) < len(injected)
            ],
        )
        scope["llm_call"] = {
            "iteration": iteration,
            "model": config.model,
            "seed": rc.seed,
            "message_count": len(messages),
            "tools": [s["name"] for s in specs],
        }
        _emit(
            rc,
            scope,
            ev.STREAM_LLM_START,
            lambda: {
                "model": config.model,
                "iteration": iteration,
                "message_count": len(messages),
                "tools": [s["name"] for s in specs],
            },
            iteration,
        )
        try:
            try:
                response = await _call_provider(rc, scope, request, iteration)
            except RecursionError:
                raise ProviderResponseError(
                    "the model's response is nested too deeply to process", provider=config.provider.name
                ) from None
        except Exception as exc:
            _emit(
                rc,
                scope,
                ev.ERROR_PROVIDER,
                {"error_type": type(exc).__name__, "code": getattr(exc, "code", None), "message": str(exc)[:300]},
                iteration,
            )
            raise
        calls = [_safe_call(c) for c in response.tool_calls]
        last: dict[str, Any] = {
            "content": response.content,
            "tool_calls": calls,
            "finish_reason": response.finish_reason,
            "model": response.model,
            "usage": response.usage.model_dump(),
            "attempts": [a.model_dump() for a in response.attempts],
        }
        if response.reasoning:
            last["reasoning"] = [block.model_dump(exclude_none=True) for block in response.reasoning]
        scope["last_response"] = last
        scope["pending_tool_calls"] = len(calls)
        total = scope["usage_total"]
        usage = Usage(**total) + response.usage
        scope["usage_total"] = usage.model_dump()
        cost = _cost(config, response)
        if cost is not None:
            spent = float(scope.get("cost_total", 0.0)) + cost
            scope["cost_total"] = round(spent, 10)
            if config.cost_budget is not None and spent > config.cost_budget:
                if config.cost_action == "halt":
                    scope["budget_exceeded"] = True
                elif not rc.budget_warned:
                    rc.budget_warned = True
                    _emit(rc, scope, ev.COST_BUDGET_WARNING, {"spent": spent, "budget": config.cost_budget}, iteration)
        _emit(
            rc,
            scope,
            ev.STREAM_LLM_END,
            lambda: {
                "content": response.content,
                "tool_calls": calls,
                "usage": response.usage.model_dump(),
                "finish_reason": response.finish_reason,
            },
            iteration,
        )
        _emit(
            rc,
            scope,
            ev.COST_USAGE,
            lambda: {"usage": response.usage.model_dump(), "total": usage.model_dump(), "cost": cost},
            iteration,
        )

    rules: list[dict[str, Any]] = [
        {
            "when": {"pending_tool_calls": {"gt": 0}, "iteration": {"lt": config.max_iterations}},
            "then": "tool-calls",
            "label": "Model asked for tools",
        },
    ]
    if config.cost_budget is not None and config.cost_action == "halt":
        rules.insert(0, {"when": {"budget_exceeded": {"eq": True}}, "then": "final", "label": "Cost budget exceeded"})

    def route(scope: Scope) -> Any:
        decision = decide(scope, rules, "final")
        rc = current_run(config)
        iteration = scope["iteration"]
        _emit(
            rc,
            scope,
            ev.AGENT_ROUTE_DECIDED,
            lambda: {
                "chosen": decision.branch,
                "pending_tool_calls": scope["pending_tool_calls"],
                "reason": next((r.label for r in decision.evidence.rules if r.matched), "no tool calls"),
            },
            iteration,
        )
        return decision

    async def tool_calls(scope: Scope) -> None:
        rc = current_run(config)
        iteration = scope["iteration"]
        response = scope["last_response"]
        calls = response["tool_calls"]
        resuming, answer = resume_answer()
        completed: list[dict[str, Any]] = list(answer.get("completed", ())) if resuming else []
        messages: list[dict[str, Any]] = [
            {"role": "assistant", "content": response["content"], "tool_calls": thaw(calls)}
        ]
        if response.get("reasoning"):
            messages[0]["reasoning"] = thaw(response["reasoning"])
        records: list[dict[str, Any]] = []
        returns: list[dict[str, Any]] = []
        activated = list(scope["activated_skills"])
        offered = {spec["name"] for spec in scope["tool_specs"]}
        for index, call in enumerate(calls):
            call_id, name, args = call["id"], call["name"], thaw(call.get("args", {}))
            if index < len(completed):
                done = completed[index]
                messages.append(done["message"])
                records.append(done["record"])
                returns.append(done["return"])
                if done["record"]["name"] == READ_SKILL and not done["record"]["is_error"]:
                    activated.append(args.get("id"))
                continue
            if resuming and index == len(completed):
                resuming = False
                outcome_content, is_error, code, extra = await _answer_pause(
                    rc, scope, call, answer, tools_by_name, iteration
                )
            else:
                _emit(
                    rc,
                    scope,
                    ev.STREAM_TOOL_START,
                    lambda c=call: {"tool_call_id": c["id"], "name": c["name"], "args": thaw(c.get("args", {}))},
                    iteration,
                )
                if name == READ_SKILL and READ_SKILL in tools_by_name:
                    outcome_content, is_error, code = _read_skill(call, skill_ids, activated)
                    extra = {}
                    if not is_error:
                        _emit(rc, scope, ev.SKILL_ACTIVATED, {"skill_id": args.get("id")}, iteration)
                else:
                    ctx = ToolContext(
                        tool_call_id=call_id,
                        run_id=rc.run_id,
                        identity=rc.identity,
                        iteration=iteration,
                        tool_name=name,
                        cancelled=rc.cancelled,
                    )
                    outcome = await execute_tool(
                        tools_by_name.get(name) if name in offered else None,
                        name,
                        args,
                        ctx,
                        available=sorted(offered),
                        permission=config.permission,
                        max_result_chars=config.max_result_chars,
                        args_error=call.get("args_error"),
                    )
                    if outcome.halted:
                        _emit(rc, scope, ev.PERMISSION_HALT, {"tool": name, "tool_call_id": call_id}, iteration)
                        raise PolicyHaltError(outcome.content)
                    if outcome.paused or outcome.needs_check_in:
                        kind = "ask_human" if outcome.paused else "check_in"
                        question = (
                            str((outcome.args or {}).get("question", ""))
                            if outcome.paused
                            else f"Allow tool '{name}' to run with the arguments shown?"
                        )
                        data = {
                            "kind": kind,
                            "question": question,
                            "tool_call_id": call_id,
                            "tool_name": name,
                            "completed": [
                                {"message": m, "record": r, "return": t}
                                for m, r, t in zip(messages[1:], records, returns, strict=True)
                            ],
                        }
                        _emit(
                            rc,
                            scope,
                            ev.PAUSE_REQUESTED,
                            {"kind": kind, "question": question, "tool_call_id": call_id, "tool_name": name},
                            iteration,
                        )
                        pause(data)
                    outcome_content, is_error, code = outcome.content, outcome.is_error, outcome.error_code
                    extra = {"truncated": outcome.truncated, "elapsed_ms": round(outcome.elapsed_ms, 3)}
                    if is_error:
                        _emit(
                            rc, scope, ev.ERROR_TOOL, {"tool_call_id": call_id, "name": name, "code": code}, iteration
                        )
            message = {"role": "tool", "content": outcome_content, "tool_call_id": call_id, "tool_name": name}
            record = {
                "call_id": call_id,
                "name": name,
                "args": args,
                "content": outcome_content,
                "is_error": is_error,
                "error_code": code,
                "iteration": iteration,
                **extra,
            }
            messages.append(message)
            records.append(record)
            returns.append({"name": name, "call_id": call_id, "content": outcome_content, "is_error": is_error})
            _emit(
                rc,
                scope,
                ev.STREAM_TOOL_END,
                lambda r=record: {
                    "tool_call_id": r["call_id"],
                    "name": r["name"],
                    "content": r["content"],
                    "is_error": r["is_error"],
                    "error_code": r["error_code"],
                },
                iteration,
            )
        scope.append("history", *messages)
        scope.append("tool_results", *records)
        scope["last_tool_results"] = returns
        margins = _tool_choice_margins(calls, scope["tool_specs"])
        if margins:
            scope.append("tool_choice_margins", *[{**m, "iteration": iteration} for m in margins])
        if activated != list(scope["activated_skills"]):
            scope["activated_skills"] = list(dict.fromkeys(activated))
        _emit(rc, scope, ev.AGENT_ITERATION_END, {"iteration": iteration, "tool_calls": len(calls)}, iteration)

    async def final(scope: Scope) -> None:
        rc = current_run(config)
        response = scope["last_response"]
        iteration = scope["iteration"]
        pending = scope["pending_tool_calls"]
        answer = response["content"]
        if config.evidence_posture is not None:  # [honesty] names-and-numbers evidence gate (agent/evidence.py)
            from agentfootprint.agent.evidence import evidence_gate  # [honesty] lazy: only agents that use it

            answer = await evidence_gate(scope, config, rc, answer)
        stopped: dict[str, Any] | None = None
        if config.cost_budget is not None and scope.get("budget_exceeded"):
            stopped = {"reason": "cost-budget", "iteration": iteration, "pending_tool_calls": pending}
        elif pending > 0:
            stopped = {"reason": "max-iterations", "iteration": iteration, "pending_tool_calls": pending}
        if stopped is not None:
            stopped["answer_was_empty"] = not answer
        scope["answer"] = answer
        scope["stopped_early"] = stopped
        rc.last_completed_iteration = iteration
        if rc.mounted:  # a composition member has no _finish of its own: write its turn to memory here
            from agentfootprint.context import remember_turn

            remember_turn(
                config.injections,
                identity=rc.identity,
                run_id=rc.run_id,
                user_message=str(scope["user_message"]),
                answer=answer,
                events=rc.events,
            )
        _emit(rc, scope, ev.AGENT_ITERATION_END, {"iteration": iteration, "tool_calls": 0}, iteration)

    return (
        flow_chart(
            "Seed",
            seed,
            id="seed",
            description="Seed the turn with the user message",
            max_iterations=config.max_iterations + 2,
        )
        .then(
            "Injection engine",
            injection_engine,
            id="injection-engine",
            description="Evaluate which context is active this iteration",
        )
        .then("System prompt", system_prompt_slot, id="system-prompt", description="Compose the system prompt")
        .then("Messages", messages_slot, id="messages", description="Compose injected messages")
        .then("Tools", tools_slot, id="tools", description="Compose the tools offered")
        .then("Call LLM", call_llm, id="call-llm", description="Call the model")
        .decider("Route", route, id="route", description="Route on the model's reply")
        .branch(
            "tool-calls", "Tool calls", tool_calls, loop_to="injection-engine", description="Run the requested tools"
        )
        .branch("final", "Final answer", final, description="Finish with the answer")
        .end()
        .build()
    )


async def _call_provider(rc: RunContext, scope: Scope, request: LLMRequest, iteration: int) -> LLMResponse:
    provider = rc.config.provider
    if not rc.events.has_listeners(ev.STREAM_TOKEN):
        return await provider.complete(request)
    final: LLMResponse | None = None
    tokens = _TokenGate(rc)
    async for chunk in provider.stream(request):
        if chunk.kind == "text" and chunk.text:
            for piece in tokens.feed(chunk.text):
                _emit(rc, scope, ev.STREAM_TOKEN, {"text": piece}, iteration)
        elif chunk.kind == "done":
            final = chunk.response
    for piece in tokens.flush():
        _emit(rc, scope, ev.STREAM_TOKEN, {"text": piece}, iteration)
    if final is None:
        raise RuntimeError(f"provider '{provider.name}' ended its stream without a final response")
    return final


class _TokenGate:
    """Streams text deltas; under a redaction policy it scrubs the whole text so far and holds back a tail, so
    a secret split across chunks is never emitted."""

    HOLD_BACK = 128

    def __init__(self, rc: RunContext) -> None:
        self._red = rc.redactor if rc.redactor.active else None
        self._raw = ""
        self._sent = 0

    def feed(self, text: str) -> list[str]:
        if self._red is None:
            return [text]
        self._raw += text
        scrubbed = self._red.scrub_text(self._raw)
        safe = max(self._sent, len(scrubbed) - self.HOLD_BACK)
        return self._take(scrubbed, safe)

    def flush(self) -> list[str]:
        if self._red is None:
            return []
        scrubbed = self._red.scrub_text(self._raw)
        return self._take(scrubbed, len(scrubbed))

    def _take(self, scrubbed: str, upto: int) -> list[str]:
        if upto <= self._sent:
            return []
        piece = scrubbed[self._sent : upto]
        self._sent = upto
        return [piece]


TWIN_THRESHOLD = 0.8


def _tool_choice_margins(calls: Any, specs: Any) -> list[dict[str, Any]]:
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


_MAX_ARGS_DEPTH = 64


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


def _safe_call(call: Any) -> dict[str, Any]:
    """A model's tool call as plain data; arguments nested beyond reason become an arguments error, not a crash."""
    if _depth_exceeds(call.args, _MAX_ARGS_DEPTH):
        return {
            "id": call.id,
            "name": call.name,
            "args": {},
            "args_error": f"arguments are nested more than {_MAX_ARGS_DEPTH} levels deep",
        }
    data: dict[str, Any] = call.model_dump(exclude_none=True)
    return data


def _cost(config: AgentConfig, response: LLMResponse) -> float | None:
    if not config.pricing:
        return None
    price = (
        config.pricing.get(response.model or config.model)
        or config.pricing.get(config.model)
        or config.pricing.get("*")
    )
    if price is None:
        return None
    return (
        response.usage.input_tokens * price.get("input", 0.0) + response.usage.output_tokens * price.get("output", 0.0)
    ) / 1000.0


def _read_skill(call: Any, skill_ids: set[str], activated: list[str]) -> tuple[str, bool, str | None]:
    args = call.get("args") or {}
    skill_id = args.get("id") if isinstance(args, dict) else None
    if not isinstance(skill_id, str) or skill_id not in skill_ids:
        listed = ", ".join(sorted(skill_ids))
        return f"Error: unknown skill. Available skills: {listed}.", True, "ERR_UNKNOWN_SKILL"
    if skill_id not in activated:
        activated.append(skill_id)
    return f"Skill '{skill_id}' is active: its instructions are now in the system prompt.", False, None


async def _answer_pause(
    rc: RunContext, scope: Scope, call: Any, answer: dict[str, Any], tools: dict[str, Tool], iteration: int
) -> tuple[str, bool, str | None, dict[str, Any]]:
    """The paused call's result on resume: the person's answer (ask_human) or the consented tool run (check-in)."""
    kind = answer.get("kind", "ask_human")
    value = answer.get("answer")
    _emit(rc, scope, ev.PAUSE_RESUMED, {"kind": kind, "tool_call_id": call["id"]}, iteration)
    if kind == "check_in":
        decided_by: str | None = None
        note: str | None = None
        if isinstance(value, dict):  # check_in_approved(by=...) / check_in_declined(by=..., note=...)
            decided_by = str(value["by"])[:200] if value.get("by") else None
            note = str(value["note"])[:2000] if value.get("note") else None
            value = value.get("decision")
        approved = value is True or (
            isinstance(value, str) and value.strip().lower() in ("yes", "y", "approve", "approved", "allow", "ok")
        )
        _emit(
            rc,
            scope,
            ev.CHECKIN_DECISION,
            {
                "tool_call_id": call["id"],
                "tool": call["name"],
                "decision": "approved" if approved else "declined",
                "by": decided_by,
                "note": note,
            },
            iteration,
        )
        ctx = ToolContext(
            tool_call_id=call["id"],
            run_id=rc.run_id,
            identity=rc.identity,
            iteration=iteration,
            tool_name=call["name"],
            cancelled=rc.cancelled,
        )
        outcome = await execute_tool(
            tools.get(call["name"]),
            call["name"],
            thaw(call.get("args", {})),
            ctx,
            check_in="approved" if approved else "declined",
            check_in_note=note,
            permission=rc.config.permission,
            max_result_chars=rc.config.max_result_chars,
        )
        return (
            outcome.content,
            outcome.is_error,
            outcome.error_code,
            {"check_in": "approved" if approved else "declined", "decided_by": decided_by},
        )
    content = value if isinstance(value, str) else json.dumps(value)
    return content, False, None, {"answered_by": "human"}
