"""Scripted agents for the run-integrity tests: a consent-gated refund, an ask_human pause, counted side effects."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import Tool


class Effects:
    """What really happened: tool executions and model calls, counted."""

    def __init__(self) -> None:
        self.refunds: list[dict[str, Any]] = []
        self.lookups: list[dict[str, Any]] = []
        self.contexts: list[Any] = []
        self.model_calls = 0


def refund_tool(fx: Effects) -> Tool:
    def run(args: dict[str, Any], ctx: Any) -> str:
        fx.refunds.append(dict(args))
        fx.contexts.append(ctx)
        return f"refunded {args['amount']}"

    return define_tool(
        name="refund_order",
        description="Refund an order",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
        },
        execute=run,
        check_in=True,
    )


def lookup_tool(fx: Effects) -> Tool:
    def run(args: dict[str, Any], ctx: Any) -> str:
        fx.lookups.append(dict(args))
        fx.contexts.append(ctx)
        return json.dumps({"order": args.get("order_id"), "card": "4111-1111-1111-1111", "total": 480})

    return define_tool(
        name="lookup_order",
        description="Look up an order",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        execute=run,
    )


def refund_script(fx: Effects, *, amount: int = 480) -> Any:
    """Look up A-1001, then ask to refund it (consent), then answer."""

    def respond(req: LLMRequest) -> Any:
        fx.model_calls += 1
        answered = {m.tool_call_id for m in req.messages if m.role == "tool"}
        if "l1" not in answered:
            return {"tool_calls": [{"id": "l1", "name": "lookup_order", "args": {"order_id": "A-1001"}}]}
        if "r1" not in answered:
            return {
                "tool_calls": [{"id": "r1", "name": "refund_order", "args": {"order_id": "A-1001", "amount": amount}}]
            }
        return f"done: {req.messages[-1].content}"

    return respond


def refund_agent(fx: Effects, **create: Any) -> Agent:
    builder = Agent.create(provider=mock(respond=refund_script(fx)), model="m", **create)
    return builder.tool(lookup_tool(fx)).tool(refund_tool(fx)).build()


def ask_script(fx: Effects, *, question: str = "Which order?") -> Any:
    """Look up an order and ask a person in one batch, then answer with what the person said."""

    def respond(req: LLMRequest) -> Any:
        fx.model_calls += 1
        if req.messages[-1].role == "user":
            return {
                "tool_calls": [
                    {"id": "l1", "name": "lookup_order", "args": {"order_id": "A-1001"}},
                    {"id": "h1", "name": "ask_human", "args": {"question": question}},
                ]
            }
        return f"answer: {req.messages[-1].content}"

    return respond


def ask_agent(fx: Effects, **create: Any) -> Agent:
    builder = Agent.create(provider=mock(respond=ask_script(fx)), model="m", **create)
    return builder.tool(lookup_tool(fx)).tool(ask_human).build()


def chat_agent(fx: Effects, **create: Any) -> Agent:
    def respond(req: LLMRequest) -> Any:
        fx.model_calls += 1
        return f"reply {len(req.messages)}"

    return Agent.create(provider=mock(respond=respond), model="m", **create).tool(lookup_tool(fx)).build()


def roundtrip(value: Any) -> Any:
    return json.loads(json.dumps(value))
