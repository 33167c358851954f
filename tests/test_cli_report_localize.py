"""``agentfootprint report RUN.json --agent module:factory``: a saved run's report gets its suspects proved by reruns
on the factory's agent (without ``--agent`` it has none, as a recording alone cannot rerun)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.cli import app
from agentfootprint.explain import save_recording

FACTORY = "agentfootprint._flagship:refunds_agent"


def _saved(tmp_path: Path) -> Path:
    return save_recording(refunds_agent().run_sync(QUESTION), tmp_path / "run.json")


def test_a_saved_runs_report_proves_its_culprit_with_the_agent_factory(tmp_path: Path) -> None:
    run, page = _saved(tmp_path), tmp_path / "report.html"
    done = CliRunner().invoke(
        app(), ["report", str(run), "-o", str(page), "--agent", FACTORY, "--changed-if", "APPROVED"]
    )
    assert done.exit_code == 0, done.output
    assert "reruns)" in done.output
    html = page.read_text()
    assert "CAUSAL: ablating fact &#x27;vip-override-fact&#x27;" in html and "<mark class='culprit'" in html


def test_without_the_factory_the_report_has_no_verdicts(tmp_path: Path) -> None:
    run, page = _saved(tmp_path), tmp_path / "report.html"
    done = CliRunner().invoke(app(), ["report", str(run), "-o", str(page)])
    assert done.exit_code == 0 and "CAUSAL" not in page.read_text()


def test_a_factory_that_cannot_be_loaded_is_refused_without_writing(tmp_path: Path) -> None:
    run, page = _saved(tmp_path), tmp_path / "report.html"
    done = CliRunner().invoke(app(), ["report", str(run), "-o", str(page), "--agent", "no_such_module_x:make"])
    assert done.exit_code != 0 and not page.exists()
    assert "Traceback" not in done.output
