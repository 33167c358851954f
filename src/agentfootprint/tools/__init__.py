"""Tools: ``define_tool``, ``@tool``, argument validation, permission, check-in and execution."""

from agentfootprint.tools.context import ToolContext
from agentfootprint.tools.coverage import CoverageDeclarationError, absent, coverage, period, script, semantic
from agentfootprint.tools.errors import (
    DuplicateToolError,
    InvalidToolDefinitionError,
    PauseOutsideAgentError,
    RunStoppingError,
    ToolArgumentsError,
    ToolError,
    UnsafeSchemaPatternError,
)
from agentfootprint.tools.execute import (
    PermissionDecision,
    ToolOutcome,
)
from agentfootprint.tools.lint import LintFinding, lint_tools
from agentfootprint.tools.provider import (
    ProviderContext,
    ToolPredicate,
    ToolProvider,
    gated_tools,
    list_provider_tools,
    skill_scoped_tools,
    static_tools,
)
from agentfootprint.tools.registry import ToolRegistry
from agentfootprint.tools.tool import (
    CheckIn,
    PermissionChecker,
    Tool,
    ToolExecute,
    ask_human,
    define_tool,
    tool,
)
from agentfootprint.tools.typed_ask import ask_human_typed
from agentfootprint.tools.validation import (
    ArgIssue,
    validate_json,
    validate_tool_args,
)

__all__ = [
    "ArgIssue",
    "CheckIn",
    "CoverageDeclarationError",
    "DuplicateToolError",
    "InvalidToolDefinitionError",
    "LintFinding",
    "PauseOutsideAgentError",
    "PermissionChecker",
    "PermissionDecision",
    "ProviderContext",
    "RunStoppingError",
    "Tool",
    "ToolArgumentsError",
    "ToolContext",
    "ToolError",
    "ToolExecute",
    "ToolOutcome",
    "ToolPredicate",
    "ToolProvider",
    "ToolRegistry",
    "UnsafeSchemaPatternError",
    "absent",
    "ask_human",
    "ask_human_typed",
    "coverage",
    "define_tool",
    "gated_tools",
    "lint_tools",
    "list_provider_tools",
    "period",
    "script",
    "semantic",
    "skill_scoped_tools",
    "static_tools",
    "tool",
    "validate_json",
    "validate_tool_args",
]
