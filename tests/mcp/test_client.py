"""MCP servers as tool providers: our fixture server on the SDK, and reference servers no one here wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.explain import backtrack
from agentfootprint.mcp import MCPConnectError, MCPServerGoneError, mcp_http, mcp_stdio, result_text
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import ProviderContext
from tests.mcp.conftest import FIXTURE, git, installed

pytestmark = pytest.mark.integration


def fixture() -> Any:
    return mcp_stdio(sys.executable, [str(FIXTURE)], name="fixture")


async def test_tools_keep_their_names_and_schemas_and_results_reach_the_model_as_text() -> None:
    provider = fixture()
    replies = [
        {
            "tool_calls": [
                {"id": "a", "name": "echo", "args": {"text": "hi"}},
                {"id": "b", "name": "two_parts", "args": {}},
                {"id": "c", "name": "broken", "args": {}},
                {"id": "d", "name": "echo", "args": {"text": 5}},
            ]
        },
        "done",
    ]
    seen: list[LLMRequest] = []

    def respond(req: LLMRequest) -> Any:
        seen.append(req)
        return replies[len(seen) - 1]

    agent = Agent.create(provider=mock(respond=respond)).tool_provider(provider).build()
    await agent.run("go")
    echo = next(t for t in seen[0].tools if t.name == "echo")
    assert echo.description == "Echo the text back." and echo.input_schema["required"] == ["text"]
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [(r["content"], r["is_error"]) for r in results[:2]] == [("echo: hi", False), ("first\nsecond", False)]
    assert results[2]["is_error"] is True and results[2]["content"].startswith("Error: tool broken raised MCPToolError")
    assert results[3]["error_code"] == "ERR_INVALID_TOOL_ARGS"  # validated against the server's schema, never sent
    assert provider.list_calls == 1  # listed once per run


async def test_a_server_that_dies_mid_run_fails_the_run_naming_it_with_the_record_intact() -> None:
    replies = [
        {"tool_calls": [{"id": "a", "name": "echo", "args": {"text": "x"}}, {"id": "b", "name": "die", "args": {}}]}
    ]
    agent = Agent.create(provider=mock(replies=replies)).tool_provider(fixture()).build()
    with pytest.raises(MCPServerGoneError) as info:
        await agent.run("go")
    assert info.value.server == "fixture" and info.value.tool == "die" and info.value.code == "ERR_MCP_SERVER_GONE"
    assert info.value.checkpoint is not None  # type: ignore[attr-defined]
    log = agent.last_snapshot().commit_log  # type: ignore[union-attr]
    assert log[-1].stage_id == "tool-calls" and log[-1].failed is True


async def test_listed_once_per_run_and_again_on_the_next_run() -> None:
    provider = fixture()
    replies = [{"tool_calls": [{"id": "a", "name": "echo", "args": {"text": "1"}}]}, "one", "two"]
    agent = Agent.create(provider=mock(replies=replies)).tool_provider(provider).build()
    await agent.run("first")
    await agent.run("second")
    assert provider.list_calls == 2


async def test_an_unreachable_server_is_a_typed_error_naming_it() -> None:
    provider = mcp_stdio(sys.executable, ["-c", "import sys; sys.exit(1)"], name="broken-server", timeout_s=10)
    with pytest.raises(MCPConnectError, match="broken-server"):
        await provider.list(ProviderContext(run_id="r"))
    with pytest.raises(ValueError):
        mcp_stdio("")
    with pytest.raises(ValueError):
        mcp_http("ftp://x")


def test_result_text_joins_text_and_falls_back_to_structured_json() -> None:
    from mcp.types import CallToolResult, TextContent

    both = CallToolResult(content=[TextContent(type="text", text="a"), TextContent(type="text", text="b")])
    assert result_text(both) == "a\nb"
    only = CallToolResult(content=[], structured_content={"temp": 21})
    assert result_text(only) == json.dumps({"temp": 21})


async def test_mcp_server_time_as_a_tool_source_backtracked_and_ablatable() -> None:
    """The reference server mcp-server-time: its result is a backtrack source of kind tool, id = tool name."""
    command = installed("py/bin/mcp-server-time")
    call = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}

    def respond(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "t1", "name": "convert_time", "args": call}]}
        data = json.loads(req.messages[-1].content)
        return f"It is {data['target']['datetime'][11:16]} in Tokyo."

    agent = (
        Agent.create(provider=mock(respond=respond))
        .tool_provider(mcp_stdio(command, ["--local-timezone", "UTC"]))
        .build()
    )
    result = await agent.run("09:30 UTC in Tokyo?")
    assert result.answer == "It is 18:30 in Tokyo."
    bt = backtrack(agent)
    source = next(s for s in bt.sources if s.kind == "tool" and s.id == "convert_time")
    assert "Asia/Tokyo" in source.text
    assert agent.source_ids()["convert_time"] == "tool" and "convert_time" in {
        t.name for t in agent.config.tools
    } | set(agent.without("convert_time").config.ablated)


async def test_mcp_server_git_reads_a_repository(tmp_path: Path) -> None:
    """The reference server mcp-server-git over a fresh repository."""
    command = installed("py/bin/mcp-server-git")
    g = git()
    subprocess.run([g, "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "notes.txt").write_text("hello")
    replies = [{"tool_calls": [{"id": "s", "name": "git_status", "args": {"repo_path": str(tmp_path)}}]}, "status read"]
    agent = (
        Agent.create(provider=mock(replies=replies))
        .tool_provider(mcp_stdio(command, ["--repository", str(tmp_path)]))
        .build()
    )
    await agent.run("status?")
    content = agent.last_snapshot().state["tool_results"][0]["content"]  # type: ignore[union-attr]
    assert "notes.txt" in content


async def test_server_everything_from_npm_echo_sum_and_structured_content() -> None:
    """The npm reference server @modelcontextprotocol/server-everything."""
    command = installed("node/node_modules/.bin/mcp-server-everything")
    provider = mcp_stdio(command, [], name="everything")
    replies = [
        {
            "tool_calls": [
                {"id": "e", "name": "echo", "args": {"message": "ping"}},
                {"id": "s", "name": "get-sum", "args": {"a": 2, "b": 3}},
                {"id": "x", "name": "get-structured-content", "args": {"location": "New York"}},
            ]
        },
        "ok",
    ]
    agent = Agent.create(provider=mock(replies=replies)).tool_provider(provider).build()
    await agent.run("go")
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert results[0]["content"] == "Echo: ping"
    assert "5" in results[1]["content"] and results[2]["is_error"] is False and results[2]["content"]
