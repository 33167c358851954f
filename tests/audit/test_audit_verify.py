from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.audit import (
    AuditVerification,
    export_audit,
    record_hash,
    to_jsonl,
    verify_audit,
    verify_file,
)
from tests.audit._helpers import FakeAgent, loan_chart, make_events


@pytest.fixture
def records() -> list[dict[str, Any]]:
    result = loan_chart().run_sync({})
    return export_audit(FakeAgent(result.snapshot, make_events(result.run_id)), payload_mode="verbatim")


def test_valid_bundle(records: list[dict[str, Any]]) -> None:
    v = verify_audit(records)
    assert isinstance(v, AuditVerification)
    assert (v.valid, v.broken_at, v.reason, v.count) == (True, None, None, len(records))


def test_payload_change_is_named(records: list[dict[str, Any]]) -> None:
    records[2]["payload"]["stage_id"] = "other"
    v = verify_audit(records)
    assert (v.valid, v.broken_at) == (False, 2)
    assert "hash" in (v.reason or "")


def test_rehashed_record_is_named(records: list[dict[str, Any]]) -> None:
    records[3]["payload"]["stage_id"] = "forged"
    records[3]["hash"] = record_hash(records[3])
    v = verify_audit(records)
    assert (v.valid, v.broken_at) == (False, 3)
    assert "re-hashed" in (v.reason or "")


def test_rehashed_prev_hash_change_is_named(records: list[dict[str, Any]]) -> None:
    records[3]["prev_hash"] = "1" * 64
    records[3]["hash"] = record_hash(records[3])
    v = verify_audit(records)
    assert (v.valid, v.broken_at) == (False, 3)


def test_rehashed_second_to_last_record_is_named(records: list[dict[str, Any]]) -> None:
    k = len(records) - 2
    records[k]["payload"]["x"] = 1
    records[k]["hash"] = record_hash(records[k])
    assert verify_audit(records).broken_at == k


def test_deleted_record(records: list[dict[str, Any]]) -> None:
    del records[2]
    v = verify_audit(records)
    assert (v.valid, v.broken_at) == (False, 2)
    assert "seq" in (v.reason or "")


def test_reordered_records(records: list[dict[str, Any]]) -> None:
    records[2], records[3] = records[3], records[2]
    assert verify_audit(records).broken_at == 2


def test_truncated_in_the_middle(records: list[dict[str, Any]]) -> None:
    assert verify_audit(records[:2] + records[4:]).broken_at == 2


def test_missing_genesis(records: list[dict[str, Any]]) -> None:
    v = verify_audit(records[1:])
    assert (v.valid, v.broken_at) == (False, 0)


def test_genesis_type_is_required(records: list[dict[str, Any]]) -> None:
    records[0]["type"] = "agentfootprint.audit.commit"
    records[0]["hash"] = record_hash(records[0])
    v = verify_audit(records)
    assert (v.broken_at, v.reason) == (0, "first record is not a genesis record")


def test_field_set_must_be_exact(records: list[dict[str, Any]]) -> None:
    extra = copy.deepcopy(records)
    extra[1]["note"] = "hi"
    v = verify_audit(extra)
    assert (v.broken_at, v.reason) == (1, "record has unexpected fields: note")
    missing = copy.deepcopy(records)
    del missing[1]["timestamp"]
    v = verify_audit(missing)
    assert (v.broken_at, v.reason) == (1, "record is missing fields: timestamp")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seq", "1"),
        ("seq", True),
        ("seq", 1.0),
        ("timestamp", 5),
        ("type", ""),
        ("type", None),
        ("payload", []),
        ("meta", "x"),
        ("prev_hash", "ABC"),
        ("hash", "G" * 64),
        ("hash", None),
    ],
)
def test_wrong_field_types(records: list[dict[str, Any]], field: str, value: Any) -> None:
    records[1][field] = value
    v = verify_audit(records)
    assert (v.valid, v.broken_at) == (False, 1)
    assert field in (v.reason or "")


def test_jsonl_text_and_whole_json_array_text(records: list[dict[str, Any]]) -> None:
    assert verify_audit(to_jsonl(records)).valid
    assert verify_audit(to_jsonl(records).encode("utf-8")).valid
    assert verify_audit(json.dumps(records, indent=2)).valid
    assert verify_audit("\n\n" + to_jsonl(records) + "\n\n").valid
    lines = to_jsonl(records).splitlines()
    lines[3] = lines[3].replace('"seq":3', '"seq":30')
    assert verify_audit("\n".join(lines)).broken_at == 3


def test_empty_bundle_is_invalid() -> None:
    empties: list[Any] = [[], "", "\n \n"]
    for empty in empties:
        v = verify_audit(empty)
        assert (v.valid, v.broken_at) == (False, 0)


def test_previous_must_be_well_formed(records: list[dict[str, Any]]) -> None:
    v = verify_audit(records, previous={"seq": "x"})
    assert (v.valid, v.broken_at) == (False, 0)
    assert "previous" in (v.reason or "")


def test_reasons_never_quote_record_values(records: list[dict[str, Any]]) -> None:
    secret = "TOPSECRET-VALUE-42"
    cases: list[Any] = []
    for field in ("seq", "timestamp", "type", "prev_hash", "hash"):
        bad = copy.deepcopy(records)
        bad[2][field] = secret
        cases.append(bad)
    bad = copy.deepcopy(records)
    bad[2]["payload"]["writes"] = secret
    cases.append(bad)
    bad = copy.deepcopy(records)
    bad[2][secret] = secret
    cases.append(bad)
    cases.append(to_jsonl(records) + secret + "\n")
    cases.append(secret)
    for case in cases:
        v = verify_audit(case)
        assert not v.valid
        assert secret not in (v.reason or "")


# -- CLI hook ---------------------------------------------------------------------------------------------------
def test_verify_file_exit_codes(
    records: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(to_jsonl(records), encoding="utf-8")
    assert verify_file(good) == 0
    assert f"valid: {len(records)} records" in capsys.readouterr().out

    records[2]["payload"]["stage_id"] = "x"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(to_jsonl(records), encoding="utf-8")
    assert verify_file(str(bad)) == 1
    out = capsys.readouterr().out
    assert "invalid: record 2:" in out and "hash" in out

    assert verify_file(tmp_path / "missing.jsonl") == 2
    assert "cannot read" in capsys.readouterr().err
    assert verify_file(tmp_path) == 2
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert verify_file(binary) == 2
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json at all\n", encoding="utf-8")
    assert verify_file(garbage) == 1
    assert "invalid: record 0: line is not valid JSON" in capsys.readouterr().out
