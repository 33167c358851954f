"""Running a docs page's Python blocks as written: pick sections, run the blocks in one namespace, and read what
each ``print(...)  # promised`` line says it prints."""

from __future__ import annotations

import re
from pathlib import Path

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
PROMISE = re.compile(r"^\s*print\(.*\)\s+# ")


def section(text: str, title: str) -> str:
    """The ``## title`` section of a page (up to the next ``## `` heading)."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of ``text``, in order."""
    return PYTHON_BLOCK.findall(text)


def run_blocks(blocks: list[str], doc: Path, name: str) -> list[str]:
    """Run ``blocks`` in order in one fresh namespace; the lines their ``print(...)  # comment`` promise, in order."""
    namespace: dict[str, object] = {"__name__": name}
    for block in blocks:
        exec(compile(block, str(doc), "exec"), namespace)
    return [line.split("  # ", 1)[1].strip() for block in blocks for line in block.splitlines() if PROMISE.match(line)]
