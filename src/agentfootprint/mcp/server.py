"""An agent served over MCP: one tool per agent, named after it, taking ``{"message": str}``.

``mcp_server(agent_factory)`` is an ``mcp`` SDK server whose tool runs one turn on a fresh agent from the factory
and answers with the agent's answer as text; ``serve_stdio(factory)`` serves it on stdin/stdout (what
``agentfootprint mcp module:factory`` runs) and ``mcp_app(factory)`` is the streamable-HTTP ASGI app to mount
beside the AG-UI app. A turn that pauses, or fails, answers with a tool error that says so (a failure by its
stable code only; the detail goes to the ``agentfootprint.mcp`` log). At most ``max_concurrent_turns`` turns run
at once (more are refused with ``ERR_MCP_TOO_MANY_TURNS``); one message is at most ``max_message_bytes``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentfootprint.mcp._limits import (
    BUSY,
    DEFAULT_MAX_CONCURRENT_TURNS,
    DEFAULT_MAX_MESSAGE_BYTES,
    run_bounded_stdio,
    turn_refusal,
)
from agentfootprint.mcp._sdk import sdk

if TYPE_CHECKING:
    from agentfootprint.agent import Agent

__all__ = ["mcp_app", "mcp_server", "serve_stdio"]

AgentFactory = Callable[[], "Agent"]


def mcp_server(
    agent_factory: AgentFactory,
    *,
    description: str | None = None,
    max_concurrent_turns: int = DEFAULT_MAX_CONCURRENT_TURNS,
) -> Any:
    """An ``mcp`` server (``MCPServer``) with one tool: the agent, by its name, taking ``message``."""
    if not isinstance(max_concurrent_turns, int) or max_concurrent_turns < 1:
        raise ValueError("max_concurrent_turns must be a positive integer")
    sdk()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as _TurnRefused  # its message reaches the client

    from agentfootprint.agent import Agent

    probe = agent_factory()
    if not isinstance(probe, Agent):
        raise TypeError(f"the agent factory returned {type(probe).__name__}, not an Agent")
    name = probe.name
    about = description or f"Ask the agent '{name}': it runs one recorded turn and answers with text."
    server: Any = MCPServer(name=name, instructions=about)

    running = [0]

    async def ask(message: str) -> str:
        if running[0] >= max_concurrent_turns:
            raise _TurnRefused(f"{BUSY}: {max_concurrent_turns} turns are already running; try again later")
        running[0] += 1
        try:
            agent = agent_factory()
            result = await agent.run(message)
        except Exception as exc:
            raise _TurnRefused(turn_refusal(exc)) from None
        finally:
            running[0] -= 1
        if result.status != "completed":
            raise _TurnRefused(f"the agent paused to ask a person: {result.question or ''}".strip())
        return result.answer or ""

    server.add_tool(ask, name=name, description=about, structured_output=False)
    return server


async def serve_stdio(
    agent_factory: AgentFactory,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_concurrent_turns: int = DEFAULT_MAX_CONCURRENT_TURNS,
) -> None:
    """Serve the agent over MCP on stdin/stdout until the client closes it (each message read with a bounded buffer)."""
    _check_size(max_message_bytes)
    server = mcp_server(agent_factory, max_concurrent_turns=max_concurrent_turns)
    await run_bounded_stdio(server, max_message_bytes=max_message_bytes)


def mcp_app(
    agent_factory: AgentFactory,
    *,
    path: str = "/mcp",
    host: str = "127.0.0.1",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_concurrent_turns: int = DEFAULT_MAX_CONCURRENT_TURNS,
) -> Any:
    """The streamable-HTTP ASGI app serving the agent at ``path`` (mount it beside ``ag_ui_app``)."""
    _check_size(max_message_bytes)
    server = mcp_server(agent_factory, max_concurrent_turns=max_concurrent_turns)
    return server.streamable_http_app(streamable_http_path=path, host=host, max_request_body_size=max_message_bytes)


def _check_size(max_message_bytes: int) -> None:
    if not isinstance(max_message_bytes, int) or max_message_bytes < 1024:
        raise ValueError("max_message_bytes must be an integer of at least 1024")
