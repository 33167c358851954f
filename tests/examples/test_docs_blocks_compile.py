"""Every Python block in the docs is a whole program that compiles: no ``await`` outside a function, no syntax
error (the pages' own tests run them; this catches an excerpt that no test runs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs"
PAGES = sorted([*DOCS.glob("*.md"), DOCS.parent / "README.md"])


def _blocks(page: Path) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 1, m.group(1)) for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_python_block_compiles_as_a_module(page: Path) -> None:
    for line, block in _blocks(page):
        try:
            compile(block, f"{page.name}:{line}", "exec")
        except SyntaxError as err:
            pytest.fail(f"{page.name} line {line}: the block does not compile as a program ({err.msg})")
