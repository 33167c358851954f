"""The offline flagship demos behind ``agentfootprint demo`` (no network, no model download)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

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


def run_agent_demo(
    console: Console | None = None, report_path: str = "report.html", save_path: Path | None = None
) -> dict[str, Any]:
    """The flagship story: a wrong answer, its backtrack chain, the ablation proof, and an HTML report."""
    from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
    from agentfootprint.explain import backtrack, localize_sync, report_html, save_recording

    console = console or Console()
    agent = refunds_agent()
    result = agent.run_sync(QUESTION)
    console.rule("[bold]agentfootprint demo: a refunds agent gives a wrong answer")
    console.print(f"[bold]User:[/bold] {QUESTION}")
    console.print(Text.assemble(("Agent: ", "bold"), result.answer or ""), highlight=False)  # wrapped as one line
    console.print("(Policy says 30 days; the order is 47 days old. Something in the context misled the model.)")
    console.rule("Narrative of the run (first lines)")
    for entry in agent.last_narrative()[:12]:
        console.print("  " * entry.depth + entry.text, markup=False, highlight=False)
    console.print("  ...")
    console.rule("Backtrack: every piece of context that reached the final model call")
    bt = backtrack(agent)
    console.print(str(bt), markup=False, highlight=False)
    console.rule("Localize: rank suspects, then prove by ablation (3 seeded reruns each)")
    report = localize_sync(agent, samples=3, outcome_changed=approved_flipped, progress=False)
    console.print(str(report), markup=False, highlight=False)
    culprit = report.confirmed[0] if report.confirmed else None
    if culprit is not None:
        trail = bt.source(culprit.id)
        console.rule(f"[bold red]Culprit: {culprit.kind} '{culprit.id}'")
        if trail is not None:
            for hop in trail.hops:
                where = f" {hop.runtime_stage_id}" if hop.runtime_stage_id else ""
                console.print(f"  {hop.kind.upper():<8}{where} {hop.detail}", markup=False, highlight=False)
    html = report_html(bt, report, snapshot=agent.last_snapshot())
    Path(report_path).write_text(html)
    console.print(f"\nWrote {report_path} (open it in a browser).", markup=False, highlight=False)
    if save_path is not None:
        save_recording(agent, save_path)
        console.print(
            f"Saved the recording to {save_path}; explain it later, with no model: agentfootprint explain {save_path}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    pair = run_pair_demo(console)
    return {"answer": result.answer, "culprit": culprit.id if culprit else None, "report": report_path, **pair}


def run_pair_demo(console: Console) -> dict[str, Any]:
    """Two planted facts that each mislead: no single ablation flips the answer, a culprit set does."""
    from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent_pair
    from agentfootprint.explain import localize_sync

    agent = refunds_agent_pair()
    agent.run_sync(QUESTION)
    console.rule("A planted pair: no single removal flips the answer, both together do")
    report = localize_sync(agent, samples=3, outcome_changed=approved_flipped, progress=False)
    for s in report.suspects:
        console.print(f"  {s.kind} '{s.id}': {s.claim}", markup=False, highlight=False)
    pairs = report.confirmed_sets
    for c in pairs:
        console.print(f"[bold red]Culprit set {{{', '.join(c.ids)}}}[/bold red]", highlight=False)
        console.print(f"  {c.claim}", markup=False, highlight=False)
    console.print(f"  ({report.reruns} seeded reruns in all, the baseline included)", highlight=False)
    return {"culprit_set": list(pairs[0].ids) if pairs else None}
