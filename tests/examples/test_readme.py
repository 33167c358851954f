"""The README's Python blocks run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"


def test_readme_python_blocks_run(capsys: object) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "Refund APPROVED" in out and "CAUSAL: ablating fact 'vip-override-fact'" in out
