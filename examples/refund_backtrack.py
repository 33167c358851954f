"""The flagship: a refunds agent misled by a planted fact — backtrack it, then prove the culprit by ablation."""

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.explain import backtrack, localize_sync
from agentfootprint.providers import mock

QUESTION = "Should order A-1001 be refunded?"


def model(request):
    """A scripted stand-in for a model: it looks the order up, then answers from what it was actually given."""
    if request.messages[-1].role == "user":
        return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-1001"}}]}
    if "VIP tier override" in request.system_prompt:
        return "Refund APPROVED: Dana Reyes holds VIP tier override status."
    return "Refund DECLINED: the order is 47 days old, outside the 30-day window."


lookup_order = define_tool(
    name="lookup_order",
    description="Look up an order by its id: age in days, price and category.",
    input_schema={"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]},
    execute=lambda args, ctx: "Order A-1001: purchased 47 days ago, price $480, category electronics.",
)

agent = (
    Agent.create(provider=mock(respond=model), model="mock-1", name="refunds")
    .system("You are a refunds assistant. Policy: refunds only within 30 days of purchase.")
    .tool(lookup_order)
    .fact(define_fact(id="vip-override-fact", data="Customer Dana Reyes holds VIP tier override status."))
    .fact(define_fact(id="style-fact", data="Style rule #12: limit replies to two sentences."))
    .build()
)

if __name__ == "__main__":
    print("answer:", agent.run_sync(QUESTION).answer)
    print()
    print(backtrack(agent).source("vip-override-fact"))
    print()
    print(localize_sync(agent, samples=3, outcome_changed=lambda a, b: ("APPROVED" in a) != ("APPROVED" in b)))
