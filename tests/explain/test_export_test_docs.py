"""docs/whatif.md: the intro and the sections this page's what-if verbs own run as written, in order, in an empty
folder, and print what their comments say; the page's console commands print what it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentfootprint.cli import app

DOC = Path(__file__).parents[2] / "docs" / "whatif.md"
SECTIONS = ("Compare two runs", "Follow a source forward", "Time travel", "Proofs become tests", "Runs as a dataset")


def _parts() -> list[str]:
    """The intro, then each of ``SECTIONS`` (other sections of the page are run by their own tests)."""
    text = DOC.read_text()
    found = [text[: text.index("\n## ")]]
    for title in SECTIONS:
        start = text.index(f"\n## {title}\n")
        end = text.find("\n## ", start + 1)
        found.append(text[start : end if end != -1 else len(text)])
    return found


def test_whatif_page_blocks_run_and_print_what_they_promise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    parts = _parts()
    blocks = [b for part in parts for b in re.findall(r"```python\n(.*?)```", part, flags=re.S)]
    assert len(blocks) >= 8
    namespace: dict[str, object] = {"__name__": "whatif_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    promised = [
        line.split("  # ", 1)[1].strip()
        for block in blocks
        for line in block.splitlines()
        if re.match(r"^\s*print\(.*\)\s+# ", line)
    ]
    assert len(promised) >= 20
    assert out == promised
    for part in parts:
        for command, shown in re.findall(r"```console\n\$ agentfootprint (.*?)\n(.*?)```", part, flags=re.S):
            result = CliRunner().invoke(app(), shlex.split(command), env={"COLUMNS": "250"})
            assert (result.exit_code, result.stdout) == (0, shown), command
    assert (tmp_path / "test_refunds.py").is_file()
