"""docs/integrity.md: its integrity blocks run as written, in an empty folder, and print what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._doc_blocks import run_blocks

DOC = Path(__file__).parents[2] / "docs" / "integrity.md"


def test_the_integrity_page_runs_and_prints_what_it_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    end = text.find("\n## Citations")
    mine = text if end == -1 else text[:end]
    blocks = re.findall(r"```python\n(.*?)```", mine, flags=re.S)
    assert len(blocks) == 8
    promised = run_blocks(blocks, DOC, "integrity_doc")
    out = capsys.readouterr().out.splitlines()
    assert len(promised) == 12
    assert out == promised
