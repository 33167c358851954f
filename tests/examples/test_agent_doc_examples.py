"""docs/agent.md's examples run, and the doc shows their code and exactly what they print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _run(name: str) -> str:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)], capture_output=True, text=True, check=True, timeout=120
    ).stdout


def _section(title: str) -> str:
    doc = (ROOT / "docs" / "agent.md").read_text()
    return doc.split(f"## {title}\n")[1].split("\n## ")[0]


def _check(title: str, example: str) -> None:
    section = _section(title)
    source = (ROOT / "examples" / example).read_text()
    shown = section.split("```python\n")[1].split("```")[0]
    for line in shown.splitlines():
        if line.strip() and not line.strip().startswith("#"):
            assert line in source, f"docs/agent.md shows a line {example} does not have: {line!r}"
    fence = "~~~" if "~~~text\n" in section else "```"
    printed = section.split(f"{fence}text\n")[1].split(fence)[0].splitlines()
    assert printed == _run(example).splitlines()


def test_r004_96_97_101_102_the_output_contract_section_runs_as_shown() -> None:
    _check("Output contract and answer validation", "output_contract.py")


def test_r004_109_112_128_the_answer_section_runs_as_shown() -> None:
    _check("What travels with the answer", "answer_limits.py")


def test_r004_129_the_declared_structure_section_runs_as_shown() -> None:
    _check("Declared structure", "declared_structure.py")
