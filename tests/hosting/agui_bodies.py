"""Builders for AG-UI request bodies and a one-call pipeline (bytes → refusal or plan) used by the hosting tests."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint.hosting import (
    HeldThread,
    RequestFacts,
    TurnPlan,
    TurnRules,
    WireRequestRefusal,
    plan_turn,
    read_request,
)
from agentfootprint.hosting._body import parse_json_body
from agentfootprint.hosting.request import RequestReader


def user(mid: str = "m1", content: Any = "hello") -> dict[str, Any]:
    """A user message."""
    return {"id": mid, "role": "user", "content": content}


def assistant(
    mid: str = "a1", content: str | None = "sure", calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An assistant message, optionally with tool calls."""
    msg: dict[str, Any] = {"id": mid, "role": "assistant", "content": content}
    if calls is not None:
        msg["toolCalls"] = calls
    return msg


def call(cid: str, name: str = "pick_color", arguments: str = "{}") -> dict[str, Any]:
    """An assistant tool call."""
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_msg(mid: str, call_id: str, content: Any = "ok") -> dict[str, Any]:
    """A tool message answering ``call_id``."""
    return {"id": mid, "role": "tool", "toolCallId": call_id, "content": content}


def body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A RunAgentInput body (defaults: thread t1, run r1, one user message)."""
    out: dict[str, Any] = {"threadId": "t1", "runId": "r1", "messages": list(messages) or [user()]}
    out.update(fields)
    return out


def run(
    value: dict[str, Any] | bytes | str,
    held: HeldThread | None = None,
    rules: TurnRules | None = None,
    reader: RequestReader | None = None,
    headers: dict[str, str] | None = None,
) -> TurnPlan:
    """Bytes (or a body) → parse → read → plan, as the SSE app will."""
    raw = value if isinstance(value, bytes | str) else json.dumps(value).encode()
    facts = RequestFacts(body=parse_json_body(raw), headers=headers or {})
    turn = read_request(reader, facts)
    return plan_turn(turn, held or HeldThread(), rules or TurnRules.build(), headers=facts.headers)


def refusal_of(value: dict[str, Any] | bytes | str, **kwargs: Any) -> WireRequestRefusal:
    """The refusal the pipeline raises for ``value`` (fails the test if it plans instead)."""
    try:
        run(value, **kwargs)
    except WireRequestRefusal as refusal:
        return refusal
    raise AssertionError("expected a WireRequestRefusal")
