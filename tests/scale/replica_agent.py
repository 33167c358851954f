"""The agent factory each replica serves (``replica_agent:make``): answers name the replica, "slow" takes a while."""

from __future__ import annotations

import asyncio
import os

from agentfootprint import Agent, ask_human
from agentfootprint.providers import LLMRequest, mock

REPLICA = os.environ.get("AF_REPLICA", "?")
SLOW_SECONDS = 1.5


async def _respond(request: LLMRequest) -> str | dict[str, object]:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Replica {REPLICA}: you chose {last.content}."
    if last.content == "ask me":
        return {"tool_calls": [{"id": "ask-1", "name": "ask_human", "args": {"question": "Tea or coffee?"}}]}
    if last.content == "slow":
        await asyncio.sleep(SLOW_SECONDS)
    return f"Replica {REPLICA}: {last.content} done."


PROVIDER = mock(respond=_respond)


def make() -> Agent:
    """One agent per turn on this replica's shared mock."""
    return Agent.create(provider=PROVIDER).tool(ask_human).build()
