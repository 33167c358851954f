"""docs/whatif.md: its console command, run where the page's Python block before it ran alone (an empty folder),
prints what the page shows (tests/docs/test_docs_pages.py runs every Python block of the page alone)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentfootprint.cli import app
from tests._doc_blocks import python_blocks, run_alone

DOC = Path(__file__).parents[2] / "docs" / "whatif.md"


def test_the_console_command_prints_what_the_page_shows_after_the_block_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = DOC.read_text()
    (found,) = re.finditer(r"```console\n\$ agentfootprint (.*?)\n(.*?)```", text, flags=re.S)
    command, shown = found.groups()
    done = run_alone(python_blocks(text[: found.start()])[-1], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    monkeypatch.chdir(tmp_path / "cwd")
    result = CliRunner().invoke(app(), shlex.split(command), env={"COLUMNS": "250"})
    assert (result.exit_code, result.stdout) == (0, shown)
    assert (tmp_path / "cwd" / "test_refunds.py").is_file()
