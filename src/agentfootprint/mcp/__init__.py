"""MCP on the official ``mcp`` SDK (extra ``mcp``): servers as tool providers, and an agent served over MCP.

``mcp_stdio(command, args=[...], env=None)`` / ``mcp_http(url, headers=None)`` go to
``AgentBuilder.tool_provider(p)``; ``mcp_server`` / ``serve_stdio`` / ``mcp_app`` serve an agent.
"""

from agentfootprint.mcp.client import MCPToolProvider, mcp_http, mcp_stdio, result_text
from agentfootprint.mcp.errors import MCPConnectError, MCPExtraMissingError, MCPServerGoneError, MCPToolError
from agentfootprint.mcp.server import mcp_app, mcp_server, serve_stdio

__all__ = [
    "MCPConnectError",
    "MCPExtraMissingError",
    "MCPServerGoneError",
    "MCPToolError",
    "MCPToolProvider",
    "mcp_app",
    "mcp_http",
    "mcp_server",
    "mcp_stdio",
    "result_text",
    "serve_stdio",
]
