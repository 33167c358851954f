"""An agent served over MCP: one tool per agent, named after it, taking ``{"message": str}``.

``mcp_server(agent_factory)`` is an ``mcp`` SDK server whose tool runs one turn on a fresh agent from the factory
and answers with the agent's answer as text; ``serve_stdio(factory)`` serves it on stdin/stdout (what
``agentfootprint mcp module:factory`` runs) and ``mcp_app(factory)`` is the streamable-HTTP ASGI app to mount
beside the AG-UI app. A turn that pauses, or fails, answers with a tool error that says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentfootprint.mcp._sdk import sdk

if TYPE_CHECKING:
    from agentfootprint.agent import Agent

__all__ = ["mcp_app", "mcp_server", "serve_stdio"]

AgentFactory = Callable[[], "Agent"]


def mcp_server(agent_factory: AgentFactory, *, description: str | None = None) -> Any:
    """An ``mcp`` server (``MCPServer``) with one tool: the agent, by its name, taking ``message``."""
    sdk()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as _TurnRefused  # its message reaches the client

    from agentfootprint.agent import Agent
    from agentfootprint.errors import AgentFootprintError

    probe = agent_factory()
    if not isinstance(probe, Agent):
        raise TypeError(f"the agent factory returned {type(probe).__name__}, not an Agent")
    name = probe.name
    about = description or f"Ask the agent '{name}': it runs one recorded turn and answers with text."
    server: Any = MCPServer(name=name, instructions=about)

    async def ask(message: str) -> str:
        agent = agent_factory()
        try:
            result = await agent.run(message)
        except AgentFootprintError as exc:
            raise _TurnRefused(f"{exc.code}: {exc}") from None
        except Exception as exc:
            raise _TurnRefused(f"the turn failed ({type(exc).__name__})") from None
        if result.status != "completed":
            raise _TurnRefused(f"the agent paused to ask a person: {result.question or ''}".strip())
        return result.answer or ""

    server.add_tool(ask, name=name, description=about, structured_output=False)
    return server


async def serve_stdio(agent_factory: AgentFactory) -> None:
    """Serve the agent over MCP on stdin/stdout until the client closes it."""
    await mcp_server(agent_factory).run_stdio_async()


def mcp_app(agent_factory: AgentFactory, *, path: str = "/mcp", host: str = "127.0.0.1") -> Any:
    """The streamable-HTTP ASGI app serving the agent at ``path`` (mount it beside ``ag_ui_app``)."""
    return mcp_server(agent_factory).streamable_http_app(streamable_http_path=path, host=host)
