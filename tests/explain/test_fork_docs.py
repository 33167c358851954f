"""docs/whatif.md, section "Fork": its blocks run as written after the page's intro, in an empty folder, and print
what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._doc_blocks import run_blocks

DOC = Path(__file__).parents[2] / "docs" / "whatif.md"


def test_the_fork_section_runs_and_prints_what_it_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    start = text.index("\n## Fork\n")
    end = text.find("\n## ", start + 1)
    parts = [text[: text.index("\n## ")], text[start : end if end != -1 else len(text)]]
    blocks = [b for part in parts for b in re.findall(r"```python\n(.*?)```", part, flags=re.S)]
    assert len(blocks) == 5
    promised = run_blocks(blocks, DOC, "whatif_fork_doc")
    out = capsys.readouterr().out.splitlines()
    assert len(promised) == 12
    assert out == promised
