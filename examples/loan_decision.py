"""A loan decision chart: print the narrative and why the applicant was rejected."""

from agentfootprint.flow import decide, flow_chart, slice_for_key


def assess(s):
    s["risk"] = "high" if s["credit_score"] < 620 else "low"


def route(s):
    return decide(s, [{"when": {"risk": {"eq": "high"}}, "then": "reject", "label": "High risk"}], "approve")


chart = (
    flow_chart("Assess", assess, id="assess")
    .decider("Route", route, id="route")
    .branch("approve", "Approve", lambda s: s.set("decision", "approved"))
    .branch("reject", "Reject", lambda s: s.set("decision", "rejected"))
    .end()
    .build()
)

if __name__ == "__main__":
    result = chart.run_sync({"credit_score": 580})
    print(result.narrative_text())
    print(slice_for_key(result.snapshot, "decision"))
