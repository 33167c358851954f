"""An agent factory to serve over AG-UI: `agentfootprint serve examples.serve_agent:make_agent`."""

from agentfootprint import Agent, ask_human
from agentfootprint._flagship import SYSTEM, lookup_order_tool, scripted_model
from agentfootprint.providers import mock


def make_agent() -> Agent:
    """A fresh agent per turn; the host keeps the conversation and any pause server-side."""
    return (
        Agent.create(provider=mock(respond=scripted_model), model="mock-1", name="refunds")
        .system(SYSTEM)
        .tool(lookup_order_tool())
        .tool(ask_human)
        .build()
    )


if __name__ == "__main__":
    from agentfootprint.hosting import ag_ui_app

    app = ag_ui_app(make_agent)
    print("ASGI app ready:", type(app).__name__, "- run it with uvicorn or `agentfootprint serve`")
