from __future__ import annotations

from typing import Any

from agentfootprint.events.model import AgentEvent, EventMeta
from agentfootprint.flow import FlowChart, FlowSnapshot, decide, flow_chart

SENTINEL = "SENTINEL-SECRET-7731"


def loan_chart() -> FlowChart:
    def intake(s: Any) -> None:
        s["applicant"] = "Ada Lovelace"
        s["profile"] = {"score": 58013, "tags": ["a", "b"]}

    def route(s: Any) -> Any:
        return decide(s, [{"when": {"profile": {"ne": None}}, "then": "reject", "label": "Has profile"}], "approve")

    return (
        flow_chart("Intake", intake, id="intake")
        .decider("Route", route, id="route")
        .branch("approve", "Approve", lambda s: s.set("decision", "approved"))
        .branch("reject", "Reject", lambda s: s.set("decision", "rejected"))
        .default("reject")
        .end()
        .then("Notify", lambda s: s.emit("notified", {"to": "Ada Lovelace", "channel": "mail"}), id="notify")
        .build()
    )


def make_events(run_id: str, n: int = 3) -> list[AgentEvent]:
    """Events as the Agent will serve them, deliberately out of seq order."""
    base = 1_700_000_000.0
    events = [
        AgentEvent(
            type="agentfootprint.stream.tool_start",
            payload={"tool_name": "lookup", "call_id": f"c{i}", "arguments": {"query": "weather in paris", "k": 3}},
            meta=EventMeta(run_id=run_id, runtime_stage_id="notify#3", iteration=i, timestamp=base + i, seq=i + 1),
        )
        for i in range(n)
    ]
    return list(reversed(events))


class FakeAgent:
    """Stands in for the Agent: ``last_snapshot()`` and ``last_events()``."""

    def __init__(self, snapshot: FlowSnapshot | None, events: list[AgentEvent] | None = None) -> None:
        self._snapshot = snapshot
        self._events = events or []

    def last_snapshot(self) -> FlowSnapshot | None:
        return self._snapshot

    def last_events(self) -> list[AgentEvent]:
        return list(self._events)
