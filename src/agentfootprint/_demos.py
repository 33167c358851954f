"""The offline flagship demos behind ``agentfootprint demo`` (no network, no model download)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from agentfootprint.flow import FlowChart, causal_chain, decide, flow_chart


def loan_chart() -> FlowChart:
    """A small loan decision: intake → assess → route (decide) → approve | reject → notify."""

    def intake(s: Any) -> None:
        s["applicant"] = s.args.get("name", "anonymous")
        s["credit_score"] = s.args["credit_score"]
        s["monthly_debt"] = s.args.get("monthly_debt", 0)
        s["monthly_income"] = s.args.get("monthly_income", 1)

    def assess(s: Any) -> None:
        s["dti"] = round(s["monthly_debt"] / s["monthly_income"], 2)
        s["risk"] = "high" if s["credit_score"] < 620 or s["dti"] > 0.43 else "low"

    def route(s: Any) -> Any:
        return decide(
            s,
            [
                {"when": {"risk": {"eq": "high"}}, "then": "reject", "label": "High risk"},
                {"when": {"credit_score": {"gte": 620}, "dti": {"lte": 0.43}}, "then": "approve", "label": "Good"},
            ],
            "reject",
        )

    return (
        flow_chart("Intake", intake, id="intake", description="Take in the application")
        .then("Assess", assess, id="assess", description="Assess risk")
        .decider("Route", route, id="route", description="Route by risk")
        .branch("approve", "Approve", lambda s: s.set("decision", "approved"))
        .branch("reject", "Reject", lambda s: s.set("decision", "rejected"))
        .end()
        .then("Notify", lambda s: s.append("letters", f"{s['applicant']}: {s['decision']}"), id="notify")
        .build()
    )


def run_engine_demo(console: Console | None = None) -> None:
    """Run the loan chart, then print its narrative and the causal slice behind the letter it sent."""
    console = console or Console()
    chart = loan_chart()
    result = chart.run_sync(args={"name": "Ann", "credit_score": 700, "monthly_debt": 2600, "monthly_income": 5000})
    console.rule("[bold]Engine demo: a loan decision chart")
    console.print(chart.description, highlight=False)
    console.rule("Narrative")
    console.print(result.narrative_text(), highlight=False, markup=False)
    console.rule("Why was this letter sent? (causal slice from Notify)")
    notify = next(c.runtime_stage_id for c in result.commit_log if c.stage_id == "notify")
    console.print(str(causal_chain(result.snapshot, notify)), highlight=False, markup=False)
    console.print(f"\nFinal decision: [bold]{result.state['decision']}[/bold] ({len(result.commit_log)} commits)")
