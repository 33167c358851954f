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


class Events:
    """A recorder with every hook: each call as a tuple, frames by runtime id (and visit), commits by runtime id."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []

    @staticmethod
    def _norm(arg: Any) -> Any:
        if hasattr(arg, "runtime_stage_id") and hasattr(arg, "visit"):
            if hasattr(arg, "in_branch"):
                return f"{arg.runtime_stage_id}@{arg.namespace or '-'}:{arg.visit}"
            return f"commit {arg.runtime_stage_id}"
        if isinstance(arg, BaseException):
            return f"{type(arg).__name__}: {arg}"
        return arg

    def __getattr__(self, hook: str) -> Any:
        if not hook.startswith("on_"):
            raise AttributeError(hook)
        return lambda *args: self.log.append((hook, *(self._norm(a) for a in args)))


@pytest.fixture
def events() -> Events:
    return Events()
