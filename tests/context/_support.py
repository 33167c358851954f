"""Shared helpers for the context tests: scripted providers and commit-log readers."""

from __future__ import annotations

from typing import Any

from agentfootprint import define_tool
from agentfootprint.tools import Tool


def call(name: str, args: dict[str, Any] | None = None, call_id: str = "c1") -> dict[str, Any]:
    """A scripted model reply that calls one tool."""
    return {"tool_calls": [{"id": call_id, "name": name, "args": args or {}}]}


def text_tool(name: str, result: str = "ok") -> Tool:
    """A tool that returns a fixed string."""
    return define_tool(
        name=name,
        description=f"The {name} tool",
        input_schema={"type": "object", "properties": {}},
        execute=lambda args, ctx: result,
    )


def records_per_call(agent: Any, key: str) -> list[list[dict[str, Any]]]:
    """The committed ``key`` records as they stood at each call-llm commit, in call order."""
    snap = agent.last_snapshot()
    out: list[list[dict[str, Any]]] = []
    for c in snap.commit_log:
        if c.stage_id == "call-llm" and c.applied:
            out.append([dict(r) for r in snap.value_at(key, c.idx, default=[]) or []])
    return out


def committed_values(agent: Any, key: str) -> list[Any]:
    """Every value written to ``key`` in the last run's commit log, in order."""
    snap = agent.last_snapshot()
    return [w.value for c in snap.commit_log for w in c.writes if w.path == key]
