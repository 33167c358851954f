"""docs/interop.md: the per-framework capture sections and the OTLP receiver section run as written, in order, in an
empty folder, and print what their comments say (other sections of the page are run by their own tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._doc_blocks import run_blocks, section

DOC = Path(__file__).parents[2] / "docs" / "interop.md"
SECTIONS = (
    "Capture from pydantic-ai",
    "Capture from LangGraph and LangChain",
    "Capture from the OpenAI Agents SDK",
    "Receive traces over OTLP/HTTP",
)


def test_framework_sections_run_and_print_what_they_promise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    blocks = [b for t in SECTIONS for b in re.findall(r"```python\n(.*?)```", section(text, t), flags=re.S)]
    assert len(blocks) == 5
    promised = run_blocks(blocks, DOC, "interop_doc")
    out = capsys.readouterr().out.splitlines()
    assert len(promised) == 15
    assert out == promised
    assert (tmp_path / "runs.db").is_file()
