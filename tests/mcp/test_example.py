"""examples/mcp_time.py runs against the installed mcp-server-time and its backtrack shows the MCP result."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.mcp.conftest import ROOT, installed

pytestmark = pytest.mark.integration


def test_mcp_time_example_backtracks_to_the_mcp_tool_result() -> None:
    server = installed("py/bin/mcp-server-time")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_time.py"), server],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert "answer: 4 pm in London is 01:00 in Tokyo (Wednesday)." in out or "answer: 4 pm in London is 00:00" in out
    assert 'source: tool convert_time <- { "source": { "timezone": "Europe/London"' in out
