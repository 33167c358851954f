"""A redacted secret never reaches an audit bundle, in either payload mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint.audit import export_audit, to_jsonl, verify_audit
from agentfootprint.flow import FlowSnapshot, RedactionPolicy, decide, flow_chart
from tests.audit._helpers import SENTINEL

POLICY = RedactionPolicy.of(keys=["ssn"])


def _stages(fail: bool, break_with_secret: bool = False) -> Any:
    def intake(s: Any) -> None:
        s["ssn"] = SENTINEL
        s["customer"] = {"name": "Grace", "ssn": SENTINEL, "ids": [{"ssn": SENTINEL}]}

    def note(s: Any) -> None:
        s["note"] = f"customer ssn {s['ssn']} on file"
        s.emit("checked", {"ssn": s["ssn"], "text": f"saw {s['ssn']}"})

    def route(s: Any) -> Any:
        return decide(s, [{"when": {"ssn": {"eq": SENTINEL}}, "then": "known", "label": "Known"}], "unknown")

    def known(s: Any) -> None:
        if fail:
            raise RuntimeError(f"lookup failed for {s['ssn']}")
        if break_with_secret:
            s.break_(f"done with {s['ssn']}")

    return (
        flow_chart("Intake", intake, id="intake")
        .then("Note", note, id="note")
        .decider("Route", route, id="route")
        .branch("known", "Known", known)
        .branch("unknown", "Unknown", lambda s: None)
        .default("unknown")
        .end()
        .build()
    )


def _snapshot(fail: bool) -> FlowSnapshot:
    chart = _stages(fail)
    if not fail:
        done: FlowSnapshot = chart.run_sync({"plain": 1}, redaction=POLICY).snapshot
        return done
    with pytest.raises(RuntimeError) as info:
        chart.run_sync({"ssn": SENTINEL}, redaction=POLICY)
    snapshot: FlowSnapshot = info.value.snapshot  # type: ignore[attr-defined]
    return snapshot


@pytest.mark.parametrize("fail", [False, True], ids=["completed", "failed"])
@pytest.mark.parametrize("mode", ["bounded", "verbatim"])
def test_sentinel_never_in_the_bundle(fail: bool, mode: str) -> None:
    snapshot = _snapshot(fail)
    assert snapshot.redacted
    records = export_audit(snapshot, payload_mode=mode)  # type: ignore[arg-type]
    assert SENTINEL not in json.dumps(records, ensure_ascii=False)
    assert SENTINEL not in to_jsonl(records)
    assert SENTINEL[:12] not in to_jsonl(records)
    assert records[0]["payload"]["redacted"] is True
    assert verify_audit(records).valid


def test_bounded_marks_redacted_writes_and_verbatim_keeps_the_placeholder() -> None:
    snapshot = _snapshot(False)
    bounded = export_audit(snapshot)
    writes = {w["path"]: w["shape"] for w in bounded[1]["payload"]["writes"]}
    assert writes["ssn"]["redacted"] is True
    assert "ssn" in bounded[1]["payload"]["redacted_paths"]
    verbatim = export_audit(snapshot, payload_mode="verbatim")
    values = {w["path"]: w["value"] for w in verbatim[1]["payload"]["writes"]}
    assert values["ssn"] == "[REDACTED]"
    assert values["customer"]["name"] == "Grace"


def test_secret_in_a_break_reason_is_not_served_verbatim() -> None:
    snapshot = _stages(False, break_with_secret=True).run_sync({}, redaction=POLICY).snapshot
    assert SENTINEL not in json.dumps(export_audit(snapshot, payload_mode="verbatim"))


def test_secret_in_a_break_reason_never_reaches_a_bounded_bundle() -> None:
    snapshot = _stages(False, break_with_secret=True).run_sync({}, redaction=POLICY).snapshot
    records = export_audit(snapshot)
    assert SENTINEL not in json.dumps(records)
    assert records[-1]["payload"]["break_reason"]["type"] == "str"
