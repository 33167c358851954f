"""An agent served over MCP: listed and called by the mcp SDK's client, by the MCP Inspector CLI, and over
streamable HTTP by our own mcp_http provider."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from typing import Any

import pytest

from agentfootprint import Agent, ask_human
from agentfootprint.mcp import mcp_app, mcp_http, mcp_server
from agentfootprint.providers import mock
from agentfootprint.tools import ProviderContext
from tests.mcp.conftest import ROOT, installed
from tests.mcp.served_agent import make

pytestmark = pytest.mark.integration
SERVE = [sys.executable, "-m", "agentfootprint", "mcp", "tests.mcp.served_agent:make"]


async def test_the_sdk_client_lists_one_tool_per_agent_and_calls_it_over_stdio() -> None:
    from mcp import Client, StdioServerParameters

    # this process's environment (the SDK's default drops it: the server would write bytecode into the checkout)
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(ROOT), env=dict(os.environ))
    async with Client(params) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["concierge"]
        schema = listed.tools[0].input_schema
        assert schema["required"] == ["message"] and schema["properties"]["message"]["type"] == "string"
        result = await client.call_tool("concierge", {"message": "where is my parcel?"})
    assert result.is_error is False
    assert [c.text for c in result.content] == ["You said: where is my parcel?"]  # type: ignore[union-attr]


async def test_a_turn_that_pauses_answers_with_a_tool_error_saying_so() -> None:
    from mcp import Client

    def pausing() -> Agent:
        replies = [{"tool_calls": [{"id": "q", "name": "ask_human", "args": {"question": "Which order?"}}]}]
        return Agent.create(provider=mock(replies=replies), name="asker").tool(ask_human).build()

    async with Client(mcp_server(pausing)) as client:
        result = await client.call_tool("asker", {"message": "refund"})
    assert result.is_error is True
    assert "paused to ask a person: Which order?" in result.content[0].text  # type: ignore[union-attr]


def _inspector(*args: str) -> Any:
    cli = installed("node/node_modules/.bin/mcp-inspector")
    out = subprocess.run(
        [cli, "--cli", *SERVE, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout)


def test_the_mcp_inspector_cli_lists_and_calls_our_server() -> None:
    listed = _inspector("--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == ["concierge"]
    called = _inspector("--method", "tools/call", "--tool-name", "concierge", "--tool-arg", "message=hello there")
    assert called == {"content": [{"type": "text", "text": "You said: hello there"}], "isError": False}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_streamable_http_app_reached_by_our_mcp_http_provider() -> None:
    import uvicorn

    port = _free_port()
    config = uvicorn.Config(mcp_app(make), host="127.0.0.1", port=port, log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.02)
        provider = mcp_http(f"http://127.0.0.1:{port}/mcp", headers={"X-Team": "ops"})
        tools = await provider.list(ProviderContext(run_id="r"))
        assert [t.name for t in tools] == ["concierge"]
        assert await provider.call("concierge", {"message": "status"}) == "You said: status"
        await provider.aclose()
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
