"""docs/whatif.md, section "Fork": its blocks run as written after the page's intro, in an empty folder, and print
what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
    assert len(blocks) == 4
    namespace: dict[str, object] = {"__name__": "whatif_fork_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    promised = [
        line.split("  # ", 1)[1].strip()
        for block in blocks
        for line in block.splitlines()
        if re.match(r"^\s*print\(.*\)\s+# ", line)
    ]
    assert len(promised) == 8
    assert out == promised
