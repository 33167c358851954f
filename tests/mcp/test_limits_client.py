"""What an MCP client takes from a hostile server's tool list: capped count and sizes, the rest named with a reason."""

from __future__ import annotations

import warnings
from hashlib import sha256
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.lowlevel import Server

from agentfootprint import Agent
from agentfootprint.mcp import MCPToolProvider, mcp_http, mcp_stdio
from agentfootprint.mcp._client_limits import (
    DEFAULT_MAX_DESCRIPTION_CHARS,
    DEFAULT_MAX_SCHEMA_BYTES,
    DEFAULT_MAX_TOOLS,
    DroppedTool,
    MCPToolsDroppedWarning,
    keep_tools,
)
from agentfootprint.providers import mock
from agentfootprint.tools import ProviderContext

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def spec(name: str, description: str = "d", schema: dict[str, Any] | None = None) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema=schema or OBJECT)


def fake(tools: list[types.Tool], page: int = 1000) -> Server[Any]:
    """A server offering ``tools``, ``page`` per tools/list page (cursor = the next index)."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + page
        return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])

    return Server("fake", on_list_tools=list_tools, on_call_tool=call_tool)


async def listed(provider: MCPToolProvider) -> list[str]:
    try:
        return [t.name for t in await provider.list_tools()]
    finally:
        await provider.aclose()


async def test_5001_tools_with_huge_descriptions_are_capped_and_each_drop_is_named() -> None:
    big = "x" * (5 * 1024 * 1024)
    tools = [spec("huge_0", big), spec("huge_1", big)] + [spec(f"t{i}") for i in range(5001)]
    server = fake(tools)
    provider = MCPToolProvider("fake", lambda: server)
    with pytest.warns(MCPToolsDroppedWarning, match="2 description_too_long, .* over_tool_limit"):
        names = await listed(provider)
    assert names == [f"t{i}" for i in range(DEFAULT_MAX_TOOLS)]
    assert provider.dropped[:2] == (
        DroppedTool("huge_0", "description_too_long"),
        DroppedTool("huge_1", "description_too_long"),
    )
    over = provider.dropped[2:]
    assert {d.reason for d in over} == {"over_tool_limit"}
    assert over[0] == DroppedTool(f"t{DEFAULT_MAX_TOOLS}", "over_tool_limit")
    # paging stops once four times the cap is listed: 2 pages of 1,000, not all 5,003 tools
    assert len(provider.dropped) == 2000 - DEFAULT_MAX_TOOLS


async def test_a_schema_over_the_limit_and_empty_or_duplicate_names_are_dropped_long_or_odd_names_mapped() -> None:
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "y" * 100} for i in range(40)}}
    tools = [spec("ok"), spec("wide", schema=wide), spec("bad name!"), spec("ok"), spec("n" * 500), spec("")]
    provider = MCPToolProvider("fake", lambda: fake(tools), max_schema_bytes=2048)
    with pytest.warns(MCPToolsDroppedWarning):
        names = await listed(provider)
    assert names == [
        "ok",
        "bad_name_-x" + sha256(b"bad name!").hexdigest()[:10],
        "n" * 52 + "-x" + sha256(b"n" * 500).hexdigest()[:10],
    ]
    assert provider.server_names == {"ok": "ok", names[1]: "bad name!", names[2]: "n" * 500}
    assert provider.dropped == (
        DroppedTool("wide", "schema_too_large"),
        DroppedTool("ok", "duplicate_name"),
        DroppedTool("", "invalid_name"),
    )


async def test_a_clean_list_within_the_limits_drops_nothing_and_warns_nothing() -> None:
    provider = MCPToolProvider("fake", lambda: fake([spec("a"), spec("b", "z" * 100)]), max_tools=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert await listed(provider) == ["a", "b"]
    assert provider.dropped == ()


async def test_an_agent_sees_only_the_kept_tools_and_can_call_them() -> None:
    tools = [spec("keep_me"), spec("too_long", "q" * 50)]
    provider = MCPToolProvider("fake", lambda: fake(tools), max_description_chars=10)
    replies = [{"tool_calls": [{"id": "c", "name": "keep_me", "args": {}}]}, "ok"]
    agent = Agent.create(provider=mock(replies=replies)).tool_provider(provider).build()
    with pytest.warns(MCPToolsDroppedWarning):
        result = await agent.run("go")
    assert result.answer == "ok"
    with pytest.warns(MCPToolsDroppedWarning):
        offered = await provider.list(ProviderContext(run_id="r2", iteration=0))
    await provider.aclose()
    assert [t.name for t in offered] == ["keep_me"]
    assert provider.dropped == (DroppedTool("too_long", "description_too_long"),)


def test_defaults_are_documented_values_and_configurable_on_both_factories() -> None:
    assert (DEFAULT_MAX_TOOLS, DEFAULT_MAX_DESCRIPTION_CHARS, DEFAULT_MAX_SCHEMA_BYTES) == (256, 8192, 65536)
    stdio = mcp_stdio("server", max_tools=3, max_description_chars=4, max_schema_bytes=5)
    http = mcp_http("http://localhost/mcp", max_tools=6, max_description_chars=7, max_schema_bytes=8)
    assert (stdio.max_tools, stdio.max_description_chars, stdio.max_schema_bytes) == (3, 4, 5)
    assert (http.max_tools, http.max_description_chars, http.max_schema_bytes) == (6, 7, 8)
    for bad in (0, -1, True):
        with pytest.raises(ValueError):
            mcp_stdio("server", max_tools=bad)


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=40), max_size=30),
    max_tools=st.integers(min_value=1, max_value=10),
    max_desc=st.integers(min_value=1, max_value=30),
)
def test_kept_and_dropped_partition_the_list_within_the_limits(sizes: list[int], max_tools: int, max_desc: int) -> None:
    specs = [spec(f"t{i}", "d" * n) for i, n in enumerate(sizes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept, dropped = keep_tools(
            "s", specs, max_tools=max_tools, max_description_chars=max_desc, max_schema_bytes=999
        )
    assert len(kept) <= max_tools
    assert all(len(t.description or "") <= max_desc and name == t.name for name, t in kept)
    assert sorted([t.name for _, t in kept] + [d.name for d in dropped]) == sorted(t.name for t in specs)
    fitting = [t.name for t in specs if len(t.description or "") <= max_desc]
    assert [t.name for _, t in kept] == fitting[:max_tools]
