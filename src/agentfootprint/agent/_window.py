"""The window stage: before each model call, a counted window strategy drops or folds the oldest turns.

Present in the chart only when the agent has a token-budget window or compaction. Tokens are the provider's own count
of the previous request, scaled to this one by characters (a ratio carried across turns on the conversation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentfootprint.agent._run import AgentRun
from agentfootprint.agent._stages import cost_of, emit_context
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.turn import HistoryEntry, Turn, UsageTotal
from agentfootprint.context.budget import CONTEXT_BUDGET_PRESSURE, CONTEXT_EVICTED
from agentfootprint.context.window import (
    FoldedSpan,
    RemovalPlan,
    SummarizeOldest,
    TokenBudgetWindow,
    current_request,
    entry_chars,
    fingerprint,
    frame_summary,
    history_chars,
    pinned_tool_results,
    plan_removal,
    summarize,
)
from agentfootprint.events import EventSink
from agentfootprint.events.catalogue import ContextBudgetPressure, ContextEvicted
from agentfootprint.flow import Scope, thaw
from agentfootprint.providers import LLMResponse, Message, Usage


def _fixed_chars(turn: Turn) -> int:
    """Characters of the request outside the conversation: system prompt, injected messages, tool specs."""
    size = len(turn.system_prompt) + sum(len(str(m.get("content", ""))) for m in turn.message_slot)
    return size + sum(len(json.dumps(thaw(s), sort_keys=True, default=str)) for s in turn.tool_specs)


def _request_text(turn: Turn, history: Sequence[Mapping[str, Any]]) -> str:
    parts = [turn.system_prompt, *(str(m.get("content", "")) for m in turn.message_slot)]
    parts += [str(m.get("content") or "") for m in history]
    parts += [json.dumps(thaw(s), sort_keys=True, default=str) for s in turn.tool_specs]
    return "\n".join(parts)


class WindowStage:
    """The ``window`` stage for one agent config; each run arrives through ``scope.deps``."""

    def __init__(self, config: AgentConfig, events: EventSink | None = None) -> None:
        self.config = config
        self.events = events
        strategy = config.window
        assert isinstance(strategy, TokenBudgetWindow | SummarizeOldest)
        self.strategy: TokenBudgetWindow | SummarizeOldest = strategy

    def _tokens_per_char(self, turn: Turn) -> float | None:
        """The provider's count of the previous request per character of it (this run's, else the carried one)."""
        scope = turn.scope
        last = scope.get("last_response") if turn.iteration > 1 else None
        chars = scope.get("window_chars") if last is not None else None
        tokens = int((last or {}).get("usage", {}).get("input_tokens") or 0)
        if not (tokens and chars):
            carried = scope.get("window_measure") or {}
            tokens, chars = int(carried.get("input_tokens") or 0), int(carried.get("chars") or 0)
        return tokens / chars if tokens > 0 and chars and chars > 0 else None

    async def __call__(self, scope: Scope) -> None:
        run = AgentRun.of(scope, self.config, self.events)
        turn = Turn(scope)
        strategy = self.strategy
        history: list[Mapping[str, Any]] = list(turn.history)
        fixed = _fixed_chars(turn)
        chars = fixed + run.history_chars(history, scope.namespace)
        ratio = self._tokens_per_char(turn)
        record: dict[str, Any] = {
            "strategy": strategy.strategy,
            "iteration": turn.iteration,
            "threshold_tokens": strategy.threshold_tokens,
            "chars_before": chars,
        }
        if ratio is not None:
            projected = round(ratio * chars)
            record.update(measured="provider-count", tokens_per_char=round(ratio, 6), projected_tokens=projected)
        elif strategy.count_tokens is not None:
            projected = int(strategy.count_tokens(_request_text(turn, history)))
            record.update(measured="count_tokens", projected_tokens=projected)
        else:
            projected = None
        dropped: list[dict[str, Any]] = []
        if projected is None:  # counted, not guessed: nothing to measure against yet
            if turn.iteration > 1 or turn.scope.get("window_measure") is not None:
                record.update(over_budget=None, refusals=[{"reason": "unmeasured"}], removed_message_count=0)
                turn.append(Turn.window_records, record)
        elif projected > strategy.threshold_tokens:
            record["over_budget"] = True
            current = current_request(history, turn.user_message)
            plan = plan_removal(history, strategy.keep_recent_turns, current)
            record["refusals"] = plan.refusals
            if isinstance(strategy, SummarizeOldest):
                history = await self._fold(run, scope, turn, history, plan, record)
            elif not plan.empty:
                pins = pinned_tool_results(history, self.config.keep_last_tool_results, current)
                span = range(plan.start, plan.end)
                dropped = [self._dropped(history, i) for i in span if i not in pins]
                record.update(removed_indices=[plan.start, plan.end], removed_message_count=len(dropped))
                held = sorted(i for i in span if i in pins)
                if held:  # the newest tool results stayed in view: their size is on the record
                    record["pinned"] = [{"index": i, "chars": entry_chars(history[i])} for i in held]
            else:
                record["removed_message_count"] = 0
            after = fixed + run.history_chars(history, scope.namespace) - sum(d["chars"] for d in dropped)
            record["chars_after"] = after
            if ratio is not None:
                record["projected_tokens_after"] = round(ratio * after)
            turn.append(Turn.window_records, record)
            self._tell(run, scope, turn, record, dropped)
            chars = after
        if isinstance(strategy, TokenBudgetWindow):
            turn.window_dropped = dropped
        turn.window_chars = chars

    @staticmethod
    def _dropped(history: Sequence[Mapping[str, Any]], i: int) -> dict[str, Any]:
        entry = history[i]
        out: dict[str, Any] = {"index": i, "role": entry.get("role"), "chars": entry_chars(entry)}
        out["reason"] = "token-budget"
        if entry.get("tool_call_id"):
            out["tool_call_id"] = entry.get("tool_call_id")
        return out

    async def _fold(
        self,
        run: AgentRun,
        scope: Scope,
        turn: Turn,
        history: list[Mapping[str, Any]],
        plan: RemovalPlan,
        record: dict[str, Any],
    ) -> list[Mapping[str, Any]]:
        """Replace the planned span by one framed summary; the span (with its messages) is kept as evidence."""
        strategy = self.strategy
        assert isinstance(strategy, SummarizeOldest)
        record["removed_message_count"] = 0
        if plan.empty:
            return history
        folded = [thaw(m) for m in history[plan.start : plan.end]]
        span_chars = history_chars(folded)
        span_key = fingerprint(json.dumps(folded, sort_keys=True, default=str))
        latched = any(
            r.get("span_key") == span_key and r.get("latched") for r in turn.scope.get("window_records") or ()
        )
        record["span_key"] = span_key
        if latched:  # the same span through the same summarizer gives the same verdict: do not pay twice
            record["refusals"] = [*plan.refusals, {"reason": "replacement-not-smaller"}]
            record["summarizer_skipped"] = True
            return history
        try:
            summary, usage = await summarize(strategy, [Message.model_validate(m) for m in folded])
        except Exception as exc:
            record["refusals"] = [*plan.refusals, {"reason": "summarizer-failed", "error": type(exc).__name__}]
            return history
        self._bill(turn, usage, record)
        span_id = f"{run.run_id[:12]}.{turn.iteration}"
        framed = frame_summary(
            summary,
            count=len(folded),
            iteration=turn.iteration,
            span_id=span_id,
            author=strategy.summarizer_name,
            retain=strategy.retain,
        )
        if len(framed) >= span_chars:
            record["refusals"] = [*plan.refusals, {"reason": "replacement-not-smaller"}]
            record["latched"] = True
            return history
        span = FoldedSpan(
            span_id=span_id,
            fingerprint=fingerprint(framed),
            run_id=run.run_id,
            iteration=turn.iteration,
            stage=scope.runtime_stage_id,
            summarizer=strategy.summarizer_name,
            start=plan.start,
            message_count=len(folded),
            messages=folded if strategy.retain == "conversation" else None,
            retained=strategy.retain,
            chars=span_chars,
        ).model_dump(exclude_none=True)
        summary_entry: HistoryEntry = {"role": "user", "content": framed}
        new_history: list[Mapping[str, Any]] = [*history[: plan.start], summary_entry, *history[plan.end :]]
        turn.history = new_history  # type: ignore[assignment]
        run.forget_conversation(scope.namespace)
        turn.append(Turn.folded_spans, span)
        record.update(
            span_id=span_id,
            removed_indices=[plan.start, plan.end],
            removed_message_count=len(folded),
            summary_chars=len(framed),
        )
        return new_history

    def _bill(self, turn: Turn, usage: Usage, record: dict[str, Any]) -> None:
        """The summary is a real model call: its tokens count in the turn's usage, its price in the cost."""
        strategy = self.strategy
        assert isinstance(strategy, SummarizeOldest)
        if not (usage.input_tokens or usage.output_tokens):
            return
        record["summarizer_usage"] = usage.model_dump()
        total = Usage(**turn.usage_total) + usage
        turn.usage_total = UsageTotal(**total.model_dump())  # type: ignore[typeddict-item]
        cost = cost_of(self.config, LLMResponse(usage=usage, model=strategy.model))
        if cost is not None:
            turn.cost_total = round(float(turn.cost_total) + cost, 10)
            record["summarizer_cost"] = cost

    def _tell(
        self, run: AgentRun, scope: Scope, turn: Turn, record: dict[str, Any], dropped: list[dict[str, Any]]
    ) -> None:
        iteration = turn.iteration
        removed = int(record.get("removed_message_count") or 0)

        def pressure() -> ContextBudgetPressure:
            return ContextBudgetPressure(
                slot="messages",
                unit="tokens",
                projected=record.get("projected_tokens"),
                cap=record["threshold_tokens"],
                plan_action=("summarize" if record.get("span_id") else "drop") if removed else "none",
                iteration=iteration,
            )

        emit_context(run, scope, CONTEXT_BUDGET_PRESSURE, pressure, iteration)
        if removed:

            def evicted() -> ContextEvicted:
                optional: dict[str, Any] = {}
                if record.get("span_id"):
                    optional["span_id"] = record["span_id"]
                if dropped:
                    optional["dropped"] = dropped
                return ContextEvicted(
                    slot="messages", strategy=record["strategy"], removed_message_count=removed, **optional
                )

            emit_context(run, scope, CONTEXT_EVICTED, evicted, iteration)


__all__ = ["WindowStage"]
