"""verify_audit, exactly: every failure's index and reason text, the depth guard at its boundary, what
``previous=`` accepts, and where a continued segment breaks."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from agentfootprint.audit import (
    audit_head,
    export_audit,
    generate_signing_key,
    record_hash,
    sign_audit,
    to_jsonl,
    verify_audit,
)
from agentfootprint.audit import verify as verify_module
from agentfootprint.audit._canonical import as_doubles
from tests.audit._helpers import FakeAgent, loan_chart, make_events

Records = list[dict[str, Any]]


@pytest.fixture
def records() -> Records:
    return export_audit(loan_chart().run_sync({}))


def outcome(bundle: Any, **kwargs: Any) -> tuple[bool, int | None, str | None, int]:
    v = verify_audit(bundle, **kwargs)
    return v.valid, v.broken_at, v.reason, v.count


def rehash(record: dict[str, Any]) -> dict[str, Any]:
    record["hash"] = record_hash(record)
    return record


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = {"a": value}
    return value


def test_depth_guard_boundary(records: Records) -> None:
    """A record nests at most MAX_RECORD_DEPTH levels (the record itself is level 0, its payload level 1)."""
    assert verify_module.MAX_RECORD_DEPTH == 200
    ok = copy.deepcopy(records)
    ok[-1]["payload"] = nested(199)  # the innermost value sits at level 200
    rehash(ok[-1])
    assert outcome(ok) == (True, None, None, len(ok))
    deep = copy.deepcopy(records)
    deep[-1]["payload"] = nested(200)
    rehash(deep[-1])
    last = len(deep) - 1
    assert outcome(deep) == (False, last, "record is nested too deeply or holds too many values", last)
    listed = copy.deepcopy(records)
    listed[-1]["meta"]["x"] = [[[0]]]
    rehash(listed[-1])
    assert verify_audit(listed).valid


def test_node_budget(records: Records, monkeypatch: pytest.MonkeyPatch) -> None:
    size = max(sum(1 for _ in _walk(r)) for r in records)
    monkeypatch.setattr(verify_module, "MAX_RECORD_NODES", size)
    assert verify_audit(records).valid
    monkeypatch.setattr(verify_module, "MAX_RECORD_NODES", size - 1)
    v = verify_audit(records)
    assert (v.valid, v.reason) == (False, "record is nested too deeply or holds too many values")


def _walk(value: Any) -> Any:
    yield value
    if isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def test_previous_accepts_records_last_record_head_mapping_and_signed_records(records: Records) -> None:
    first = records
    second = export_audit(loan_chart().run_sync({}), segment=first)
    assert second[0]["seq"] == len(first)
    private, _ = generate_signing_key()
    signed_first = [*first, sign_audit(first, private)]
    head = audit_head(first)
    for previous in (
        first,
        tuple(first),
        first[-1],
        head,
        {"seq": head.seq, "hash": head.hash},
        signed_first,
    ):
        assert outcome(second, previous=previous) == (True, None, None, len(second)), type(previous)


@pytest.mark.parametrize(
    "previous",
    [
        [],
        "not records",
        b"bytes",
        42,
        {"seq": True, "hash": "0" * 64},
        {"seq": 1.0, "hash": "0" * 64},
        {"seq": 1, "hash": "A" * 64},
        {"seq": 1, "hash": "0" * 64 + "\n"},
        {"seq": 1},
        [{"type": "agentfootprint.audit.signature"}],
    ],
    ids=[
        "empty",
        "str",
        "bytes",
        "int",
        "bool-seq",
        "float-seq",
        "upper-hash",
        "newline-hash",
        "no-hash",
        "only-signature",
    ],
)
def test_previous_that_is_not_a_head_is_refused(records: Records, previous: Any) -> None:
    assert outcome(records, previous=previous) == (
        False,
        0,
        "previous head is malformed (needs an integer seq and a 64-hex hash)",
        0,
    )


def test_continued_segment_breaks_at_its_first_record(records: Records) -> None:
    second = export_audit(loan_chart().run_sync({}), segment=records)
    other = audit_head(records).model_copy(update={"hash": "1" * 64})
    assert outcome(second, previous=other) == (
        False,
        0,
        "genesis prev_hash does not match the previous segment's head (a continued segment is verified with previous=)",
        0,
    )
    assert outcome(second) == (
        False,
        0,
        "genesis seq is not 0 (a continued segment is verified with previous=)",
        0,
    )
    behind = audit_head(records).model_copy(update={"seq": len(records) + 3})
    assert outcome(second, previous=behind) == (
        False,
        0,
        f"seq is not contiguous (expected {len(records) + 4})",
        0,
    )


def test_wrong_genesis_prev_hash_is_broken_at_zero(records: Records) -> None:
    records[0]["prev_hash"] = "1" * 64
    rehash(records[0])
    assert outcome(records) == (
        False,
        0,
        "genesis prev_hash is not the zero hash (a continued segment is verified with previous=)",
        0,
    )


def test_rehash_reasons_name_the_record() -> None:
    result = loan_chart().run_sync({})
    records = export_audit(FakeAgent(result.snapshot, make_events(result.run_id, 4)))
    assert len(records) == 9
    changed = copy.deepcopy(records)
    changed[3]["payload"]["x"] = 1
    rehash(changed[3])  # record 4 still links to the old hash, and record 5 to record 4
    assert outcome(changed) == (False, 3, "record was changed and re-hashed: record 4 committed to a different hash", 3)
    forged = copy.deepcopy(records)
    forged[4]["prev_hash"] = "1" * 64
    rehash(forged[4])  # record 4 now points elsewhere and record 5 no longer links to it
    assert outcome(forged) == (False, 4, "record was changed and re-hashed: prev_hash does not match record 3", 4)
    tail = copy.deepcopy(records)
    tail[8]["prev_hash"] = "2" * 64
    rehash(tail[8])
    assert outcome(tail) == (
        False,
        7,
        "record was changed and re-hashed, or record 8 forged: the chain breaks between them",
        7,
    )


def test_plain_content_change_and_sequence_reasons(records: Records) -> None:
    changed = copy.deepcopy(records)
    changed[2]["payload"]["x"] = 1
    assert outcome(changed) == (False, 2, "hash does not match the record's content", 2)
    gap = copy.deepcopy(records)
    del gap[2]
    assert outcome(gap) == (False, 2, "seq is not contiguous (expected 2)", 2)
    not_genesis = copy.deepcopy(records)
    not_genesis[0]["type"] = "x.y"
    rehash(not_genesis[0])
    assert outcome(not_genesis) == (False, 0, "first record is not a genesis record", 0)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda r: r.update(seq="1"), "field 'seq' must be an integer"),
        (lambda r: r.update(seq=False), "field 'seq' must be an integer"),
        (lambda r: r.update(timestamp=1), "field 'timestamp' must be a string or null"),
        (lambda r: r.update(type=""), "field 'type' must be a non-empty string"),
        (lambda r: r.update(type=3), "field 'type' must be a non-empty string"),
        (lambda r: r.update(payload=[]), "field 'payload' must be an object"),
        (lambda r: r.update(meta=None), "field 'meta' must be an object"),
        (lambda r: r.update(prev_hash="0" * 63), "field 'prev_hash' must be 64 lowercase hex characters"),
        (lambda r: r.update(hash=7), "field 'hash' must be 64 lowercase hex characters"),
        (lambda r: r.update(hash="0" * 64 + "\n"), "field 'hash' must be 64 lowercase hex characters"),
        (lambda r: r.pop("seq"), "record is missing fields: seq"),
        (lambda r: [r.pop("meta"), r.pop("hash")], "record is missing fields: meta, hash"),
        (lambda r: r.update(extra=1, more=2), "record has unexpected fields: extra, more"),
        (lambda r: r.update({"bad name": 1}), "record has unexpected fields (1)"),
        (lambda r: r.update({"ok": 1, "x" * 41: 1}), "record has unexpected fields (2)"),
        (lambda r: r.update({f"f{i}": i for i in range(6)}), "record has unexpected fields (6)"),
    ],
)
def test_shape_reasons_are_exact(records: Records, change: Any, reason: str) -> None:
    change(records[1])
    assert outcome(records) == (False, 1, reason, 1)


def test_timestamp_may_be_null(records: Records) -> None:
    records[-1]["timestamp"] = None
    rehash(records[-1])
    assert verify_audit(records).valid


def test_unreadable_bundles(monkeypatch: pytest.MonkeyPatch, records: Records) -> None:
    assert outcome([]) == (False, 0, "bundle has no records", 0)
    assert outcome(b"\xff") == (False, 0, "bundle is not UTF-8 text", 0)
    assert outcome(42) == (False, 0, "bundle must be a list of records or JSON-lines text", 0)
    assert outcome([1, 2]) == (False, 0, "record is not a JSON object", 0)
    text = to_jsonl(records)
    monkeypatch.setattr(verify_module, "MAX_BUNDLE_CHARS", len(text))
    assert verify_audit(text).valid and verify_audit(text.encode()).valid
    monkeypatch.setattr(verify_module, "MAX_BUNDLE_CHARS", len(text) - 1)
    assert outcome(text) == (False, 0, "bundle is too large to verify", 0)
    assert outcome(text.encode()) == (False, 0, "bundle is too large to verify", 0)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"a": 1, "a": 2}', "a JSON object repeats a key"),
        ('{"a": NaN}', "line holds NaN or Infinity, which are not JSON"),
        ('{"a": -Infinity}', "line holds NaN or Infinity, which are not JSON"),
        ("[" * 100_000 + "]" * 100_000, "line is nested too deeply"),
        ("{", "line is not valid JSON"),
        ("[1, 2", "line is not valid JSON"),
    ],
    ids=["duplicate", "nan", "infinity", "deep", "truncated", "open-array"],
)
def test_line_reasons(records: Records, line: str, reason: str) -> None:
    lines = to_jsonl(records).splitlines()
    lines[2] = line
    assert outcome("\n".join(lines)) == (False, 2, reason, 2)


def test_a_whole_array_text_that_is_not_json_is_read_line_by_line(records: Records) -> None:
    assert outcome("[1,\n2") == (False, 0, "line is not valid JSON", 0)
    assert outcome("[{}]") == (
        False,
        0,
        "record is missing fields: seq, timestamp, type, payload, meta, prev_hash, hash",
        0,
    )


def test_not_canonical_json(records: Records) -> None:
    records[-1]["payload"]["x"] = {1, 2}
    last = len(records) - 1
    assert outcome(records) == (False, last, "record is not representable as RFC 8785 canonical JSON", last)


def test_big_integers_hash_as_the_doubles_json_reads(records: Records) -> None:
    records[-1]["payload"]["big"] = 2**60 + 1
    records[-1]["hash"] = record_hash(as_doubles(records[-1]))
    assert verify_audit(records).valid
    records[-1]["payload"]["big"] = 2.0**60
    assert verify_audit(records).valid
    records[-1]["payload"]["big"] = 2.0**61
    assert not verify_audit(records).valid


class _Exploding(Sequence[Any]):
    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: Any) -> Any:
        raise RuntimeError("boom")


def test_unexpected_structure_never_raises() -> None:
    assert outcome(_Exploding()) == (False, 0, "bundle could not be checked (unexpected structure)", 0)


def test_signature_needed_when_a_key_is_given(records: Records) -> None:
    private, public = generate_signing_key()
    n = len(records)
    assert outcome(records, public_key=public) == (False, n, "no signature record, but a public_key was given", n)
    sig = sign_audit(records, private)
    assert outcome([*records, sig], public_key=public) == (True, None, None, n)
    other_private, _ = generate_signing_key()
    other = sign_audit(records, other_private)
    assert outcome([*records, sig], public_key=public, signature=other) == (
        False,
        n,
        "bundle was signed by a different key",
        n,
    )
    newline_key = {**sig, "public_key": sig["public_key"][:63] + "\n"}
    assert outcome(records, signature=newline_key) == (
        False,
        n,
        "signature record has a field of the wrong type or format",
        n,
    )
    assert outcome(records, signature={"type": "agentfootprint.audit.signature"}) == (
        False,
        n,
        "signature record does not have exactly the signature fields",
        n,
    )


def test_verify_file_passes_previous_and_key_and_writes_where_told(
    records: Records, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    second = export_audit(loan_chart().run_sync({}), segment=records)
    private, public = generate_signing_key()
    path = tmp_path / "second.jsonl"
    path.write_text(to_jsonl([*second, sign_audit(second, private, previous=records)]), encoding="utf-8")
    out = io.StringIO()
    assert verify_module.verify_file(path, previous=records, public_key=public, out=out) == 0
    assert out.getvalue() == f"valid: {len(second)} records, signature verified\n"
    assert capsys.readouterr().out == ""
    assert verify_module.verify_file(path, previous=records) == 0
    assert capsys.readouterr().out == f"valid: {len(second)} records\n"
    assert verify_module.verify_file(path) == 1
    assert capsys.readouterr().out == (
        "invalid: record 0: genesis seq is not 0 (a continued segment is verified with previous=)\n"
    )
