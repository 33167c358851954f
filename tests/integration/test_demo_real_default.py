"""``agentfootprint demo --real`` with its defaults proves its planted culprit on the real model (Gemma-3-270M)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agentfootprint.providers.local import LocalLLMError, model_file

from .conftest import needs_local_llm


def _gemma_missing() -> str | None:
    try:
        model_file("gemma3-270m", verify=False)
    except LocalLLMError as exc:
        return f"Gemma-3-270M is not installed ({exc.code}); run: make setup-local-model"
    return None


def test_the_cli_runs_the_real_demo_on_gemma_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agentfootprint import _demo_real
    from agentfootprint.cli import app

    seen: list[str] = []
    monkeypatch.setattr(_demo_real, "run_real_demo", lambda **kw: seen.append(kw["model"]))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app(), ["demo", "--real"]).exit_code == 0
    assert runner.invoke(app(), ["demo", "--real", "--model", "smollm2-135m"]).exit_code == 0
    assert seen == ["gemma3-270m", "smollm2-135m"]


@pytest.mark.integration
@needs_local_llm
def test_the_default_real_demo_confirms_the_archived_memo(tmp_path: Path) -> None:
    missing = _gemma_missing()
    if missing:
        pytest.skip(missing)
    from agentfootprint._demo_real import run_real_demo

    out = io.StringIO()
    result = run_real_demo(Console(file=out, width=80), report_path=str(tmp_path / "real.html"))
    assert (result["story"], result["answer"], result["confirmed"]) == ("door-code", "DOOR CODE: 4417", ["old-memo"])
    assert result["closing"].startswith("Proved: removing 'old-memo' turned the archived code 4417 into another")
    assert "{old-memo}  CONFIRMED" in out.getvalue()
    assert (tmp_path / "real.html").stat().st_size > 0
