"""docs/explorer.md: its Python block runs as written in an empty folder and prints what its comments say; the
page's screenshot is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs"
DOC = DOCS / "explorer.md"


def test_the_python_block_runs_and_prints_what_it_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(DOC), "exec"), {"__name__": "explorer_doc"})
    out = capsys.readouterr().out.splitlines()
    promised = [
        line.split("  # ", 1)[1].strip() for line in blocks[0].splitlines() if re.match(r"^\s*print\(.*\)\s+# ", line)
    ]
    assert len(promised) == 4
    assert out == promised


def test_the_screenshot_the_page_shows_is_committed() -> None:
    images = re.findall(r"!\[[^\]]*\]\((img/[^)]+)\)", DOC.read_text())
    assert images == ["img/explorer-run.png"]
    assert (DOCS / images[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
