"""The first hour, as a new user meets it: the README names every CLI command, every example and the per-part set-up
targets (each a real make target running only its steps); every --help is plain text (no raw reST or rich markup);
the demo fits an 80-column terminal (no heading cut, no line over 80)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from agentfootprint.cli import app

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP_STEPS = {
    "setup-hosting": [],
    "setup-mcp": ["mcp-servers"],
    "setup-local-model": ["local-llm"],
    "setup-postgres": ["postgresql", "pgvector"],
}
RAW_MARKUP = re.compile(r"``|\[/?(bold|dim|italic|red|green|cyan|yellow|b|i|u)\b[^\]]*\]|\\\[|:(func|class|meth):`")


def commands() -> list[str]:
    group = typer.main.get_command(app())
    return sorted(group.commands)  # type: ignore[attr-defined]


def help_of(*args: str, width: int = 100) -> str:
    result = CliRunner().invoke(app(), [*args, "--help"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_command_list_is_the_one_the_readme_names() -> None:
    names = commands()
    assert {"mcp", "ui", "errors", "diff", "export-test", "import-trace", "report", "serve"} <= set(names)
    missing = [name for name in names if f"`agentfootprint {name}" not in README]
    assert missing == []


def test_the_readme_names_every_example() -> None:
    examples = sorted(p.name for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))
    assert len(examples) >= 13
    assert [name for name in examples if f"`{name}`" not in README] == []


def test_the_setup_targets_are_documented_and_run_only_their_steps() -> None:
    steps = {p.stem.split("-", 1)[1] for p in (ROOT / "scripts" / "setup").glob("[0-9]*.sh")}
    for target, wanted in SETUP_STEPS.items():
        assert f"make {target}" in README
        assert set(wanted) <= steps, target
        if shutil.which("make") is None:
            continue
        dry = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
        runs = [line for line in dry.stdout.splitlines() if "setup-test.sh" in line]
        named = [line.split("setup-test.sh", 1)[1].split() for line in runs]
        assert [step for names in named for step in names] == wanted, target
        assert '".[dev]"' not in dry.stdout, "a part never installs the whole dev extra"


@pytest.mark.parametrize("command", [None, *commands()])
def test_help_shows_no_raw_markup(command: str | None) -> None:
    text = help_of(*([command] if command else []))
    assert RAW_MARKUP.search(text) is None, RAW_MARKUP.search(text)


def test_the_pattern_sees_what_it_must() -> None:
    for raw in ("Serve ``module:factory``", "[bold]x[/bold]", "a \\[b]", ":func:`f`"):
        assert RAW_MARKUP.search(raw) is not None
    for plain in ("A recording: .json [required]", "[default: 8000]", "module:factory"):
        assert RAW_MARKUP.search(plain) is None


def test_the_demo_fits_80_columns(tmp_path: Path) -> None:
    from agentfootprint._demos import run_agent_demo, run_engine_demo

    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False, color_system=None)
    run_agent_demo(report_path=str(tmp_path / "report.html"), console=console)
    run_engine_demo(console)
    lines = out.getvalue().splitlines()
    rules = [line for line in lines if line.startswith("─") and line.endswith("─")]
    assert len(rules) >= 8
    assert [line for line in rules if "…" in line] == []
    assert [line for line in lines if len(line.rstrip()) > 80] == []
    assert any("A planted pair" in line for line in rules)


def test_the_local_model_transcript_shows_the_steps_the_real_demo_prints_now() -> None:
    page = (ROOT / "docs" / "local-model.md").read_text(encoding="utf-8")
    transcript = page[page.index("```text\n") : page.index("```", page.index("```text\n") + 8)]
    source = (ROOT / "src" / "agentfootprint" / "_demo_real.py").read_text(encoding="utf-8")
    steps = [line.strip("─ \n") for line in transcript.splitlines() if re.search(r"\[\d/4\]", line)]
    assert len(steps) == 4
    assert [step for step in steps if step not in source] == []
    assert "What this run proved" in transcript
    assert re.search(r"\n\d+ model calls( \(\d+ repeated requests answered from memory\))? in \d+s", transcript)
