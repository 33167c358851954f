"""docs/agent.md: each runnable section's Python blocks run as written and print what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "agent.md"


def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def run_blocks(title: str, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", section(title), flags=re.S)
    assert blocks, title
    namespace: dict[str, object] = {"__name__": "agent_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    out = capsys.readouterr().out
    promised = [
        line.split("# ", 1)[1].strip()
        for block in blocks
        for line in block.splitlines()
        if re.match(r"^print\(.*\)\s+# ", line)
    ]
    assert promised
    for text in promised:
        assert text in out.splitlines(), text


def test_limits_and_defaults_section_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """R004-91, R004-92, R004-130: the section's example (a bare number warns; a cut turn wraps up; configure)."""
    run_blocks("Limits and defaults", capsys)


def test_llm_call_section_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """R000-16: the section's example (one call, backtrack, a Sequence of two calls, the door's refusal)."""
    run_blocks("LLMCall", capsys)


def test_pause_consent_and_resume_section_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The section's block is a whole program (no ``await`` outside a function) and prints what it says."""
    run_blocks("Pause, consent and resume", capsys)
