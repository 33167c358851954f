"""docs/explorer.md: its Python block runs as written in an empty folder and prints what its comments say; the
page's screenshots (made by scripts/explorer_screenshots.py) are in the repository, one shown in the README."""

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


SHOTS = ["list", "chain", "proof", "compare"]


def test_the_screenshots_the_page_shows_are_committed_pngs_1000_pixels_wide() -> None:
    images = re.findall(r"!\[[^\]]*\]\((img/[^)]+)\)", DOC.read_text())
    assert images == [f"img/explorer-{name}.png" for name in SHOTS]
    for image in images:
        head = (DOCS / image).read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(head[16:20], "big") == 1000  # the IHDR width: scripts/explorer_screenshots.py


def test_the_readme_shows_one_of_them() -> None:
    readme = (DOCS.parent / "README.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\((docs/img/explorer-[^)]+)\)", readme)
    assert shown == ["docs/img/explorer-proof.png"]
