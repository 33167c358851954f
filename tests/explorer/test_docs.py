"""docs/explorer.md: the page's screenshots (made by scripts/explorer_screenshots.py) are in the repository, one shown
in the README. Its Python block is run by tests/docs/test_docs_pages.py."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).parents[2] / "docs"
DOC = DOCS / "explorer.md"

SHOTS = ["list", "chain", "proof", "compare"]


def test_the_screenshots_the_page_shows_are_committed_pngs_1000_pixels_wide() -> None:
    images = re.findall(r"!\[[^\]]*\]\((img/[^)]+)\)", DOC.read_text())
    assert images == [f"img/explorer-{name}.png" for name in SHOTS]
    for image in images:
        head = (DOCS / image).read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(head[16:20], "big") == 1000  # the IHDR width: scripts/explorer_screenshots.py


def test_the_readme_shows_one_of_them() -> None:
    readme = (DOCS.parent / "README.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\((docs/img/explorer-[^)]+)\)", readme)
    assert shown == ["docs/img/explorer-proof.png"]
