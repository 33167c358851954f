"""The CLI reads other frameworks' OTLP traces: explain, report and diff take the file; import-trace saves a run."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentfootprint._cli_interop import foreign_recording, is_trace_file
from agentfootprint.cli import app
from agentfootprint.explain import backtrack, load_recording
from agentfootprint.interop import import_trace, to_otlp_json
from tests.interop.test_import import _pb_bytes, genai_run

runner = CliRunner()


def _trace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    t, ids = genai_run()
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(to_otlp_json(t.spans)))
    return path, ids


def test_explain_and_report_read_an_otlp_file(tmp_path: Path) -> None:
    path, ids = _trace(tmp_path)
    result = runner.invoke(app(), ["explain", str(path)], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    assert result.stdout == str(backtrack(import_trace(path))) + "\n"
    at = runner.invoke(app(), ["explain", str(path), "--at", ids["first"]], env={"COLUMNS": "250"})
    assert at.stdout.splitlines()[1] == f"Decided at {ids['first']}; 5 source(s) reached it:"
    page = tmp_path / "r.html"
    done = runner.invoke(app(), ["report", str(path), "-o", str(page)])
    assert done.exit_code == 0 and done.stdout == f"wrote {page}\n"
    assert "foreign-trace" in page.read_text()


def test_import_trace_writes_a_recording_explain_reads(tmp_path: Path) -> None:
    path, ids = _trace(tmp_path)
    out = tmp_path / "run.json"
    result = runner.invoke(app(), ["import-trace", str(path), "-o", str(out)])
    rec = load_recording(out)
    assert result.stdout == f"wrote {out}: 2 model call(s) of trace {rec.snapshot.run_id}\n"
    assert rec == import_trace(path)
    again = runner.invoke(app(), ["explain", str(out)], env={"COLUMNS": "250"})
    assert again.stdout.splitlines()[1] == f"Decided at {ids['last']}; 8 source(s) reached it:"


def test_protobuf_files_are_recognised_by_suffix(tmp_path: Path) -> None:
    t, _ = genai_run()
    pb = tmp_path / "trace.pb"
    pb.write_bytes(_pb_bytes(to_otlp_json(t.spans)))
    assert is_trace_file(pb) and not is_trace_file(tmp_path / "missing.pb")
    assert foreign_recording(str(pb), None) == import_trace(list(t.spans))
    native = tmp_path / "native.json"
    native.write_text('{"format": "agentfootprint.recording"}')
    assert foreign_recording(str(native), None) is None


def test_refusals_are_one_line_with_the_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": "sk-SECRET"}')
    result = runner.invoke(app(), ["explain", str(bad)])
    assert result.exit_code == 2
    assert result.stderr == "error [ERR_INVALID_TRACE]: trace has no resourceSpans list (not an OTLP/JSON trace)\n"
    path, _ = _trace(tmp_path)
    nowhere = runner.invoke(app(), ["import-trace", str(path), "-o", str(tmp_path / "no" / "run.json")])
    assert nowhere.exit_code == 2 and nowhere.stderr.startswith("error [ERR_CLI_INPUT]: cannot write the recording to")
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"resourceSpans": []}))
    refused = runner.invoke(app(), ["import-trace", str(empty)])
    assert refused.stderr == (
        "error [ERR_TRACE_NO_LLM_SPANS]: no LLM span in 0 span(s) under the auto convention(s) "
        "(OTel GenAI chat spans or OpenInference LLM spans)\n"
    )
