from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.audit import (
    AUDIT_FORMAT,
    COMMIT_TYPE,
    GENESIS_TYPE,
    ZERO_HASH,
    AuditExportError,
    AuditHead,
    audit_head,
    export_audit,
    record_hash,
    to_jsonl,
    verify_audit,
    write_jsonl,
)
from agentfootprint.flow import flow_chart, pause
from tests.audit._helpers import FakeAgent, loan_chart, make_events

FIELDS = {"seq", "timestamp", "type", "payload", "meta", "prev_hash", "hash"}


@pytest.fixture
def result() -> Any:
    return loan_chart().run_sync({"credit_score": 580})


def test_genesis_then_one_record_per_commit(result: Any) -> None:
    records = export_audit(result.snapshot)
    assert records[0]["type"] == GENESIS_TYPE
    assert records[0]["prev_hash"] == ZERO_HASH
    assert [r["seq"] for r in records] == list(range(len(records)))
    assert len(records) == 1 + len(result.snapshot.commit_log)
    assert all(r["type"] == COMMIT_TYPE for r in records[1:])
    assert [r["meta"]["idx"] for r in records[1:]] == [c.idx for c in result.snapshot.commit_log]
    for prev, rec in itertools.pairwise(records):
        assert rec["prev_hash"] == prev["hash"]
    for rec in records:
        assert set(rec) == FIELDS
        assert rec["hash"] == record_hash(rec)


def test_genesis_describes_the_run(result: Any) -> None:
    g = export_audit(result)[0]
    assert g["payload"]["format"] == AUDIT_FORMAT
    assert g["payload"]["canonicalization"] == "RFC8785"
    assert g["payload"]["run_id"] == result.run_id
    assert g["payload"]["chart_id"] == "intake"
    assert g["payload"]["payload_mode"] == "bounded"
    assert g["meta"] == {"kind": "genesis", "run_id": result.run_id}
    assert isinstance(g["timestamp"], str) and g["timestamp"].endswith("Z")


def test_flow_result_and_snapshot_give_the_same_chain_shape(result: Any) -> None:
    a, b = export_audit(result), export_audit(result.snapshot)
    assert [r["payload"] for r in a[1:]] == [r["payload"] for r in b[1:]]


def test_everything_is_plain_json(result: Any) -> None:
    for mode in ("bounded", "verbatim"):
        records = export_audit(result, payload_mode=mode)
        assert json.loads(json.dumps(records)) == records
        assert verify_audit(json.loads(json.dumps(records))).valid


def test_bounded_payload_keeps_names_types_and_sizes_not_values(result: Any) -> None:
    records = export_audit(result)
    intake = records[1]["payload"]
    assert intake["writes"] == [
        {"path": "applicant", "verb": "set", "shape": {"type": "str", "size": 12}},
        {"path": "profile", "verb": "set", "shape": {"type": "object", "size": 2, "keys": ["score", "tags"]}},
    ]
    text = json.dumps(records)
    assert "Lovelace" not in text and "58013" not in text
    route = records[2]["payload"]["decision"]
    assert route["chosen"] == ["reject"]
    assert route["rules"][0]["label"] == "Has profile"
    assert "threshold" not in json.dumps(route) and "actual" not in json.dumps(route)
    notify = records[-1]["payload"]["emits"]
    assert notify == [{"name": "notified", "shape": {"type": "object", "size": 2, "keys": ["to", "channel"]}}]


def test_verbatim_keeps_served_values(result: Any) -> None:
    records = export_audit(result, payload_mode="verbatim")
    intake = records[1]["payload"]
    assert intake["writes"][0] == {"path": "applicant", "verb": "set", "value": "Ada Lovelace"}
    assert records[0]["payload"]["initial_state"] == {"credit_score": 580}
    assert records[0]["payload"]["state"]["decision"] == "rejected"
    assert verify_audit(records).valid


