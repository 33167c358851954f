"""The README's Python blocks run as written; the docs speak to users, never of internal documents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentfootprint.explain import backtrack, load_recording

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
INTERNAL = re.compile(r"\bseed \d{3}\b|\bDESIGN\b|SEED-RULES|\bR\d{3}-\d+\b|\bissue \d+\b", re.I)


def test_readme_python_blocks_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "Refund APPROVED" in out and "CAUSAL: ablating fact 'vip-override-fact'" in out
    saved = load_recording(tmp_path / "run.json")
    assert "vip-override-fact" in str(backtrack(saved)), "the quick start's recording explains the run offline"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_docs_never_speak_of_internal_documents(doc: Path) -> None:
    found = INTERNAL.findall(doc.read_text())
    assert found == [], f"{doc.name} mentions internal documents: {found}"
