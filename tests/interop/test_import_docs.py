"""docs/interop.md: the import, explain, prove and command-line sections run as written, in order, in an empty
folder, and print what their comments say (the per-framework sections are run by their own test)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentfootprint.cli import app
from tests._doc_blocks import run_blocks, section

DOC = Path(__file__).parents[2] / "docs" / "interop.md"
SECTIONS = ("Import a trace", "Explain it", "Prove the culprit at one step")


def test_import_explain_and_prove_sections_print_what_they_promise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    blocks = [b for t in SECTIONS for b in re.findall(r"```python\n(.*?)```", section(text, t), flags=re.S)]
    assert len(blocks) == 3
    promised = run_blocks(blocks, DOC, "interop_import_doc")
    out = capsys.readouterr().out.splitlines()
    assert len(promised) == 9
    assert out == promised
    assert "foreign-trace" in (tmp_path / "why.html").read_text()

    console = re.findall(r"```console\n(.*?)```", section(text, "From the command line"), flags=re.S)
    assert len(console) == 1
    lines = console[0].splitlines()
    commands = [(i, shlex.split(line[2:])) for i, line in enumerate(lines) if line.startswith("$ ")]
    assert len(commands) == 2
    for n, (i, argv) in enumerate(commands):
        assert argv[0] == "agentfootprint"
        result = CliRunner().invoke(app(), argv[1:], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.stderr
        end = commands[n + 1][0] if n + 1 < len(commands) else len(lines)
        shown = lines[i + 1 : end]
        got = result.stdout.splitlines()
        assert len(got) == len(shown)
        for want, have in zip(shown, got, strict=True):
            assert re.fullmatch(re.escape(want).replace(r"\.\.\.", ".+"), have), (want, have)
    assert (tmp_path / "run.json").is_file()
