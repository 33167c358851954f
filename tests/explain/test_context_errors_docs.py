"""docs/integrity.md: its integrity blocks run as written, in an empty folder, and print what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "integrity.md"


def test_the_integrity_page_runs_and_prints_what_it_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    end = text.find("\n## Citations")
    mine = text if end == -1 else text[:end]
    blocks = re.findall(r"```python\n(.*?)```", mine, flags=re.S)
    assert len(blocks) == 5
    namespace: dict[str, object] = {"__name__": "integrity_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    promised = [
        line.split("  # ", 1)[1].strip()
        for block in blocks
        for line in block.splitlines()
        if re.match(r"^\s*print\(.*\)\s+# ", line)
    ]
    assert len(promised) == 7
    assert out == promised
