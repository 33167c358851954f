"""docs/interop.md beyond what the whole-program runner checks (tests/docs/test_docs_pages.py runs every block alone):
the command-line section reads the file the page's first program writes and prints what the page shows, the report
the explain program writes says the trace is foreign, and ``sample_trace()`` is the trace it builds by hand."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from agentfootprint.cli import app
from agentfootprint.explain import backtrack
from agentfootprint.interop import import_trace, sample_trace
from tests._doc_blocks import run_alone, section

DOC = Path(__file__).parents[2] / "docs" / "interop.md"


def _block(title: str) -> str:
    (block,) = re.findall(r"```python\n(.*?)```", section(DOC.read_text(), title), flags=re.S)
    return str(block)


def test_the_command_line_section_reads_the_file_the_first_program_writes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_alone(_block("Import a trace"), tmp_path, cwd=work)
    assert done.returncode == 0, done.stderr[-2000:]
    console = re.findall(r"```console\n(.*?)```", section(DOC.read_text(), "From the command line"), flags=re.S)
    assert len(console) == 1
    lines = console[0].splitlines()
    commands = [(i, shlex.split(line[2:])) for i, line in enumerate(lines) if line.startswith("$ ")]
    assert len(commands) == 2
    for n, (i, argv) in enumerate(commands):
        assert argv[0] == "agentfootprint"
        argv = [str(work / a) if a.endswith((".json", ".html")) else a for a in argv]
        result = CliRunner().invoke(app(), argv[1:], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.stderr
        end = commands[n + 1][0] if n + 1 < len(commands) else len(lines)
        shown = [line.replace("run.json", str(work / "run.json")).replace("why.html", str(work / "why.html"))
                 for line in lines[i + 1 : end]]  # fmt: skip
        got = result.stdout.splitlines()
        assert len(got) == len(shown)
        for want, have in zip(shown, got, strict=True):
            assert re.fullmatch(re.escape(want).replace(r"\.\.\.", ".+"), have), (want, have)
    assert (work / "run.json").is_file()
    assert "foreign-trace" in (work / "why.html").read_text()


def test_the_explain_program_writes_a_report_that_says_the_trace_is_foreign(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_alone(_block("Explain it"), tmp_path, cwd=work)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "foreign-trace" in (work / "why.html").read_text()


def test_sample_trace_is_the_trace_the_first_program_builds(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    assert run_alone(_block("Import a trace"), tmp_path, cwd=work).returncode == 0
    by_hand, sample = backtrack(import_trace(work / "trace.json")), backtrack(import_trace(sample_trace()))
    assert sample.answer == by_hand.answer == "No: order 7 was a final sale."
    assert [(s.kind, s.id, s.text) for s in sample.sources] == [(s.kind, s.id, s.text) for s in by_hand.sources]
    assert sample_trace() == sample_trace() and sample_trace() is not sample_trace()