def test_bounded_error_keeps_the_exception_type_only() -> None:
    def boom(s: Any) -> None:
        s["x"] = 1
        raise ValueError("account 99-1234 is locked")

    chart = flow_chart("Boom", boom, id="boom").build()
    with pytest.raises(ValueError) as info:
        chart.run_sync({})
    snapshot = info.value.snapshot  # type: ignore[attr-defined]
    bounded = export_audit(snapshot)
    assert bounded[1]["payload"]["failed"] is True
    assert bounded[1]["payload"]["error"] == {"exception": "ValueError", "size": len(snapshot.commit_log[0].error)}
    assert "99-1234" not in json.dumps(bounded)
    verbatim = export_audit(snapshot, payload_mode="verbatim")
    assert "99-1234" in verbatim[1]["payload"]["error"]
    assert verify_audit(bounded).valid and verify_audit(verbatim).valid


def test_agent_like_object_includes_events_after_commits_in_seq_order(result: Any) -> None:
    agent = FakeAgent(result.snapshot, make_events(result.run_id))
    records = export_audit(agent)
    kinds = [r["meta"]["kind"] for r in records]
    n_commits = len(result.snapshot.commit_log)
    assert kinds == ["genesis"] + ["commit"] * n_commits + ["event"] * 3
    events = records[1 + n_commits :]
    assert [e["meta"]["event_seq"] for e in events] == [1, 2, 3]
    assert events[0]["type"] == "agentfootprint.stream.tool_start"
    assert events[0]["timestamp"] == "2023-11-14T22:13:20.000000Z"
    assert events[0]["payload"]["tool_name"] == "lookup"
    assert events[0]["payload"]["arguments"] == {"type": "object", "size": 2, "keys": ["query", "k"]}
    assert "paris" not in json.dumps(records)
    assert records[0]["payload"]["event_count"] == 3
    assert verify_audit(records).valid


def test_events_keyword_overrides_and_accepts_dicts(result: Any) -> None:
    events = [{"type": "agentfootprint.cost.usage", "payload": {"input_tokens": 10}, "meta": {"seq": 7}}]
    records = export_audit(result, events=events, payload_mode="verbatim")
    assert records[-1]["payload"] == {"input_tokens": 10}
    assert records[-1]["timestamp"] is None
    assert verify_audit(records).valid


def test_agent_that_has_not_run_is_refused() -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(FakeAgent(None))
    assert info.value.code == "ERR_AUDIT_NO_RUN"


@pytest.mark.parametrize("bad", [None, 42, "text", {"run_id": "x"}])
def test_unexportable_inputs_are_refused(bad: Any) -> None:
    with pytest.raises(AuditExportError):
        export_audit(bad)


def test_unknown_payload_mode_is_refused(result: Any) -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(result, payload_mode="everything")  # type: ignore[arg-type]
    assert info.value.code == "ERR_AUDIT_PAYLOAD_MODE"


def test_reserved_event_type_is_refused(result: Any) -> None:
    with pytest.raises(AuditExportError):
        export_audit(result, events=[{"type": GENESIS_TYPE, "payload": {}, "meta": {}}])


def test_values_outside_jcs_are_made_representable() -> None:
    def stage(s: Any) -> None:
        s["big"] = 2**70
        s["inf"] = float("inf")
        s["nan"] = float("nan")
        s["tuple"] = (1, 2)

    snapshot = flow_chart("S", stage, id="s").build().run_sync({}).snapshot
    records = export_audit(snapshot, payload_mode="verbatim")
    values = {w["path"]: w["value"] for w in records[1]["payload"]["writes"]}
    assert values["big"] == str(2**70)
    assert values["inf"] == "Infinity" and values["nan"] == "NaN"
    assert values["tuple"] == [1, 2]
    json.dumps(records, allow_nan=False)
    assert verify_audit(records).valid
    assert verify_audit(to_jsonl(records)).valid


def test_to_jsonl_is_one_canonical_record_per_line(result: Any, tmp_path: Path) -> None:
    records = export_audit(result)
    text = to_jsonl(records)
    lines = text.splitlines()
    assert len(lines) == len(records)
    assert [json.loads(line) for line in lines] == records
    assert " " not in lines[1].split('"hash"')[0].replace("Has profile", "")
    path = write_jsonl(records, tmp_path / "audit.jsonl")
    assert path.read_text(encoding="utf-8") == text
    assert verify_audit(path.read_text(encoding="utf-8")).valid


