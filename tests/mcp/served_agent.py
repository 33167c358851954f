"""An agent factory for the MCP server tests (``agentfootprint mcp tests.mcp.served_agent:make``)."""

from __future__ import annotations

from agentfootprint import Agent
from agentfootprint.providers import LLMRequest, mock


def _respond(request: LLMRequest) -> str:
    return f"You said: {request.messages[-1].content}"


def make() -> Agent:
    return Agent.create(provider=mock(respond=_respond), name="concierge").system("Answer briefly.").build()
