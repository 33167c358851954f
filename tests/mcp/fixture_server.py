"""A small MCP server on the official SDK for the client tests: echo, an error result, structured output, a tool
that kills the server mid-call, and one that changes the tool list (run as ``python fixture_server.py``)."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer

server: MCPServer = MCPServer(name="fixture")
COUNTER = {"lists": 0}


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Two text parts.")
def two_parts() -> list[str]:
    return ["first", "second"]


@server.tool(description="Always fails.")
def broken() -> str:
    raise ValueError("the fixture tool failed on purpose")


@server.tool(description="Weather for a city, as structured content.", structured_output=True)
def weather(city: str) -> dict[str, object]:
    return {"city": city, "celsius": 21}


@server.tool(description="Exit the server process in the middle of the call.")
def die() -> str:
    sys.stdout.flush()
    os._exit(3)


if __name__ == "__main__":
    server.run("stdio")
