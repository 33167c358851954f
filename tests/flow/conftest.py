from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import FlowChart, decide, flow_chart


def loan_chart() -> FlowChart:
    def intake(s: Any) -> None:
        s["applicant"] = s.args.get("name", "anon")

    def assess(s: Any) -> None:
        s["risk"] = "high" if s["credit_score"] < 600 else "low"

    def route(s: Any) -> Any:
        return decide(s, [{"when": {"risk": {"eq": "high"}}, "then": "reject", "label": "High risk"}], "approve")

    return (
        flow_chart("Intake", intake, id="intake")
        .then("Assess", assess, id="assess", description="Assess risk")
        .decider("Route", route, id="route")
        .branch("approve", "Approve", lambda s: s.set("decision", "approved"))
        .branch("reject", "Reject", lambda s: s.set("decision", "rejected"))
        .default("reject")
        .end()
        .then("Notify", lambda s: s.append("log", f"sent {s['decision']}"), id="notify")
        .build()
    )


@pytest.fixture
def loan() -> FlowChart:
    return loan_chart()
