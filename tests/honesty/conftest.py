"""Shared scripted agents for the honesty tests: deterministic mock providers, one lookup tool, one consent tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentfootprint import Agent, define_tool
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import Tool

ORDER = "Order A-1001: price $480, customer Dana Reyes, placed 2024-03-05."


class Calls:
    """Counts tool executions and keeps every request the provider saw."""

    def __init__(self) -> None:
        self.lookups: list[dict[str, Any]] = []
        self.refunds: list[dict[str, Any]] = []
        self.requests: list[LLMRequest] = []


@pytest.fixture
def calls() -> Calls:
    return Calls()


def lookup_tool(calls: Calls, result: str = ORDER, *, error: bool = False) -> Tool:
    def run(args: dict[str, Any]) -> str:
        calls.lookups.append(dict(args))
        if error:
            raise RuntimeError("order service unavailable")
        return result

    return define_tool(
        name="lookup_order",
        description="Look up an order by id",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        execute=run,
    )


def refund_tool(calls: Calls, check_in: Any = True) -> Tool:
    def run(args: dict[str, Any]) -> dict[str, Any]:
        calls.refunds.append(dict(args))
        return {"refunded": args.get("amount"), "order": args.get("order_id")}

    return define_tool(
        name="refund_order",
        description="Refund an order",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
        },
        execute=run,
        check_in=check_in,
    )


def has_tool_result(req: LLMRequest, call_id: str) -> bool:
    return any(m.role == "tool" and m.tool_call_id == call_id for m in req.messages)


def lookup_then(final: str | Callable[[LLMRequest], Any], calls: Calls) -> Callable[[LLMRequest], Any]:
    """A model that looks up order A-1001, then answers ``final`` (a text or a function of the request)."""

    def respond(req: LLMRequest) -> Any:
        calls.requests.append(req)
        if not has_tool_result(req, "t1"):
            return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"order_id": "A-1001"}}]}
        return final(req) if callable(final) else final

    return respond


def lookup_agent(
    calls: Calls,
    final: str | Callable[[LLMRequest], Any],
    *,
    posture: str | None = "assist",
    result: str = ORDER,
    error: bool = False,
    **kw: Any,
) -> Agent:
    builder = (
        Agent.create(provider=mock(respond=lookup_then(final, calls)), model="mock-1", **kw)
        .system("You answer questions about orders.")
        .tool(lookup_tool(calls, result, error=error))
    )
    if posture is not None:
        builder = builder.names_and_numbers_from_evidence(posture)  # type: ignore[arg-type]
    return builder.build()


def refund_respond(calls: Calls, final: str = "Refunded $480 for order A-1001.") -> Callable[[LLMRequest], Any]:
    """A model that looks up the order, asks to refund it (a check-in tool), then answers."""

    def respond(req: LLMRequest) -> Any:
        calls.requests.append(req)
        if not has_tool_result(req, "t1"):
            return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"order_id": "A-1001"}}]}
        if not has_tool_result(req, "t2"):
            return {"tool_calls": [{"id": "t2", "name": "refund_order", "args": {"order_id": "A-1001", "amount": 480}}]}
        last = req.messages[-1]
        if last.role == "tool" and last.content.startswith("Declined"):
            return "I did not refund order A-1001: the refund was declined."
        return final

    return respond


def refund_agent(
    calls: Calls, *, check_in: Any = True, permission: Any = None, redact_patterns: tuple[str, ...] = ()
) -> Agent:
    builder = Agent.create(provider=mock(respond=refund_respond(calls)), model="mock-1")
    if permission is not None:
        builder = builder.permission(permission)
    if redact_patterns:
        builder = builder.redact(patterns=redact_patterns)
    return builder.tool(lookup_tool(calls)).tool(refund_tool(calls, check_in)).build()