def test_key_order_does_not_change_hashes(result: Any) -> None:
    records = export_audit(result, payload_mode="verbatim")

    def reverse(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reverse(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reverse(v) for v in value]
        return value

    shuffled = [reverse(r) for r in records]
    assert [list(r) for r in shuffled] != [list(r) for r in records]
    assert [record_hash(r) for r in shuffled] == [r["hash"] for r in records]
    assert verify_audit(shuffled).valid


# -- segments ---------------------------------------------------------------------------------------------------
def _paused_chart() -> Any:
    def ask(s: Any) -> None:
        s["asked"] = True
        s["answer"] = pause({"question": "ok?"})

    return flow_chart("Ask", ask, id="ask").then("Done", lambda s: s.set("done", True), id="done").build()


def test_a_paused_and_resumed_run_exported_in_two_parts_stays_chained() -> None:
    chart = _paused_chart()
    first = chart.run_sync({})
    assert first.paused
    part1 = export_audit(first)
    second = chart.resume_sync(json.loads(json.dumps(first.checkpoint)), "yes")
    part2 = export_audit(second, segment=part1)

    assert part2[0]["type"] == GENESIS_TYPE
    assert part2[0]["prev_hash"] == part1[-1]["hash"]
    assert part2[0]["seq"] == part1[-1]["seq"] + 1
    assert part2[0]["payload"]["continues"] is True
    exported = [r["meta"]["idx"] for r in part1 + part2 if r["meta"]["kind"] == "commit"]
    assert exported == [c.idx for c in second.snapshot.commit_log]  # every commit exactly once

    assert verify_audit(part1 + part2).valid
    assert verify_audit(to_jsonl(part1) + to_jsonl(part2)).valid
    assert verify_audit(part2, previous=part1).valid
    assert verify_audit(part2, previous=part1[-1]).valid
    assert verify_audit(part2, previous=audit_head(part1)).valid
    alone = verify_audit(part2)
    assert not alone.valid and alone.broken_at == 0 and "previous" in (alone.reason or "")


def test_segment_accepts_an_audit_head_and_skips_exported_events(result: Any) -> None:
    events = make_events(result.run_id, 3)
    part1 = export_audit(result, events=events[1:])  # seq 1 and 2
    head = audit_head(part1)
    assert head == AuditHead(
        seq=part1[-1]["seq"],
        hash=part1[-1]["hash"],
        run_id=result.run_id,
        next_commit_idx=len(result.snapshot.commit_log),
        last_event_seq=2,
        last_event_timestamp=part1[-1]["timestamp"],
    )
    part2 = export_audit(result, events=events, segment=head.model_dump())
    assert [r["meta"]["kind"] for r in part2] == ["genesis", "event"]
    assert part2[1]["meta"]["event_seq"] == 3
    assert verify_audit(part1 + part2).valid


def test_a_different_run_chained_after_gets_its_own_genesis_and_all_commits(result: Any) -> None:
    other = loan_chart().run_sync({})
    part1 = export_audit(result)
    part2 = export_audit(other, segment=part1)
    assert part2[0]["payload"]["continues"] is False
    assert len(part2) == 1 + len(other.snapshot.commit_log)
    whole = part1 + part2
    assert sum(r["type"] == GENESIS_TYPE for r in whole) == 2
    assert verify_audit(whole).valid


def test_tampering_across_the_segment_boundary_is_detected(result: Any) -> None:
    part1 = export_audit(result)
    part2 = export_audit(loan_chart().run_sync({}), segment=part1)
    part1[-1]["payload"]["idx"] = 99
    v = verify_audit(part1 + part2)
    assert not v.valid and v.broken_at == len(part1) - 1
    assert not verify_audit(part2, previous=part1).valid or part1[-1]["hash"] == part2[0]["prev_hash"]


@pytest.mark.parametrize("bad", [[], [{"seq": "x"}], {"seq": 1}, 7, [{"seq": 1, "hash": "zz", "prev_hash": ""}]])
def test_malformed_segment_is_refused(result: Any, bad: Any) -> None:
    with pytest.raises(AuditExportError):
        export_audit(result, segment=bad)
