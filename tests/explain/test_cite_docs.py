"""docs/integrity.md, section "Citations": after its first block, ``print(citations)`` prints the citation list the
page shows, and the block writes nothing (tests/docs/test_docs_pages.py runs every block of the page alone)."""

from __future__ import annotations

import re
from pathlib import Path

from tests._doc_blocks import promises, python_blocks, run_alone, section

DOC = Path(__file__).parents[2] / "docs" / "integrity.md"


def test_print_citations_prints_the_list_the_page_shows_and_the_block_writes_nothing(tmp_path: Path) -> None:
    part = section(DOC.read_text(), "Citations")
    first = python_blocks(part)[0]
    (shown,) = re.findall(r"```text\n(.*?)```", part, flags=re.S)
    done = run_alone(first + "print(citations)\n", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == promises(first) + shown.splitlines()
    assert list((tmp_path / "cwd").iterdir()) == []
