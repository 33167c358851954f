"""``agentfootprint verify`` on a file that is not an audit bundle says what it is and how to write one; the
docs/audit.md block that writes a bundle runs as written and the CLI verifies its output."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentfootprint import Agent
from agentfootprint.audit import export_audit, verify_file, write_jsonl
from agentfootprint.explain import save_recording
from agentfootprint.providers import mock

DOC = Path(__file__).parents[2] / "docs" / "audit.md"


async def _result() -> object:
    return await Agent.create(provider=mock(reply="Shipped.")).build().run("Where is my order?")


async def test_a_recording_given_to_verify_is_named_as_a_recording_with_how_to_write_a_bundle(tmp_path: Path) -> None:
    run = tmp_path / "run.json"
    save_recording(await _result(), run)
    out = io.StringIO()
    assert verify_file(run, out=out) == 1
    text = out.getvalue()
    assert "is a recording" in text and "write_jsonl(export_audit(result)" in text


@pytest.mark.parametrize(
    ("content", "said"),
    [("hello, this is notes\n", "not JSON lines"), (json.dumps({"answer": "x"}), "one JSON document")],
)
def test_other_files_are_named_too(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "x.txt"
    path.write_text(content, encoding="utf-8")
    out = io.StringIO()
    assert verify_file(path, out=out) == 1 and said in out.getvalue()


async def test_a_broken_bundle_gets_no_hint_only_the_broken_record(tmp_path: Path) -> None:
    records = export_audit(await _result())
    records[1] = {**records[1], "type": "edited"}
    path = write_jsonl(records, tmp_path / "audit.jsonl")
    out = io.StringIO()
    assert verify_file(path, out=out) == 1
    assert out.getvalue().startswith("invalid: record 1:") and "write_jsonl" not in out.getvalue()


def test_the_docs_block_writes_a_bundle_the_cli_verifies(tmp_path: Path) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    subprocess.run([sys.executable, "-c", block], cwd=tmp_path, check=True, timeout=120)
    done = subprocess.run(
        [sys.executable, "-m", "agentfootprint", "verify", "audit.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and re.fullmatch(r"valid: \d+ records\n", done.stdout)
