"""docs/interop.md: the import, explain, prove and command-line sections run as written, in order, in an empty
folder, and print what their comments say (the per-framework sections are run by their own test)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentfootprint.cli import app

DOC = Path(__file__).parents[2] / "docs" / "interop.md"
SECTIONS = ("Import a trace", "Explain it", "Prove the culprit at one step")


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_import_explain_and_prove_sections_print_what_they_promise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    blocks = [b for t in SECTIONS for b in re.findall(r"```python\n(.*?)```", _section(text, t), flags=re.S)]
    assert len(blocks) == 3
    namespace: dict[str, object] = {"__name__": "interop_import_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    promised = [
        line.split("  # ", 1)[1].strip()
        for block in blocks
        for line in block.splitlines()
        if re.match(r"^\s*print\(.*\)\s+# ", line)
    ]
    assert len(promised) == 9
    assert out == promised
    assert "foreign-trace" in (tmp_path / "why.html").read_text()

    console = re.findall(r"```console\n(.*?)```", _section(text, "From the command line"), flags=re.S)
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
