"""An agent factory to serve over AG-UI: `agentfootprint serve examples.serve_agent:make_agent`."""

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.providers import mock


def model(request):
    """A scripted stand-in for a model: look the order up, then answer from the tool result."""
    if request.messages[-1].role == "user":
        return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-1001"}}]}
    return "Refund DECLINED: the order is 47 days old, outside the 30-day window."


lookup_order = define_tool(
    name="lookup_order",
    description="Look up an order by its id.",
    input_schema={"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]},
    execute=lambda args, ctx: "Order A-1001: purchased 47 days ago.",
)


def make_agent() -> Agent:
    """A fresh agent per turn; the host keeps the conversation and any pause server-side."""
    return (
        Agent.create(provider=mock(respond=model), model="mock-1", name="refunds")
        .system("You are a refunds assistant. Policy: refunds only within 30 days of purchase.")
        .tool(lookup_order)
        .tool(ask_human)
        .build()
    )


if __name__ == "__main__":
    from agentfootprint.hosting import ag_ui_app

    app = ag_ui_app(make_agent)
    print("ASGI app ready:", type(app).__name__, "- run it with uvicorn or `agentfootprint serve`")
