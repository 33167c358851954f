"""One side of a decision-ledger race, run in its own process: resume a consent pause through a shared ledger whose
``spend`` first waits at a barrier, so both processes spend at the same moment."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agentfootprint import Agent, define_tool
from agentfootprint.agent import DecisionLedger, PostgresDecisionLedger, SQLiteDecisionLedger
from agentfootprint.errors import AgentFootprintError
from agentfootprint.providers import LLMRequest, mock


def refund_agent(effects: Path, ledger: DecisionLedger | None = None) -> Agent:
    """Ask to refund A-1001 (a consent-gated tool); each refund that runs appends one line to ``effects``."""

    def refund(args: dict[str, Any], ctx: Any) -> str:
        with effects.open("a", encoding="utf-8") as out:
            out.write(json.dumps(args) + "\n")
        return f"refunded {args['amount']}"

    def respond(req: LLMRequest) -> Any:
        if not any(m.role == "tool" for m in req.messages):
            return {"tool_calls": [{"id": "r1", "name": "refund_order", "args": {"order_id": "A-1001", "amount": 480}}]}
        return f"done: {req.messages[-1].content}"

    tool = define_tool(
        name="refund_order",
        description="Refund an order",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
        },
        execute=refund,
        check_in=True,
    )
    return Agent.create(provider=mock(respond=respond), model="m", decision_ledger=ledger).tool(tool).build()


class _AtTheLine:
    """A ledger that waits for the other process before spending, so the two inserts really race."""

    def __init__(self, inner: DecisionLedger, barrier: Any) -> None:
        self.inner = inner
        self.barrier = barrier

    def spend(self, request_id: str) -> bool:
        self.barrier.wait(timeout=60)
        return self.inner.spend(request_id)

    def is_spent(self, request_id: str) -> bool:
        return self.inner.is_spent(request_id)


def resume_side(
    kind: str, where: str, checkpoint: dict[str, Any], decision: Any, effects: str, barrier: Any, results: Any
) -> None:
    """Resume ``checkpoint`` with ``decision`` through the ledger at ``where``; put what happened on ``results``."""
    inner: DecisionLedger = (
        PostgresDecisionLedger(where, table="race_ledger") if kind == "postgres" else (SQLiteDecisionLedger(where))
    )
    agent = refund_agent(Path(effects), _AtTheLine(inner, barrier))
    try:
        done = asyncio.run(agent.resume(checkpoint, decision))
        results.put(("ran", done.status, str(done.answer)))
    except AgentFootprintError as err:
        results.put(("refused", err.code, str(getattr(err, "reason", ""))))
    except Exception as err:
        results.put(("crashed", type(err).__name__, ""))
