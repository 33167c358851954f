"""docs/mcp.md's Python block is a whole program: run alone from the checkout after ``make test`` (which installs
mcp-server-time into .mcp-servers/), it prints what it promises, and without the server it stops with one clear line
instead of a traceback.

It is run here, not by the whole-program runner (tests/docs/test_docs_pages.py): it needs the MCP server that
``make test`` installs, found from the checkout or $MCP_SERVERS_DIR, which an empty folder does not have."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._doc_blocks import promises, python_blocks, run_alone
from tests.mcp.conftest import ROOT, SERVERS, installed

pytestmark = pytest.mark.integration

DOC = ROOT / "docs" / "mcp.md"


def test_the_block_runs_alone_as_written_from_the_checkout(tmp_path: Path) -> None:
    installed("py/bin/mcp-server-time")
    (block,) = python_blocks(DOC.read_text())
    env = {} if SERVERS == ROOT / ".mcp-servers" else {"MCP_SERVERS_DIR": str(SERVERS)}
    done = run_alone(block, tmp_path, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert promises(block) == ["The clock answered.", "UTC"]
    assert done.stdout.splitlines() == promises(block)


def test_without_the_server_the_block_stops_with_one_clear_line(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    (block,) = python_blocks(DOC.read_text())
    done = run_alone(block, tmp_path, env={"PATH": str(empty), "MCP_SERVERS_DIR": str(tmp_path / "none")}, timeout=60)
    assert done.returncode == 1
    assert done.stderr == (
        "mcp-server-time is not installed: run `make setup-mcp` here or `pip install mcp-server-time`\n"
    )
    assert done.stdout == ""
