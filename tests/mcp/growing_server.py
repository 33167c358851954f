"""An MCP server on the official SDK whose tool list changes mid-session, with names providers refuse.

``python growing_server.py modern`` announces the change on ``subscriptions/listen`` (mcp 2.x);
``python growing_server.py classic`` sends the classic ``notifications/tools/list_changed``.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

MODE = sys.argv[1] if len(sys.argv) > 1 else "modern"
LONG = "reports." + "quarterly_revenue_by_region_" * 3  # 92 characters
server: MCPServer = MCPServer(name="growing")


@server.tool(name="weather.forecast", description="Forecast for a city.")
def forecast(city: str) -> str:
    return f"forecast for {city}: sun"


@server.tool(name=LONG, description="A tool whose name is longer than 64 characters.")
def long_named() -> str:
    return "long name reached"


def late_echo(text: str) -> str:
    return f"late: {text}"


@server.tool(description="Add the tool late.echo and announce that the list changed.")
async def grow(ctx: Context) -> str:
    server.add_tool(late_echo, name="late.echo", description="Echo, added mid-session.")
    if MODE == "modern":
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    server.run("stdio")
