"""A server that adds a tool mid-session: the next iteration offers it, whether the server announces the change on
``subscriptions/listen`` (mcp 2.x) or with the classic ``notifications/tools/list_changed`` (pre-2026 servers)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.mcp import MCPToolProvider, mcp_stdio
from agentfootprint.mcp._names import model_tool_name
from agentfootprint.providers import LLMRequest, mock

pytestmark = pytest.mark.integration

SERVER = Path(__file__).with_name("growing_server.py")
LATE = model_tool_name("late.echo")


def growing(mode: str) -> MCPToolProvider:
    provider = mcp_stdio(sys.executable, [str(SERVER), mode], name="growing", timeout_s=30)
    if mode == "classic":
        provider._mode = "legacy"  # the initialize handshake, as a pre-2026 server speaks it
    return provider


@pytest.mark.parametrize("mode", ["modern", "classic"])
async def test_a_tool_added_mid_run_is_offered_on_the_next_iteration_and_called(mode: str) -> None:
    provider = growing(mode)
    offered: list[list[str]] = []

    def respond(request: LLMRequest) -> Any:
        offered.append(sorted(t.name for t in request.tools))
        if len(offered) == 1:
            return {"tool_calls": [{"id": "g", "name": "grow", "args": {}}]}
        if len(offered) == 2:
            return {"tool_calls": [{"id": "l", "name": LATE, "args": {"text": "hi"}}]}
        return "done"

    agent = Agent.create(provider=mock(respond=respond)).tool_provider(provider).build()
    assert (await agent.run("go")).answer == "done"
    assert LATE not in offered[0] and LATE in offered[1] and LATE in offered[2]
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [(r["content"], r["is_error"]) for r in results] == [("grown", False), ("late: hi", False)]
    assert provider.list_calls == 2  # once at the start, once after the change
    assert provider.server_names[LATE] == "late.echo"


async def test_without_a_change_the_list_is_read_once_per_run() -> None:
    provider = growing("modern")
    replies = [{"tool_calls": [{"id": "f", "name": model_tool_name("weather.forecast"), "args": {"city": "Oslo"}}]}]
    agent = Agent.create(provider=mock(replies=[*replies, "done"])).tool_provider(provider).build()
    assert (await agent.run("go")).answer == "done"
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [r["content"] for r in results] == ["forecast for Oslo: sun"]
    assert provider.list_calls == 1
