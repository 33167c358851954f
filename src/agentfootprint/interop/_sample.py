"""A small GenAI-convention trace to try the import on: the refunds desk of docs/interop.md, as an OTLP/JSON mapping."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint.interop._spans import _to_attributes

_TRACE = "5a" * 16
_SYSTEM = [{"type": "text", "content": "You are the refunds desk.\n\nCite the order record."}]
_TOOLS = [{"type": "function", "name": "lookup_order", "description": "Look an order up"}]
_ASK = {"role": "user", "parts": [{"type": "text", "content": "Can order 7 be refunded?"}]}
_CALL = {
    "role": "assistant",
    "parts": [{"type": "tool_call", "id": "c1", "name": "lookup_order", "arguments": {"id": 7}}],
}
_FOUND = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "order 7: final sale"}]}
_ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "No: order 7 was a final sale."}]}


def _span(span_id: str, parent: str | None, name: str, start: int, attributes: dict[str, Any]) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": _TRACE,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": str(1_767_225_600_000_000_000 + start * 1_000_000),
        "endTimeUnixNano": str(1_767_225_600_000_000_000 + (start + 1) * 1_000_000),
        "attributes": _to_attributes(attributes),
        "events": [],
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def _chat(span_id: str, start: int, inputs: list[dict[str, Any]], output: dict[str, Any]) -> dict[str, Any]:
    return _span(
        span_id,
        "a1" * 8,
        "chat gpt-4o-mini",
        start,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.system_instructions": json.dumps(_SYSTEM),
            "gen_ai.tool.definitions": json.dumps(_TOOLS),
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps([output]),
        },
    )


def sample_trace() -> dict[str, Any]:
    """The refunds desk's trace (an agent, two chat spans, one tool span; its tool result misleads the answer) as a
    fresh OTLP/JSON mapping: what docs/interop.md's first program traces by hand, for ``import_trace`` to read."""
    agent = _span("a1" * 8, None, "invoke_agent refunds", 0, {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "refunds",
    })  # fmt: skip
    tool = _span("c3" * 8, "a1" * 8, "execute_tool lookup_order", 2, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup_order",
        "gen_ai.tool.call.id": "c1",
    })  # fmt: skip
    spans = [_chat("b2" * 8, 1, [_ASK], _CALL), tool, _chat("d4" * 8, 3, [_ASK, _CALL, _FOUND], _ANSWER), agent]
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


__all__ = ["sample_trace"]
