"""The audit trail under the recording dials (R004-135): default runs export as before (no dial fields); a bounded
export keeps the provenance keys and turns each read value into its shape; a verbatim one keeps them served."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint.audit import export_audit, verify_audit
from agentfootprint.flow import RecordingDials, RedactionPolicy, flow_chart

FULL = RecordingDials(read_tracking="full", commit_values="full", write_provenance="reads-prefix")


def chart() -> Any:
    return (
        flow_chart("Intake", lambda s: s.set("applicant", "Ada Lovelace"), id="intake")
        .then("Score", lambda s: s.append("notes", f"scored {s['applicant'][:3]}"), id="score")
        .build()
    )


def test_R004_135_default_recordings_export_without_any_dial_field() -> None:
    records = export_audit(chart().run_sync())
    text = json.dumps(records)
    assert "read_values" not in text and "read_keys" not in text
    assert records[2]["payload"]["writes"] == [
        {"path": "notes", "verb": "append", "shape": {"type": "array", "size": 1}}
    ]


def test_R004_135_bounded_export_shapes_read_values_and_keeps_provenance_keys() -> None:
    records = export_audit(chart().run_sync(recording=FULL))
    score = records[2]["payload"]
    assert score["read_values"] == {"applicant": {"type": "str", "size": 12}}
    assert score["writes"] == [
        {"path": "notes", "verb": "set", "shape": {"type": "array", "size": 1}, "read_keys": ["applicant"]}
    ]
    assert "Lovelace" not in json.dumps(records)
    assert verify_audit(records).valid


def test_R004_135_verbatim_export_keeps_served_read_values() -> None:
    run = chart().run_sync(recording=FULL, redaction=RedactionPolicy.of(keys=["applicant"]))
    score = export_audit(run, payload_mode="verbatim")[2]["payload"]
    assert score["read_values"] == {"applicant": "[REDACTED]"}
    assert score["writes"] == [{"path": "notes", "verb": "set", "value": ["scored Ada"], "read_keys": ["applicant"]}]
