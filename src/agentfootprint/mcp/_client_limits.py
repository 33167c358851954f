"""What an MCP client takes from a server's tool list: a capped count, capped description and schema sizes.

A tool over a limit is left out; ``MCPToolProvider.dropped`` names each one with its reason, and a
``MCPToolsDroppedWarning`` plus a log line on ``agentfootprint.mcp`` say so when it happens.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from agentfootprint.mcp._names import model_tool_name

__all__ = [
    "DEFAULT_MAX_DESCRIPTION_CHARS",
    "DEFAULT_MAX_SCHEMA_BYTES",
    "DEFAULT_MAX_TOOLS",
    "DroppedTool",
    "MCPToolsDroppedWarning",
    "check_limits",
    "keep_tools",
]

DEFAULT_MAX_TOOLS = 256
DEFAULT_MAX_DESCRIPTION_CHARS = 8192
DEFAULT_MAX_SCHEMA_BYTES = 64 * 1024
Reason = Literal["invalid_name", "duplicate_name", "description_too_long", "schema_too_large", "over_tool_limit"]
log = logging.getLogger("agentfootprint.mcp")


class MCPToolsDroppedWarning(UserWarning):
    """Some of an MCP server's tools were left out (``MCPToolProvider.dropped`` lists which and why)."""


@dataclass(frozen=True)
class DroppedTool:
    """A tool the server offered that the agent does not see: its server name (cut to 64 characters) and why."""

    name: str
    reason: Reason


def check_limits(max_tools: int, max_description_chars: int, max_schema_bytes: int) -> None:
    """Each limit is a positive integer (``ValueError`` naming the limit otherwise)."""
    for label, value in (
        ("max_tools", max_tools),
        ("max_description_chars", max_description_chars),
        ("max_schema_bytes", max_schema_bytes),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{label} must be a positive integer")


def _schema_bytes(schema: Any, limit: int) -> int:
    try:
        return len(json.dumps(schema, ensure_ascii=False, default=str).encode())
    except (TypeError, ValueError, RecursionError):
        return limit + 1


def keep_tools(
    server: str, specs: Iterable[Any], *, max_tools: int, max_description_chars: int, max_schema_bytes: int
) -> tuple[list[tuple[str, Any]], list[DroppedTool]]:
    """The specs within the limits (in the server's order), each with the name the model sees, and the ones left
    out with their reasons; two specs whose model names coincide keep the first."""
    kept: list[tuple[str, Any]] = []
    dropped: list[DroppedTool] = []
    seen: set[str] = set()
    for spec in specs:
        name = spec.name if isinstance(spec.name, str) else ""
        shown = name[:64]
        model_name = model_tool_name(name) if name else ""
        if not name:
            dropped.append(DroppedTool(shown, "invalid_name"))
        elif model_name in seen:
            dropped.append(DroppedTool(shown, "duplicate_name"))
        elif len(str(spec.description or "")) > max_description_chars:
            dropped.append(DroppedTool(shown, "description_too_long"))
        elif _schema_bytes(spec.input_schema or {}, max_schema_bytes) > max_schema_bytes:
            dropped.append(DroppedTool(shown, "schema_too_large"))
        elif len(kept) >= max_tools:
            dropped.append(DroppedTool(shown, "over_tool_limit"))
        else:
            seen.add(model_name)
            kept.append((model_name, spec))
    if dropped:
        counts: dict[str, int] = {}
        for d in dropped:
            counts[d.reason] = counts.get(d.reason, 0) + 1
        summary = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
        message = f"MCP server '{server}': {len(dropped)} tool(s) left out ({summary}); see .dropped"
        log.warning(message)
        warnings.warn(message, MCPToolsDroppedWarning, stacklevel=3)
    return kept, dropped
