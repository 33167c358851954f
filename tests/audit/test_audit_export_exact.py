"""``export_audit`` and ``audit_head`` exactly: the genesis, record metadata, segments, events and refusals."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint.audit import (
    AUDIT_FORMAT,
    COMMIT_TYPE,
    GENESIS_TYPE,
    SIGNATURE_TYPE,
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
from agentfootprint.audit.export import _iso
from agentfootprint.events.model import AgentEvent, EventMeta
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.result import FlowResult
from agentfootprint.flow.snapshot import FlowSnapshot

H1, H2, H3 = "a" * 64, "b" * 64, "c" * 64
T0 = 1_700_000_000.0


def _commit(idx: int, value: Any = "v") -> Commit:
    return Commit(
        idx=idx,
        stage_id=f"s{idx}",
        runtime_stage_id=f"s{idx}#{idx}",
        writes=[Write(path=f"k{idx}", verb="set", value=value)],
    )


def _snapshot(run_id: str = "run-1", n: int = 3, **fields: Any) -> FlowSnapshot:
    base: dict[str, Any] = {
        "run_id": run_id,
        "chart_id": "chart",
        "chart_name": "Chart",
        "state": {"k0": "v", "n": 1},
        "initial_state": {"start": "Ada"},
        "commit_log": [_commit(i) for i in range(n)],
    }
    return FlowSnapshot(**{**base, **fields})


def _event(seq: int | None, ts: float = 0.0, run_id: str = "run-1", **payload: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"run_id": run_id, "timestamp": ts, "runtime_stage_id": "s1#1", "iteration": 2}
    if seq is not None:
        meta["seq"] = seq
    return {"type": "agentfootprint.stream.note", "payload": payload or {"n": seq}, "meta": meta}


class _Agent:
    def __init__(self, result: Any, events: Any = None, *, has_events: bool = True) -> None:
        self._result = result
        if has_events:
            self.last_events = lambda: events

    def last_snapshot(self) -> Any:
        return self._result


# -- the genesis ----------------------------------------------------------------------------------------------------
def test_the_genesis_payload_is_exact() -> None:
    snap = _snapshot(subflow_states={"sub": {"inner": [1, 2]}}, redacted=True)
    genesis = export_audit(snap, events=[_event(1)])[0]
    assert genesis["seq"] == 0 and genesis["prev_hash"] == ZERO_HASH and genesis["type"] == GENESIS_TYPE
    assert genesis["meta"] == {"kind": "genesis", "run_id": "run-1"}
    assert genesis["payload"] == {
        "format": AUDIT_FORMAT,
        "canonicalization": "RFC8785",
        "hash_alg": "sha256",
        "payload_mode": "bounded",
        "run_id": "run-1",
        "chart_id": "chart",
        "chart_name": "Chart",
        "redacted": True,
        "continues": False,
        "commits_from": 0,
        "commit_count": 3,
        "event_count": 1,
        "resumed_from": None,
        "initial_state": {"start": {"type": "str", "size": 3}},
        "state": {"k0": {"type": "str", "size": 1}, "n": {"type": "int"}},
        "subflow_states": {"sub": {"inner": {"type": "array", "size": 2}}},
    }
    verbatim = export_audit(snap, payload_mode="verbatim")[0]["payload"]
    assert verbatim["payload_mode"] == "verbatim" and verbatim["event_count"] == 0
    assert verbatim["initial_state"] == {"start": "Ada"} and verbatim["subflow_states"] == {"sub": {"inner": [1, 2]}}


def test_the_genesis_timestamp_is_the_export_time_in_utc() -> None:
    before = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    stamp = export_audit(_snapshot())[0]["timestamp"]
    after = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    assert before <= stamp <= after and len(stamp) == 27 and stamp.endswith("Z")


def test_commit_records_are_exact_and_in_idx_order() -> None:
    snap = _snapshot(commit_log=[_commit(2), _commit(0), _commit(1)])
    records = export_audit(snap, payload_mode="verbatim")
    assert [r["meta"] for r in records[1:]] == [
        {"kind": "commit", "run_id": "run-1", "idx": i, "runtime_stage_id": f"s{i}#{i}"} for i in range(3)
    ]
    assert all(r["type"] == COMMIT_TYPE and r["timestamp"] is None for r in records[1:])
    assert [r["seq"] for r in records] == [0, 1, 2, 3]
    assert [r["prev_hash"] for r in records] == [ZERO_HASH] + [r["hash"] for r in records[:-1]]
    assert all(r["hash"] == record_hash(r) for r in records)
    assert records[1]["payload"]["writes"] == [{"path": "k0", "verb": "set", "value": "v"}]


def test_event_records_carry_their_meta_exactly() -> None:
    events = [
        _event(3, T0 + 3, run_id="sub-run"),
        _event(None, -1.0),
        AgentEvent(
            type="agentfootprint.stream.note",
            payload={"n": 1},
            meta=EventMeta(run_id="run-1", runtime_stage_id="s0#0", iteration=1, timestamp=T0 + 1, seq=1),
        ),
    ]
    records = export_audit(_snapshot(n=0), events=events, payload_mode="verbatim")
    assert [r["meta"] for r in records[1:]] == [
        {
            "kind": "event",
            "run_id": "run-1",
            "event_seq": None,
            "event_run_id": "run-1",
            "runtime_stage_id": "s1#1",
            "iteration": 2,
        },
        {
            "kind": "event",
            "run_id": "run-1",
            "event_seq": 1,
            "event_run_id": "run-1",
            "runtime_stage_id": "s0#0",
            "iteration": 1,
        },
        {
            "kind": "event",
            "run_id": "run-1",
            "event_seq": 3,
            "event_run_id": "sub-run",
            "runtime_stage_id": "s1#1",
            "iteration": 2,
        },
    ]
    assert [r["timestamp"] for r in records[1:]] == [None, "2023-11-14T22:13:21.000000Z", "2023-11-14T22:13:23.000000Z"]
    assert [r["payload"] for r in records[1:]] == [{"n": None}, {"n": 1}, {"n": 3}]
    assert verify_audit(records).valid


def test_an_event_without_payload_or_meta() -> None:
    class Bare:
        type = "agentfootprint.custom.bare"

    records = export_audit(_snapshot(n=0), events=[Bare(), {"type": "x.y.z", "meta": "not a mapping"}])
    assert [r["payload"] for r in records[1:]] == [{}, {}]
    assert records[1]["meta"]["event_seq"] is None and records[2]["meta"]["runtime_stage_id"] is None


def test_event_meta_given_as_a_model_is_dumped() -> None:
    class Meta(BaseModel):
        seq: int
        run_id: str
        when: datetime.date

    event = {"type": "x.y.z", "payload": {}, "meta": Meta(seq=4, run_id="m", when=datetime.date(2026, 1, 2))}
    record = export_audit(_snapshot(n=0), events=[event])[1]
    assert record["meta"]["event_seq"] == 4 and record["meta"]["event_run_id"] == "m"


@pytest.mark.parametrize("etype", [None, "", 5])
def test_an_event_without_a_type_is_refused(etype: Any) -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(_snapshot(), events=[{"type": etype, "payload": {}}])
    assert (info.value.code, str(info.value)) == ("ERR_AUDIT_EVENT", "an event has no type")


@pytest.mark.parametrize("etype", [GENESIS_TYPE, COMMIT_TYPE, SIGNATURE_TYPE])
def test_an_event_with_a_reserved_type_is_refused(etype: str) -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(_snapshot(), events=[{"type": etype}])
    assert (info.value.code, str(info.value)) == ("ERR_AUDIT_EVENT", "an event uses a reserved audit record type")


# -- what is exported -----------------------------------------------------------------------------------------------
def test_a_flow_result_and_an_agent_returning_one_export_the_same() -> None:
    snap = _snapshot()
    result = FlowResult(run_id="run-1", state={}, snapshot=snap)
    payloads = [[r["payload"] for r in export_audit(src)[1:]] for src in (snap, result, _Agent(result), _Agent(snap))]
    assert payloads[0] == payloads[1] == payloads[2] == payloads[3]
    assert len(payloads[0]) == 3


def test_an_agents_events_are_taken_unless_events_is_given() -> None:
    snap = _snapshot(n=0)
    assert len(export_audit(_Agent(snap, [_event(1), _event(2)]))) == 3
    assert len(export_audit(_Agent(snap, [_event(1), _event(2)]), events=[_event(5)])) == 2
    assert len(export_audit(_Agent(snap, [_event(1)]), events=[])) == 1
    assert len(export_audit(_Agent(snap, None))) == 1
    assert len(export_audit(_Agent(snap, has_events=False))) == 1


def test_an_agent_that_has_not_run_is_refused_by_name() -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(_Agent("not a snapshot"))  # type: ignore[arg-type]
    assert (info.value.code, str(info.value)) == ("ERR_AUDIT_NO_RUN", "nothing to export: the agent has not run yet")


def test_something_else_is_refused_by_type_name() -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(42)  # type: ignore[arg-type]
    assert info.value.code == "ERR_AUDIT_INPUT"
    assert str(info.value) == "cannot export a int: pass a FlowSnapshot, a FlowResult or an agent that has run"


def test_an_unknown_payload_mode_is_refused_by_name() -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(_snapshot(), payload_mode="all")  # type: ignore[arg-type]
    assert str(info.value) == "payload_mode must be 'bounded' or 'verbatim'"


# -- timestamps -----------------------------------------------------------------------------------------------------
def test_iso_times() -> None:
    assert _iso(T0) == "2023-11-14T22:13:20.000000Z"
    assert _iso(int(T0)) == "2023-11-14T22:13:20.000000Z"
    assert _iso(T0 + 0.25) == "2023-11-14T22:13:20.250000Z"
    assert _iso(1) == "1970-01-01T00:00:01.000000Z"
    for bad in (0, 0.0, -5, True, "2023", None, float("inf"), float("nan"), 1e20):
        assert _iso(bad) is None


# -- audit_head -------------------------------------------------------------------------------------------------------
def _rec(seq: int, h: str, meta: Any, ts: Any = None, rtype: str = COMMIT_TYPE) -> dict[str, Any]:
    return {"seq": seq, "hash": h, "meta": meta, "timestamp": ts, "type": rtype}


def test_audit_head_reads_the_last_runs_progress() -> None:
    records = [
        _rec(0, H1, {"kind": "genesis", "run_id": "r1"}),
        _rec(1, H1, {"kind": "commit", "idx": 0}),
        _rec(2, H1, {"kind": "commit", "idx": 4}),
        _rec(3, H1, {"kind": "commit", "idx": 2}),
        _rec(4, H1, {"kind": "event", "event_seq": 9}, ts="2026-01-01T00:00:02.000000Z"),
        _rec(5, H1, {"kind": "event", "event_seq": 3}, ts="2026-01-01T00:00:05.000000Z"),
        _rec(6, H1, {"kind": "event", "event_seq": 4}, ts="2026-01-01T00:00:01.000000Z"),
        _rec(7, H2, {"kind": "event", "event_seq": 5}, ts=17),
    ]
    assert audit_head(records) == AuditHead(
        seq=7,
        hash=H2,
        run_id="r1",
        next_commit_idx=5,
        last_event_seq=9,
        last_event_timestamp="2026-01-01T00:00:05.000000Z",
    )


def test_audit_head_starts_over_at_a_genesis_of_another_run_only() -> None:
    run1 = [
        _rec(0, H1, {"kind": "genesis", "run_id": "r1"}),
        _rec(1, H1, {"kind": "commit", "idx": 3}),
        _rec(2, H1, {"kind": "event", "event_seq": 2}, ts="2026-01-01T00:00:02.000000Z"),
    ]
    same_again = [*run1, _rec(3, H1, {"kind": "genesis", "run_id": "r1"}), _rec(4, H3, {"kind": "commit", "idx": 1})]
    assert audit_head(same_again) == AuditHead(
        seq=4,
        hash=H3,
        run_id="r1",
        next_commit_idx=4,
        last_event_seq=2,
        last_event_timestamp="2026-01-01T00:00:02.000000Z",
    )
    other = [*run1, _rec(3, H3, {"kind": "genesis", "run_id": "r2"})]
    assert audit_head(other) == AuditHead(seq=3, hash=H3, run_id="r2")
    unnamed = [*run1, _rec(3, H3, {"kind": "genesis", "run_id": 5})]
    assert audit_head(unnamed) == AuditHead(seq=3, hash=H3, run_id=None)


def test_audit_head_skips_what_it_cannot_read() -> None:
    records: list[Any] = [
        _rec(0, H1, {"kind": "genesis", "run_id": "r1"}),
        "not a record",
        _rec(1, H1, None),
        _rec(2, H1, {"kind": "commit", "idx": True}),
        _rec(3, H1, {"kind": "commit", "idx": "7"}),
        _rec(4, H1, {"kind": "event", "event_seq": False}, ts="2030-01-01T00:00:00.000000Z"),
        _rec(5, H1, {"kind": "other", "idx": 8, "event_seq": 8}),
        _rec(6, H2, {"kind": "commit", "idx": 1}),
    ]
    assert audit_head(records) == AuditHead(seq=6, hash=H2, run_id="r1", next_commit_idx=2)


def test_audit_head_looks_past_a_trailing_signature() -> None:
    records = [
        _rec(0, H1, {"kind": "genesis", "run_id": "r1"}),
        _rec(1, H2, {"kind": "commit", "idx": 0}),
        {"type": SIGNATURE_TYPE, "head_seq": 1},
    ]
    assert audit_head(records) == AuditHead(seq=1, hash=H2, run_id="r1", next_commit_idx=1)


@pytest.mark.parametrize(
    "records",
    [
        [],
        ["text"],
        [{"type": SIGNATURE_TYPE}],
        [_rec(0, H1, {}), {"seq": True, "hash": H1}],
        [{"seq": 1.0, "hash": H1}],
        [{"seq": 1, "hash": H1.upper()}],
        [{"seq": 1, "hash": H1[:63]}],
        [{"seq": 1, "hash": H1 + "a"}],
        [{"seq": 1, "hash": None}],
    ],
)
def test_audit_head_refuses_a_chain_without_a_valid_head(records: list[Any]) -> None:
    with pytest.raises(AuditExportError) as info:
        audit_head(records)
    assert info.value.code == "ERR_AUDIT_SEGMENT"
    assert str(info.value) in {
        "segment has no records to continue from",
        "segment head record has no valid seq and hash",
    }


def test_audit_head_messages() -> None:
    with pytest.raises(AuditExportError, match=r"^segment has no records to continue from$"):
        audit_head([])
    with pytest.raises(AuditExportError, match=r"^segment head record has no valid seq and hash$"):
        audit_head([{"seq": "1", "hash": H1}])


# -- segments -------------------------------------------------------------------------------------------------------
def test_a_segment_given_as_a_head_a_last_record_or_records_chains_the_same() -> None:
    snap = _snapshot()
    part1 = export_audit(snap)
    for segment in (part1, part1[-1], audit_head(part1), audit_head(part1).model_dump(), tuple(part1)):
        part2 = export_audit(snap, segment=segment)
        assert part2[0]["seq"] == part1[-1]["seq"] + 1 == 4
        assert part2[0]["prev_hash"] == part1[-1]["hash"]
        assert verify_audit(part1 + part2).valid


def test_a_segment_of_the_same_run_exports_only_new_commits_and_events() -> None:
    first = _snapshot(n=2)
    part1 = export_audit(first, events=[_event(1, T0 + 1), _event(2, T0 + 2)])
    later = _snapshot(n=4)
    events = [_event(1, T0 + 1), _event(2, T0 + 2), _event(3, T0 + 3)]
    part2 = export_audit(later, events=events, segment=part1)
    genesis = part2[0]["payload"]
    assert (genesis["continues"], genesis["commits_from"], genesis["commit_count"], genesis["event_count"]) == (
        True,
        2,
        2,
        1,
    )
    assert [r["meta"].get("idx", r["meta"].get("event_seq")) for r in part2[1:]] == [2, 3, 3]
    assert verify_audit(part1 + part2).valid


def test_a_fresh_agent_restarting_event_numbering_is_told_apart_by_time() -> None:
    part1 = export_audit(_snapshot(n=0), events=[_event(1, T0 + 1), _event(2, T0 + 2)])
    events = [
        _event(1, T0 + 1),  # already exported
        _event(2, T0 + 2),  # already exported (same time as the head's last event)
        _event(1, T0 + 10),  # numbering restarted, but later: new
        _event(2, 0.0),  # no time: cannot be told new
        _event(5, 0.0),  # a higher seq is new whatever its time
        _event(None, T0 + 11),  # no seq but later: new
    ]
    part2 = export_audit(_snapshot(n=0), events=events, segment=part1)
    assert [(r["meta"]["event_seq"], r["timestamp"]) for r in part2[1:]] == [
        (None, "2023-11-14T22:13:31.000000Z"),
        (1, "2023-11-14T22:13:30.000000Z"),
        (5, None),
    ]


def test_a_head_without_event_time_exports_only_higher_seqs() -> None:
    head = AuditHead(seq=3, hash=H1, run_id="run-1", next_commit_idx=0, last_event_seq=2)
    part2 = export_audit(_snapshot(n=0), events=[_event(1, T0 + 50), _event(3, T0)], segment=head)
    assert [r["meta"]["event_seq"] for r in part2[1:]] == [3]
    assert part2[0]["seq"] == 4 and part2[0]["prev_hash"] == H1


def test_an_event_without_seq_is_not_new_after_seq_zero() -> None:
    head = AuditHead(seq=3, hash=H1, run_id="run-1", last_event_seq=0)
    part2 = export_audit(_snapshot(n=0), events=[_event(None, 0.0), _event(1, 0.0)], segment=head)
    assert [r["meta"]["event_seq"] for r in part2[1:]] == [1]


def test_a_resumed_leg_continues_the_run_it_resumed_but_exports_all_its_events() -> None:
    head = AuditHead(seq=9, hash=H1, run_id="leg-1", next_commit_idx=2, last_event_seq=50)
    leg2 = _snapshot("leg-2", n=4, resumed_from={"run_id": "leg-1", "commits": 2, "sealed": True})
    records = export_audit(leg2, events=[_event(1, T0)], segment=head)
    genesis = records[0]["payload"]
    assert genesis["continues"] is True and genesis["commits_from"] == 2 and genesis["commit_count"] == 2
    assert genesis["event_count"] == 1
    assert genesis["resumed_from"] == {"run_id": "leg-1", "commits": 2, "sealed": True}
    assert [r["meta"].get("idx") for r in records[1:3]] == [2, 3]


def test_a_segment_of_another_run_exports_everything() -> None:
    head = AuditHead(seq=9, hash=H1, run_id="someone-else", next_commit_idx=2, last_event_seq=50)
    records = export_audit(_snapshot(n=3), events=[_event(1, T0)], segment=head)
    genesis = records[0]["payload"]
    assert (genesis["continues"], genesis["commits_from"], genesis["commit_count"], genesis["event_count"]) == (
        False,
        0,
        3,
        1,
    )
    unnamed = AuditHead(seq=9, hash=H1, run_id=None, next_commit_idx=2)
    resumed = _snapshot("leg-2", n=3, resumed_from={"commits": 2})
    assert export_audit(resumed, segment=unnamed)[0]["payload"]["continues"] is False


@pytest.mark.parametrize(
    "segment, message",
    [
        ({"seq": "x", "hash": H1}, "segment head is malformed"),
        ({"hash": H1}, "segment head is malformed"),
        ("records", "segment must be the previous records, their last record, or an AuditHead"),
        (b"records", "segment must be the previous records, their last record, or an AuditHead"),
        (7, "segment must be the previous records, their last record, or an AuditHead"),
        ({"prev_hash": H1, "seq": 1, "hash": "zz"}, "segment head record has no valid seq and hash"),
    ],
)
def test_a_malformed_segment_is_refused_by_name(segment: Any, message: str) -> None:
    with pytest.raises(AuditExportError) as info:
        export_audit(_snapshot(), segment=segment)
    assert (info.value.code, str(info.value)) == ("ERR_AUDIT_SEGMENT", message)


# -- JSON lines -----------------------------------------------------------------------------------------------------
def test_jsonl_lines_and_file(tmp_path: Path) -> None:
    records = export_audit(_snapshot(n=1), payload_mode="verbatim")
    text = to_jsonl(records)
    assert text.endswith("\n") and text.count("\n") == 2
    assert text.splitlines()[1].startswith('{"hash":"')
    target = write_jsonl(records, str(tmp_path / "a.jsonl"))
    assert target == tmp_path / "a.jsonl" and isinstance(target, Path)
    assert target.read_bytes() == text.encode("utf-8")
    assert to_jsonl([]) == ""
