"""The agent factory the uvicorn test serves (``agui_served:make``): a mock that answers, or asks first."""

from __future__ import annotations

from agentfootprint import Agent, ask_human
from agentfootprint.providers import LLMRequest, mock


def _respond(request: LLMRequest) -> str | dict[str, object]:
    last = request.messages[-1]
    if last.role == "tool":
        return f"You chose {last.content}."
    if last.content == "ask me":
        return {"tool_calls": [{"id": "ask-1", "name": "ask_human", "args": {"question": "Tea or coffee?"}}]}
    return "Hello from uvicorn, streamed word by word."


PROVIDER = mock(respond=_respond)


def make() -> Agent:
    """One agent per turn on the shared mock."""
    return Agent.create(provider=PROVIDER).tool(ask_human).build()
