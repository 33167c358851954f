"""docs/compose.md: every Python block runs as written and prints what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "compose.md"


def test_compose_doc_blocks_run_and_print_what_they_promise(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 8
    namespace: dict[str, object] = {"__name__": "compose_doc"}
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
        assert text in out, text
