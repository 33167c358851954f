"""Typed errors of tool definition and execution; each has a stable ``code``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentfootprint.errors import AgentFootprintError
from agentfootprint.tools._codes import ERR_INVALID_TOOL_ARGS

if TYPE_CHECKING:
    from agentfootprint.tools.validation import ArgIssue

__all__ = [
    "DuplicateToolError",
    "InvalidToolDefinitionError",
    "PauseOutsideAgentError",
    "RunStoppingError",
    "ToolArgumentsError",
    "ToolError",
    "UnsafeSchemaPatternError",
]


class ToolError(AgentFootprintError):
    """Base class of tool errors."""

    code = "ERR_TOOL"


class InvalidToolDefinitionError(ToolError, ValueError):
    """A tool definition that cannot work (bad name, schema, signature); names the problem."""

    code = "ERR_INVALID_TOOL_DEFINITION"


class UnsafeSchemaPatternError(InvalidToolDefinitionError):
    """A schema ``pattern`` that could backtrack without bound; names the field and the reason, never the pattern."""

    code = "ERR_UNSAFE_SCHEMA_PATTERN"

    def __init__(self, tool: str, field: str, reason: str) -> None:
        super().__init__(f"tool {tool}: input_schema {field} is refused ({reason}): it could run without bound")
        self.tool = tool
        self.field = field
        self.reason = reason


class DuplicateToolError(ToolError, ValueError):
    """Two tools with one name in one registry."""

    code = "ERR_DUPLICATE_TOOL"

    def __init__(self, name: str) -> None:
        super().__init__(f"duplicate tool name: {name!r} is registered twice")
        self.name = name


class ToolArgumentsError(ToolError, ValueError):
    """Raised inside a tool when its arguments fail conversion; carries the issues, never the values."""

    code = ERR_INVALID_TOOL_ARGS

    def __init__(self, issues: list[ArgIssue]) -> None:
        self.issues = issues
        super().__init__("; ".join(i.message for i in issues) or "invalid arguments")


class PauseOutsideAgentError(ToolError, RuntimeError):
    """A pausing tool (such as ``ask_human``) was executed directly instead of by an agent loop."""

    code = "ERR_PAUSE_OUTSIDE_AGENT"


class RunStoppingError(ToolError, RuntimeError):
    """Raised from a tool (or around it) when the run cannot go on: it fails the run instead of becoming an
    error result (a tool server that died, say). The run's record is kept, as for any crash."""

    code = "ERR_RUN_STOPPING"
