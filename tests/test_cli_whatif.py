"""``agentfootprint export-test`` and ``export-dataset``: a proof or a recording becomes an offline pytest file that
passes, stored runs become JSON lines; bad paths and files are one-line refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentfootprint.cli import app
from agentfootprint.explain import freeze_proof_sync, localize_sync, save_recording
from tests.explain.test_export_test import WRONG, _flipped, build_agent

QUESTION = "Should case 17 be approved?"
FACTORY_MODULE = """
import sys
sys.path.insert(0, {root!r})
from tests.explain.test_export_test import build_agent


def agent():
    return build_agent()
"""


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app(), list(args), env={"COLUMNS": "250"})
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _pytest(folder: Path) -> tuple[int, str]:
    """Run the generated tests in their own folder (the repository's config and conftest stay out)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(folder)},
    )
    return done.returncode, done.stdout


@pytest.fixture
def case(tmp_path: Path) -> Path:
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "cases_agent.py").write_text(FACTORY_MODULE.format(root=str(Path(__file__).parents[1])))
    return folder


def test_a_proof_exports_to_a_test_that_passes_offline_and_fails_with_the_culprit_back_in(case: Path) -> None:
    run = build_agent().run_sync(QUESTION, seed=7)
    report = localize_sync(build_agent(), run=run, outcome_changed=_flipped, progress=False)
    proof = freeze_proof_sync(report, run, outcome_changed=_flipped)
    saved = proof.save(case / "proof.json")
    code, out, err = cli("export-test", str(saved), "-o", str(case / "test_case.py"), "--agent", "cases_agent:agent")
    assert (code, out, err) == (0, f"wrote {case / 'test_case.py'}\n", "")
    rc, log = _pytest(case)
    assert rc == 0 and "2 passed" in log, log
    text = (case / "test_case.py").read_text()
    (case / "test_case.py").write_text(text.replace("CULPRITS: list[list[str]] = [['memo']]", "CULPRITS = [[]]"))
    rc, log = _pytest(case)
    assert rc == 1 and "1 failed, 1 passed" in log, log
    assert "assert 'APPROVED' == 'DECLINED'" in log


def test_a_recording_exports_to_a_test_that_its_agent_passes_and_another_agent_fails(case: Path) -> None:
    run = build_agent().run_sync(QUESTION, seed=3)
    saved = save_recording(run, case / "runs.sqlite")
    save_recording(build_agent().run_sync("Another question", seed=4), saved)
    code, _, _ = cli("export-test", str(saved), "--run-id", run.run_id, "-o", str(case / "test_run.py"), "--agent",
                     "cases_agent:agent")  # fmt: skip
    assert code == 0 and run.run_id in (case / "test_run.py").read_text()
    rc, log = _pytest(case)
    assert rc == 0 and "1 passed" in log, log
    (case / "cases_agent.py").write_text(
        (case / "cases_agent.py").read_text().replace("return build_agent()", "return build_agent(('policy',))")
    )
    rc, log = _pytest(case)
    assert rc == 1 and "CassetteMissError" in log and "1 failed" in log, log
    assert run.answer == WRONG


def test_export_test_refuses_without_a_factory_and_bad_paths_in_one_line(case: Path, tmp_path: Path) -> None:
    saved = save_recording(build_agent().run_sync(QUESTION, seed=3), case / "run.json")
    code, out, err = cli("export-test", str(saved), "-o", str(case / "t.py"))
    assert code == 2 and out == "" and err.startswith("error [ERR_EXPORT_FACTORY]: the test replays the agent")
    code, _, err = cli("export-test", str(saved), "-o", str(tmp_path / "missing" / "t.py"), "--agent", "m:f")
    assert code == 2 and err == "error [ERR_CLI_INPUT]: cannot write the test file: its folder does not exist\n"
    code, _, err = cli("export-test", str(saved), "-o", str(tmp_path), "--agent", "m:f")
    assert code == 2 and "the path is a folder" in err
    junk = case / "junk.json"
    junk.write_text('{"format": "agentfootprint.proof", "input": 1}')
    code, _, err = cli("export-test", str(junk), "-o", str(case / "t.py"), "--agent", "m:f")
    assert code == 2 and err.startswith("error [ERR_EXPORT_INPUT]: proof field") and "Traceback" not in err
    code, _, err = cli("export-test", str(case / "absent.json"), "-o", str(case / "t.py"), "--agent", "m:f")
    assert code == 2 and err.startswith("error [ERR_EXPORT_INPUT]")
    code, _, err = cli("export-test", str(case / "absent.sqlite"), "-o", str(case / "t.py"), "--agent", "m:f")
    assert code == 2 and err == "error [ERR_EXPORT_INPUT]: no such recording in that SQLite file\n"
    assert not (case / "t.py").exists()


def test_export_dataset_writes_one_line_per_run_from_json_and_sqlite(tmp_path: Path) -> None:
    a = build_agent().run_sync(QUESTION, seed=7)
    b = build_agent(("policy",)).run_sync("And case 18?", seed=1)
    c = build_agent().run_sync("And case 19?", seed=2)
    one = save_recording(a, tmp_path / "a.json")
    db = tmp_path / "runs.sqlite"
    save_recording(b, db)
    save_recording(c, db)
    out = tmp_path / "runs.jsonl"
    code, stdout, _ = cli("export-dataset", str(one), str(db), "-o", str(out))
    assert (code, stdout) == (0, f"wrote 3 run(s) to {out}\n")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["run_id"], r["input"]) for r in rows] == [
        (a.run_id, QUESTION),
        (b.run_id, "And case 18?"),
        (c.run_id, "And case 19?"),
    ]
    assert all(set(r) == {"run_id", "agent", "input", "answer", "sources"} for r in rows)
    code, _, err = cli("export-dataset", str(tmp_path / "none.json"), "-o", str(out))
    assert code == 2 and err.startswith("error [ERR_INVALID_RECORDING]")
    code, _, err = cli("export-dataset", str(one), "-o", str(tmp_path / "no" / "x.jsonl"))
    assert code == 2 and "cannot write the dataset" in err


CHAIN_MODULE = """
import sys
sys.path.insert(0, {root!r})
from tests.explain.test_export_test_members import pipeline
from tests.explain.test_fork import ASK, World


def runner():
    return pipeline()


def asking():
    world = World(["t0", ASK, "t0"], ["t0"], [])
    return world.agent()
"""


def test_a_composition_run_and_a_resumed_run_export_to_tests_that_pass_offline(case: Path) -> None:
    (case / "chain_mod.py").write_text(CHAIN_MODULE.format(root=str(Path(__file__).parents[1])))
    sys.path.insert(0, str(case))
    try:
        import chain_mod
    finally:
        sys.path.remove(str(case))
        sys.modules.pop("chain_mod", None)
    piped = chain_mod.runner().run_sync(QUESTION, seed=7)
    agent = chain_mod.asking()
    paused = agent.run_sync("go", seed=7)
    resumed = agent.resume_sync(paused.checkpoint or {}, "yes")
    assert (piped.answer, paused.status, resumed.status) == (WRONG, "paused", "completed")
    for name, run, factory in (
        ("piped", piped, "chain_mod:runner"),
        ("paused", paused, "chain_mod:asking"),
        ("resumed", resumed, "chain_mod:asking"),
    ):
        saved = save_recording(run, case / f"{name}.json")
        code, _, err = cli("export-test", str(saved), "-o", str(case / f"test_{name}.py"), "--agent", factory)
        assert (code, err) == (0, "")
    rc, log = _pytest(case)
    assert rc == 0 and "3 passed" in log, log
