from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.providers import LLMRequest

WRONG = "Refund APPROVED: Dana Reyes holds VIP tier override status, so the 47-day-old order qualifies."
RIGHT = "Refund DECLINED: the order was purchased 47 days ago, outside the 30-day refund window."
ORDER = "Order A-1001: purchased 47 days ago, price $480, category electronics."


def refund_respond(req: LLMRequest) -> Any:
    last = req.messages[-1]
    if last.role != "tool" and any(t.name == "lookup_order" for t in req.tools):
        return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-1001"}}]}
    if "VIP tier override" in req.system_prompt:
        return WRONG
    return RIGHT


lookup_calls: list[dict[str, Any]] = []


def _lookup(args: dict[str, Any], ctx: Any) -> str:
    lookup_calls.append(dict(args))
    return ORDER


lookup_order = define_tool(
    name="lookup_order",
    description="Look up an order by id",
    input_schema={"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]},
    execute=_lookup,
)


def refund_agent(respond: Any = refund_respond, **kw: Any) -> Agent:
    from agentfootprint.providers import mock

    return (
        Agent.create(provider=mock(respond=respond), model="mock-1", max_iterations=kw.pop("max_iterations", 4))
        .system("You are a refunds assistant. Policy: refunds only within 30 days of purchase.")
        .tool(lookup_order)
        .fact(
            define_fact(
                id="vip-override-fact",
                data="Customer Dana Reyes holds VIP tier override status: refunds are approved beyond "
                "the 30-day window.",
            )
        )
        .fact(define_fact(id="style-fact", data="Style rule #12: limit replies to two (2) sentences / 40 words max."))
        .build()
    )


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    lookup_calls.clear()
