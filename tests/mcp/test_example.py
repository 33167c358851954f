"""examples/mcp_time.py runs against the installed mcp-server-time and its backtrack shows the MCP result."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from tests.mcp.conftest import ROOT, installed

pytestmark = pytest.mark.integration


def _expected_answer() -> str:
    """The server converts 16:00 on today's London date; the Tokyo time and weekday follow from that date."""
    london = ZoneInfo("Europe/London")
    start = datetime.now(london).replace(hour=16, minute=0, second=0, microsecond=0)
    tokyo = start.astimezone(ZoneInfo("Asia/Tokyo"))
    return f"answer: 4 pm in London is {tokyo:%H:%M} in Tokyo ({tokyo:%A})."


def test_mcp_time_example_backtracks_to_the_mcp_tool_result() -> None:
    server = installed("py/bin/mcp-server-time")
    before = _expected_answer()
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_time.py"), server],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    answers = {before, _expected_answer()}  # both sides of a London midnight during the run
    assert any(answer in out for answer in answers), out
    assert 'source: tool convert_time <- { "source": { "timezone": "Europe/London"' in out
