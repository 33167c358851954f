"""``agentfootprint ui PATH [--host H] [--port N] [--agent module:factory]``: serves the explorer (uvicorn is
replaced by a recorder here); the demo's recording opens with its culprit provable; bad input is one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from agentfootprint.cli import app


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    import uvicorn

    seen: dict[str, Any] = {}

    def record(application: Any, **kwargs: Any) -> None:
        seen["app"] = application
        seen.update(kwargs)

    monkeypatch.setattr(uvicorn, "run", record)
    return seen


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app(), list(args), env={"COLUMNS": "250"})


def test_the_demo_recording_opens_with_its_culprit_provable(
    tmp_path: Path, served: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("demo", "--save", "run.json", "-o", "report.html").exit_code == 0
    result = invoke(
        "ui", "run.json", "--host", "127.0.0.1", "--port", "8790", "--agent", "agentfootprint._flagship:refunds_agent"
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("why explorer on http://127.0.0.1:8790/ (culprits provable")
    assert (served["host"], served["port"]) == ("127.0.0.1", 8790)
    with TestClient(served["app"]) as client:
        run_id = client.get("/api/runs").json()["runs"][0]["run_id"]
        job = client.post("/api/localize", json={"run_id": run_id, "keyword": "APPROVED", "mode": "single"}).json()
        with client.stream("GET", f"/api/localize/{job['job_id']}/events") as stream:
            for _ in stream.iter_lines():
                pass
        report = client.get(f"/api/localize/{job['job_id']}").json()["report"]
    assert [s["id"] for s in report["suspects"] if s["verdict"] == "confirmed"] == ["vip-override-fact"]


def test_without_an_agent_it_serves_read_only(tmp_path: Path, served: dict[str, Any]) -> None:
    result = invoke("ui", str(tmp_path))
    assert result.exit_code == 0
    assert "read-only: pass --agent to prove" in result.output
    assert served["port"] == 8765
    with TestClient(served["app"]) as client:
        assert client.get("/api/info").json() == {"can_prove": False, "version": 1}
        assert client.get("/api/runs").json()["total"] == 0


def test_bad_paths_and_factories_are_one_line_refusals(tmp_path: Path, served: dict[str, Any]) -> None:
    missing = invoke("ui", str(tmp_path / "absent.json"))
    assert missing.exit_code == 2
    assert missing.output.strip().startswith("error [ERR_EXPLORER_PATH]:")
    assert "Traceback" not in missing.output
    bad = invoke("ui", str(tmp_path), "--agent", "not a target")
    assert bad.exit_code == 2
    assert bad.output.count("\n") == 1
    assert "app" not in served
