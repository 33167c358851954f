"""The official ``mcp`` SDK, imported only when an MCP feature is used."""

from __future__ import annotations

from types import ModuleType

from agentfootprint.mcp.errors import MCPExtraMissingError


def sdk() -> ModuleType:
    """``import mcp`` or a typed error naming the extra."""
    try:
        import mcp
    except ImportError:
        raise MCPExtraMissingError() from None
    return mcp
