"""``agentfootprint errors RUN.json``: every integrity finding of a stored run, as lines or JSON; bad input refused."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentfootprint.cli import app
from agentfootprint.explain import save_recording
from tests.explain.test_context_errors import ForgeToolResults, _agent, _call


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app(), list(args), env={"COLUMNS": "250"})
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


async def test_a_clean_run_prints_no_context_errors(tmp_path: Path) -> None:
    result = await _agent([_call(1, "search_orders"), "done"]).run("go")
    path = save_recording(result, tmp_path / "run.json")
    assert cli("errors", str(path)) == (0, "no context errors\n", "")
    assert cli("errors", str(path), "--json", "--strict") == (0, "[]\n", "")


async def test_planted_findings_are_listed_and_strict_fails(tmp_path: Path) -> None:
    replies = [_call(1, "get_order", order_id="A-17"), _call(2, "search_orders"), "done"]
    result = await _agent(replies, ForgeToolResults()).run("go")
    path = save_recording(result, tmp_path / "run.sqlite")
    code, out, _ = cli("errors", str(path))
    lines = out.splitlines()
    assert code == 0 and lines[0] == "4 context error(s)"
    assert [line.split()[0] for line in lines[1:]] == [
        "dangling-reference",
        "wire-mismatch",
        "wire-mismatch",
        "wire-mismatch",
    ]
    assert "[get_order] the evidence its arguments depend on was never given" in lines[1]
    code, out, _ = cli("errors", str(path), "--json", "--strict")
    rows = json.loads(out)
    assert code == 1 and [r["kind"] for r in rows] == ["dangling-reference", *["wire-mismatch"] * 3]
    assert rows[0]["stage_id"].startswith("tool-calls#") and rows[1]["source_id"] == "c1"


def test_a_missing_or_broken_file_is_a_one_line_refusal(tmp_path: Path) -> None:
    code, out, err = cli("errors", str(tmp_path / "absent.json"))
    assert code == 2 and out == "" and err.startswith("error [ERR_INVALID_RECORDING]: ")
    broken = tmp_path / "broken.json"
    broken.write_text('{"snapshot": {"run_id": 1, "secret": "hunter2"}}')
    code, out, err = cli("errors", str(broken))
    assert code == 2 and err.startswith("error [ERR_INVALID_RECORDING]: ") and "hunter2" not in err


async def test_a_composed_runs_invariant_violation_is_listed_from_its_recording(tmp_path: Path) -> None:
    from agentfootprint import Agent
    from agentfootprint.compose import Sequence
    from agentfootprint.providers import mock

    def cites(view: object) -> bool:
        return "[" in getattr(view, "answer", "")

    writer = Agent.create(provider=mock(reply="Shipped."), model="m", name="writer").invariants({"cites": cites})
    checker = Agent.create(provider=mock(reply="Shipped [orders]."), model="m", name="checker")
    pipeline = Sequence.create("s").step("draft", writer.build()).step("check", checker.build()).build()
    path = save_recording(await pipeline.run("go"), tmp_path / "composed.json")
    code, out, _ = cli("errors", str(path), "--json", "--strict")
    rows = json.loads(out)
    assert code == 1 and [(r["kind"], r["stage_id"], r["source_id"]) for r in rows] == [
        ("invariant-violation", "draft#10", "cites")
    ]
