"""docs/interop.md: the per-framework capture sections and the OTLP receiver section run as written, in order, in an
empty folder, and print what their comments say (other sections of the page are run by their own tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "interop.md"
SECTIONS = (
    "Capture from pydantic-ai",
    "Capture from LangGraph and LangChain",
    "Capture from the OpenAI Agents SDK",
    "Receive traces over OTLP/HTTP",
)


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_framework_sections_run_and_print_what_they_promise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    blocks = [b for t in SECTIONS for b in re.findall(r"```python\n(.*?)```", _section(text, t), flags=re.S)]
    assert len(blocks) == 4
    namespace: dict[str, object] = {"__name__": "interop_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    promised = [
        line.split("  # ", 1)[1].strip()
        for block in blocks
        for line in block.splitlines()
        if re.match(r"^\s*print\(.*\)\s+# ", line)
    ]
    assert len(promised) == 11
    assert out == promised
    assert (tmp_path / "runs.db").is_file()
