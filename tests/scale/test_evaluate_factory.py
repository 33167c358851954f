"""evaluate() imports the agent factory from the current directory (as ``serve`` does), and its table shows why an
item errored (the error's type and scrubbed message), not only the type."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agentfootprint.scale import evaluate

FACTORY = """from agentfootprint import Agent
from agentfootprint.providers import mock

def make():
    return Agent.create(provider=mock(reply="The sum is 3.")).build()

def broken():
    raise RuntimeError("the model registry is down")
"""


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cwd_agents.py").write_text(FACTORY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "cwd_agents", raising=False)
    return tmp_path


async def test_evaluate_imports_the_factory_from_the_current_directory(in_project: Path) -> None:
    report = await evaluate("cwd_agents:make", [{"message": "1 plus 2?", "expected": "3"}])
    assert [item.outcome.answer for item in report.items] == ["The sum is 3."]
    assert report.summary.errors == 0


def _render(table: object) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(table)
    return out.getvalue()


async def test_the_table_shows_the_cause_of_an_errored_item(in_project: Path) -> None:
    report = await evaluate("cwd_agents:broken", [{"message": "1 plus 2?"}])
    (item,) = report.items
    assert item.outcome.status == "error" and item.outcome.error is not None
    shown = _render(report.table())
    assert "model registry is down" in shown and item.outcome.error.type in shown
