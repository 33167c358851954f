"""The command line through Typer's CLI runner: recordings, clear refusals (never a traceback), serve's checks."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentfootprint import __version__
from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.cli import app
from agentfootprint.explain import save_recording

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app(), list(args), env={"COLUMNS": "250"})
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    agent = refunds_agent()
    agent.run_sync(QUESTION)
    return save_recording(agent, tmp_path / "run.json")


def test_version_option_and_command() -> None:
    assert cli("--version") == (0, f"agentfootprint {__version__}\n", "")
    assert cli("version")[1] == f"agentfootprint {__version__}\n"


def test_demo_saves_a_recording_that_explain_reads(tmp_path: Path) -> None:
    saved, report = tmp_path / "run.json", tmp_path / "report.html"
    code, out, _ = cli("demo", "--save", str(saved), "-o", str(report))
    assert code == 0 and f"agentfootprint explain {saved}" in out
    assert "(no text: a tool request)" in out, "the tool-call-only assistant turn is labelled, not an empty quote"
    code, out, _ = cli("explain", str(saved))
    assert code == 0 and "define_fact('vip-override-fact')" in out and "ANSWER" in out


def test_demo_refuses_a_report_in_a_missing_folder_before_running(tmp_path: Path) -> None:
    code, out, err = cli("demo", "--report", str(tmp_path / "missing" / "dir" / "r.html"))
    assert code == 2 and out == ""
    assert err.startswith("error [ERR_CLI_INPUT]: cannot write the report: folder ") and "does not exist" in err
    assert "Traceback" not in err


def test_demo_refuses_a_save_path_in_a_missing_folder(tmp_path: Path) -> None:
    code, _, err = cli("demo", "--save", str(tmp_path / "nope" / "run.json"), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "cannot write the recording" in err and not (tmp_path / "r.html").exists()


def test_report_to_a_missing_folder_is_one_line(recording: Path, tmp_path: Path) -> None:
    code, out, err = cli("report", str(recording), "-o", str(tmp_path / "missing" / "x.html"))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "ERR_CLI_INPUT" in err


def test_report_writes_the_page(recording: Path, tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    code, out, _ = cli("report", str(recording), "-o", str(target))
    assert code == 0 and out == f"wrote {target}\n" and "vip-override-fact" in target.read_text()


@pytest.mark.parametrize("command", ["explain", "report"])
def test_a_missing_recording_says_how_to_make_one(command: str, tmp_path: Path) -> None:
    code, _, err = cli(command, str(tmp_path / "missing.json"))
    assert code == 2 and "ERR_INVALID_RECORDING" in err
    assert "agentfootprint demo --save run.json" in err and "save_recording(agent, 'run.json')" in err


def test_unknown_at_step_lists_the_valid_ones(recording: Path) -> None:
    code, _, err = cli("explain", str(recording), "--at", "call-llm#99")
    assert code == 2 and "ERR_BACKTRACK" in err and "call-llm#99" not in err
    assert "steps you can backtrack from: call-llm#5, route#6, tool-calls#7" in err and "final#14" in err
    code, out, _ = cli("explain", str(recording), "--at", "call-llm#5")
    assert code == 0 and "Decided at call-llm#5" in out


def test_sqlite_recordings_take_a_run_id(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    first = refunds_agent()
    first.run_sync(QUESTION)
    save_recording(first, db)
    second = refunds_agent().without("vip-override-fact")
    second.run_sync(QUESTION)
    save_recording(second, db)
    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT run_id FROM recordings ORDER BY created")]
    assert len(ids) == 2
    code, out, _ = cli("explain", str(db), "--run-id", ids[0])
    assert code == 0 and "vip-override-fact" in out and "APPROVED" in out
    code, out, _ = cli("explain", str(db))
    assert code == 0 and "vip-override-fact" not in out and "DECLINED" in out, "the newest run by default"
    code, _, err = cli("explain", str(db), "--run-id", "no-such-run")
    assert code == 2 and "ERR_INVALID_RECORDING" in err


def test_lint_tools_on_the_wrong_kind_of_file_says_what_it_expected(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html></html>")
    code, _, err = cli("lint-tools", str(page))
    assert code == 2 and "page.html is not JSON" in err and "expects a JSON file holding a list of tools" in err
    assert "Traceback" not in err


def _module(tmp_path: Path, source: str) -> None:
    (tmp_path / "my_agents.py").write_text(textwrap.dedent(source))


def test_serve_refuses_a_factory_that_does_not_build_an_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(__import__("sys").modules, "my_agents", raising=False)
    _module(tmp_path, "def make():\n    return 42\n")
    code, _, err = cli("serve", "my_agents:make", "--port", "0")
    assert code == 2 and "my_agents:make returned int, not an Agent" in err


def test_serve_refuses_a_factory_that_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(__import__("sys").modules, "my_agents", raising=False)
    _module(tmp_path, "def make():\n    raise RuntimeError('no key configured')\n")
    code, _, err = cli("serve", "my_agents:make", "--port", "0")
    assert code == 2 and "failed when called at start-up: RuntimeError: no key configured" in err


def test_serve_imports_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentfootprint.hosting.serve as serving

    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(__import__("sys").modules, "my_agents", raising=False)
    _module(
        tmp_path,
        """
        from agentfootprint import Agent
        from agentfootprint.providers import mock

        def make():
            return Agent.create(provider=mock(reply="hi"), model="m").build()
        """,
    )
    started: list[str] = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: started.append(f"{kw['host']}:{kw['port']}"))
    code, _, err = cli("serve", "my_agents:make", "--port", "8123")
    assert (code, err, started) == (0, "", ["127.0.0.1:8123"])
    assert serving.load_factory("my_agents:make")().run_sync("x").answer == "hi"
