"""Where the set-up put the MCP servers and clients no one here wrote (``make test-setup``: .mcp-servers/)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SERVERS = Path(os.environ.get("MCP_SERVERS_DIR", ROOT / ".mcp-servers"))
FIXTURE = Path(__file__).with_name("fixture_server.py")


def installed(relative: str) -> str:
    """The path of an installed server binary, or a skip naming the set-up step that installs it."""
    path = SERVERS / relative
    if not path.exists():
        pytest.skip(f"{relative} is not installed: run make test-setup (make test does)")
    return str(path)


def git() -> str:
    found = shutil.which("git")
    if found is None:
        pytest.skip("git is not installed")
    return found
