"""The public surfaces of the extensions and MCP packages are pinned; importing them loads no extra."""

from __future__ import annotations

import subprocess
import sys

import agentfootprint.extensions as extensions
import agentfootprint.mcp as mcp_pkg
from agentfootprint import tools


def test_extensions_all_is_pinned() -> None:
    assert extensions.__all__ == [
        "Allow",
        "AnswerContract",
        "AnswerView",
        "ArgumentRule",
        "Artifacts",
        "CircuitBreaker",
        "CircuitOpenError",
        "Credentials",
        "DeclaredStructure",
        "Deny",
        "Integrity",
        "MessageDeniedError",
        "MessageMiddlewareChain",
        "Receipts",
        "Reliability",
        "ReliabilityFailFastError",
        "ReliabilityProvider",
        "ReliabilityScope",
        "SkillGraphWalker",
        "SkillVisibility",
        "ToolMiddlewareChain",
        "ToolProviders",
        "ToolSessions",
        "allow",
        "answer_check",
        "ask",
        "assume",
        "classify_error",
        "deny",
        "rule",
    ]
    assert all(getattr(extensions, n) is not None for n in extensions.__all__)


def test_mcp_all_is_pinned() -> None:
    assert mcp_pkg.__all__ == [
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


def test_tool_provider_names_are_exported_from_tools() -> None:
    for name in (
        "ToolProvider",
        "ProviderContext",
        "static_tools",
        "gated_tools",
        "skill_scoped_tools",
        "RunStoppingError",
    ):
        assert name in tools.__all__


def test_importing_the_mcp_package_does_not_load_the_sdk() -> None:
    code = "import sys, agentfootprint.mcp, agentfootprint.extensions; print('mcp.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
