"""docs/mcp.md's Python runs as written from the checkout after ``make test`` (which installs mcp-server-time into
.mcp-servers/), and without the server it stops with one clear line instead of a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests._doc_blocks import python_blocks, run_blocks
from tests.mcp.conftest import ROOT, SERVERS, installed

pytestmark = pytest.mark.integration

DOC = ROOT / "docs" / "mcp.md"


def test_the_page_runs_as_written_from_the_checkout(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    installed("py/bin/mcp-server-time")
    monkeypatch.chdir(ROOT)
    if SERVERS != ROOT / ".mcp-servers":
        monkeypatch.setenv("MCP_SERVERS_DIR", str(SERVERS))
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) == 1
    promised = run_blocks(blocks, DOC, "mcp_doc")
    assert promised == ["The clock answered.", "UTC"]
    assert capfd.readouterr().out.splitlines() == promised


def test_without_the_server_the_page_stops_with_one_clear_line(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {"PATH": str(empty), "MCP_SERVERS_DIR": str(tmp_path / "none"), "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", python_blocks(DOC.read_text())[0]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr == (
        "mcp-server-time is not installed: run `make setup-mcp` here or `pip install mcp-server-time`\n"
    )
    assert done.stdout == ""
