"""Typed MCP errors: each names the server, never a value a tool was called with."""

from __future__ import annotations

from agentfootprint.errors import AgentFootprintError
from agentfootprint.tools import RunStoppingError

__all__ = ["MCPConnectError", "MCPExtraMissingError", "MCPServerGoneError", "MCPToolError"]


class MCPExtraMissingError(AgentFootprintError, ImportError):
    """The ``mcp`` extra is not installed."""

    code = "ERR_MCP_EXTRA_MISSING"

    def __init__(self) -> None:
        super().__init__("MCP support needs the official SDK: pip install 'agentfootprint[mcp]'")


class MCPConnectError(AgentFootprintError, ConnectionError):
    """The MCP server could not be started or reached (``server`` names it)."""

    code = "ERR_MCP_CONNECT"

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"MCP server '{server}' could not be reached: {reason[:300]}")
        self.server = server


class MCPServerGoneError(RunStoppingError):
    """The MCP server died or closed the connection mid-run: the run fails with this error (record intact)."""

    code = "ERR_MCP_SERVER_GONE"

    def __init__(self, server: str, tool: str | None = None) -> None:
        during = f" during a call of tool '{tool}'" if tool else ""
        super().__init__(f"MCP server '{server}' closed the connection{during}")
        self.server = server
        self.tool = tool


class MCPToolError(AgentFootprintError, RuntimeError):
    """The server answered a tool call with an error; the model reads it as the tool's error result."""

    code = "ERR_MCP_TOOL"

    def __init__(self, server: str, message: str) -> None:
        super().__init__(message[:2000] or f"MCP server '{server}' reported an error")
        self.server = server
