"""Running a docs page's Python blocks as written: pick sections, run a block alone as a whole program (or blocks in
one namespace), and read what each ``print(...)  # promised`` line says it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
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


def program_blocks(text: str) -> list[tuple[int, str]]:
    """Each ```python block of ``text`` with the line its fence opens on; a block shown inside a ``~~~`` fence is a
    program's printed output, not a program, and is left out."""
    blocks: list[tuple[int, str]] = []
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        opener = lines[index].rstrip("\n")
        fence = opener[:3] if opener[:3] in ("```", "~~~") else ""
        if not fence:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].rstrip() != fence:
            end += 1
        if fence == "```" and opener[3:].strip() == "python":
            blocks.append((index + 1, "".join(lines[index + 1 : end])))
        index = end + 1
    return blocks


def promises(block: str) -> list[str]:
    """What the block's ``print(...)  # text`` lines promise to print, in order; comment-only lines right under such
    a line, their ``#`` in its comment's column, are more lines it prints (a loop's output)."""
    found: list[str] = []
    column = -1  # the column of the last promise's ``#``, while comment lines under it continue it
    for line in block.splitlines():
        if PROMISE.match(line):
            found.append(line.split("  # ", 1)[1].strip())
            column = line.index("  # ") + 2
        elif column > 0 and line.startswith(" " * column + "# "):
            found.append(line[column + 2 :].strip())
        else:
            column = -1
    return found


def run_alone(
    program: str, folder: Path, *, cwd: Path | None = None, env: Mapping[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run ``program`` as a whole program: written to ``folder``, run by a fresh interpreter in ``cwd`` (default: the
    empty folder ``folder/cwd``, made here), with this environment plus ``NO_COLOR`` and ``env``."""
    script = folder / "block.py"
    script.write_text(program)
    if cwd is None:
        cwd = folder / "cwd"
        cwd.mkdir()
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
