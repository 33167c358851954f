"""A support-desk Graph: triage → a specialist → review, with a cycle back when the reviewer asks for more.

The billing specialist carries a planted fact ("VIP customers are refunded at any age") that turns a refund the
policy declines into an approval. Backtrack walks from the reviewer's answer back through the hand-offs to that
fact; localization reruns the whole graph without each suspect and confirms it (offline, scripted models)."""

from agentfootprint import Agent, Graph, define_fact, tool
from agentfootprint.compose import END
from agentfootprint.explain import backtrack, localize_sync
from agentfootprint.providers import LLMRequest, mock


@tool
def lookup_order(order_id: str) -> dict:
    """Look up an order's age and the customer's tier."""
    return {"order_id": order_id, "age_days": 47, "tier": "VIP"}


def triage_model(request: LLMRequest) -> str:
    ticket = request.messages[-1].content
    return ("billing: " if "refund" in ticket.lower() else "tech: ") + ticket


def billing_model(request: LLMRequest) -> object:
    last = request.messages[-1]
    if last.role == "user":
        return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"order_id": "A-1001"}}]}
    vip = "refunded at any age" in request.system_prompt
    verdict = "APPROVE the refund of A-1001 (VIP customer)" if vip else "DECLINE the refund of A-1001 (past 30 days)"
    asked_age = "order's age" in request.messages[0].content
    return verdict + (", order is 47 days old" if asked_age else "")


def tech_model(request: LLMRequest) -> str:
    return "Reset the router, then sign in again."


def review_model(request: LLMRequest) -> str:
    case = request.messages[-1].content
    if "[billing]" in case and "days old" not in case:
        return "REVISE billing: state the order's age"
    return "OK: " + case.split("\n")[-1]


triage = Agent.create(provider=mock(respond=triage_model), model="mock-1", name="triage").build()
billing = (
    Agent.create(provider=mock(respond=billing_model), model="mock-1", name="billing")
    .system("You decide refunds.")
    .fact(define_fact(id="refund-policy", data="Refunds are allowed within 30 days of delivery."))
    .fact(define_fact(id="vip-rule", data="VIP customers are refunded at any age."))
    .fact(define_fact(id="tone", data="Be warm and brief."))
    .tool(lookup_order)
    .build()
)
tech = Agent.create(provider=mock(respond=tech_model), model="mock-1", name="tech").build()
review = Agent.create(provider=mock(respond=review_model), model="mock-1", name="review").build()


def specialist_message(values: dict) -> str:
    ticket = values["triage"].split(": ", 1)[-1]
    note = values.get("review")
    return ticket if note is None else f"{ticket}\nReviewer: {note}"


desk = (
    Graph.create("support-desk")
    .node("triage", triage)
    .node("billing", billing, inputs=["triage", "review"], message=specialist_message)
    .node("tech", tech, inputs=["triage", "review"], message=specialist_message)
    .node("review", review, inputs=["triage", "billing", "tech"])
    .edge("triage", "billing", when=lambda out: out.startswith("billing"), label="a billing ticket")
    .edge("triage", "tech", label="anything else")
    .edge("billing", "review")
    .edge("tech", "review")
    .edge("review", "billing", when=lambda out: out.startswith("REVISE billing"), label="billing must revise")
    .edge("review", "tech", when=lambda out: out.startswith("REVISE tech"), label="tech must revise")
    .edge("review", END, label="approved")
    .max_steps(8)
    .build()
)


def approved(before: str, after: str) -> bool:
    return ("APPROVE" in before) != ("APPROVE" in after)


if __name__ == "__main__":
    result = desk.run_sync("Please refund order A-1001.", identity={"tenant": "acme"})
    print("answer:", result.answer)
    print("path:", " -> ".join(desk.last_path()))
    trail = backtrack(desk).source("vip-rule")
    assert trail is not None
    print("how the vip-rule fact reached the answer:")
    print(trail)
    print(localize_sync(desk, samples=2, outcome_changed=approved, progress=False))
