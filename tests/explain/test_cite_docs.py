"""docs/integrity.md, section "Citations": its code blocks run as written, in order, in an empty folder, print what
their comments say, and the citation list shown is what ``print(citations)`` prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "integrity.md"


def _section() -> str:
    text = DOC.read_text()
    start = text.index("\n## Citations\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _promised(block: str) -> list[str]:
    """Each ``print(...)  # shown`` line's comment, and the comment-only lines right under it (more output lines)."""
    out: list[str] = []
    printing = False
    for line in block.splitlines():
        if re.match(r"^\s*print\(.*\)\s+# ", line):
            out.append(line.split("  # ", 1)[1].strip())
            printing = True
        elif printing and re.match(r"^\s+# ", line):
            out.append(line.strip()[2:])
        else:
            printing = False
    return out


def test_citations_section_runs_and_prints_what_it_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    section = _section()
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 3
    namespace: dict[str, object] = {"__name__": "integrity_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    promised = [line for block in blocks for line in _promised(block)]
    assert len(promised) == 8
    assert capsys.readouterr().out.splitlines() == promised
    (shown,) = re.findall(r"```text\n(.*?)```", section, flags=re.S)
    assert str(namespace["citations"]) + "\n" == shown
    assert list(tmp_path.iterdir()) == []
