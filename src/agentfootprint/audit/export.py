"""``export_audit``: a run as a SHA-256 hash chain of JSON records (RFC 8785), resumable in segments.

Order: one genesis record, then the run's commits by ``idx``, then its events by ``meta.seq``. Commits carry no
wall-clock time in the engine, so their ``timestamp`` is ``null``; the genesis has the export time, events theirs.
The genesis declares how many commits and events follow it (a verifier checks the count, so a cut tail shows), and
for a resumed leg where its first leg came from (``resumed_from``: that run's id, how many commits came from its
checkpoint, and whether the checkpoint was sealed).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentfootprint.audit._canonical import ZERO_HASH, canonical_bytes, jsonable, record_hash
from agentfootprint.audit._payload import PAYLOAD_MODES, PayloadMode, commit_payload, event_payload, state_payload
from agentfootprint.audit.errors import AuditExportError
from agentfootprint.flow.result import FlowResult
from agentfootprint.flow.snapshot import FlowSnapshot, Recorded

__all__ = [
    "AUDIT_FORMAT",
    "COMMIT_TYPE",
    "GENESIS_TYPE",
    "SIGNATURE_TYPE",
    "ZERO_HASH",
    "AuditHead",
    "audit_head",
    "export_audit",
    "to_jsonl",
    "write_jsonl",
]

AUDIT_FORMAT = "agentfootprint.audit/1"
GENESIS_TYPE = "agentfootprint.audit.genesis"
COMMIT_TYPE = "agentfootprint.audit.commit"
SIGNATURE_TYPE = "agentfootprint.audit.signature"
_HEX64 = re.compile(r"[0-9a-f]{64}")


class AuditHead(BaseModel):
    """Where a chain ends: last ``seq`` and ``hash``, plus how much of ``run_id`` it already holds.

    An event counts as already exported when its ``seq`` is at most ``last_event_seq`` and its timestamp is no
    later than ``last_event_timestamp`` (a run resumed by a fresh agent restarts event numbering).
    """

    model_config = ConfigDict(frozen=True)

    seq: int
    hash: str
    run_id: str | None = None
    next_commit_idx: int = 0
    last_event_seq: int | None = None
    last_event_timestamp: str | None = None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def audit_head(records: Sequence[Mapping[str, Any]]) -> AuditHead:
    """The head of an exported chain (pass it, or the records, as ``segment=`` to continue the chain)."""
    if not records or not isinstance(records[-1], Mapping):
        raise AuditExportError("segment has no records to continue from", code="ERR_AUDIT_SEGMENT")
    last = records[-1]
    if last.get("type") == SIGNATURE_TYPE:
        return audit_head(records[:-1])
    seq, head = last.get("seq"), last.get("hash")
    if not _is_int(seq) or not isinstance(head, str) or _HEX64.fullmatch(head) is None:
        raise AuditExportError("segment head record has no valid seq and hash", code="ERR_AUDIT_SEGMENT")
    run_id: str | None = None
    next_idx, last_event, last_ts = 0, None, None
    for rec in records:
        meta = rec.get("meta") if isinstance(rec, Mapping) else None
        if not isinstance(meta, Mapping):
            continue
        kind = meta.get("kind")
        if kind == "genesis":
            rid = meta.get("run_id")
            if rid != run_id:
                run_id, next_idx, last_event, last_ts = (rid if isinstance(rid, str) else None), 0, None, None
        elif kind == "commit" and _is_int(meta.get("idx")):
            next_idx = max(next_idx, meta["idx"] + 1)
        elif kind == "event" and _is_int(meta.get("event_seq")):
            last_event = meta["event_seq"] if last_event is None else max(last_event, meta["event_seq"])
            ts = rec.get("timestamp")
            if isinstance(ts, str) and (last_ts is None or ts > last_ts):
                last_ts = ts
    return AuditHead(
        seq=seq,
        hash=head,
        run_id=run_id,
        next_commit_idx=next_idx,
        last_event_seq=last_event,
        last_event_timestamp=last_ts,
    )


def _head_of(segment: Any) -> AuditHead | None:
    if segment is None:
        return None
    if isinstance(segment, AuditHead):
        return segment
    if isinstance(segment, Mapping):
        if "prev_hash" in segment:  # a single record: the chain's last one
            return audit_head([segment])
        try:
            return AuditHead.model_validate(dict(segment))
        except ValueError as exc:
            raise AuditExportError("segment head is malformed", code="ERR_AUDIT_SEGMENT") from exc
    if isinstance(segment, Sequence) and not isinstance(segment, str | bytes):
        return audit_head(segment)
    raise AuditExportError(
        "segment must be the previous records, their last record, or an AuditHead", code="ERR_AUDIT_SEGMENT"
    )


def _resolve(source: object) -> tuple[FlowSnapshot, list[Any] | None]:
    if isinstance(source, FlowSnapshot):
        return source, None
    if isinstance(source, FlowResult):
        return source.snapshot, None
    getter = getattr(source, "last_snapshot", None)
    if callable(getter):
        snap = getter()
        if isinstance(snap, FlowResult):
            snap = snap.snapshot
        if not isinstance(snap, FlowSnapshot):
            raise AuditExportError("nothing to export: the agent has not run yet", code="ERR_AUDIT_NO_RUN")
        events_getter = getattr(source, "last_events", None)
        events = events_getter() if callable(events_getter) else None
        return snap, list(events) if events is not None else None
    raise AuditExportError(
        f"cannot export a {type(source).__name__}: pass a FlowSnapshot, a FlowResult or an agent that has run",
        code="ERR_AUDIT_INPUT",
    )


def _iso(ts: Any) -> str | None:
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not math.isfinite(ts) or ts <= 0:
        return None
    try:
        moment = _dt.datetime.fromtimestamp(float(ts), _dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _event_parts(event: Any) -> tuple[str, Any, Mapping[str, Any]]:
    etype = _field(event, "type")
    if not isinstance(etype, str) or not etype:
        raise AuditExportError("an event has no type", code="ERR_AUDIT_EVENT")
    if etype in (GENESIS_TYPE, COMMIT_TYPE, SIGNATURE_TYPE):
        raise AuditExportError("an event uses a reserved audit record type", code="ERR_AUDIT_EVENT")
    meta = _field(event, "meta")
    if isinstance(meta, BaseModel):
        meta = meta.model_dump(mode="json")
    return etype, _field(event, "payload", {}), meta if isinstance(meta, Mapping) else {}


def _event_seq(meta: Mapping[str, Any]) -> int | None:
    seq = meta.get("seq")
    return seq if _is_int(seq) else None


def _is_new_event(meta: Mapping[str, Any], after_seq: int | None, after_ts: str | None) -> bool:
    if after_seq is None or (_event_seq(meta) or 0) > after_seq:
        return True
    ts = _iso(meta.get("timestamp"))
    return after_ts is not None and ts is not None and ts > after_ts


def export_audit(
    agent_or_snapshot: Recorded | FlowSnapshot | FlowResult,
    *,
    payload_mode: PayloadMode = "bounded",
    events: Iterable[Any] | None = None,
    segment: Any = None,
) -> list[dict[str, Any]]:
    """The run as hash-chained records ``{seq, timestamp, type, payload, meta, prev_hash, hash}``.

    ``segment`` (previous records, their last record, or an ``AuditHead``) chains this export after them and,
    for the same run, exports only commits and events not already in the chain.
    """
    if payload_mode not in PAYLOAD_MODES:
        raise AuditExportError("payload_mode must be 'bounded' or 'verbatim'", code="ERR_AUDIT_PAYLOAD_MODE")
    snapshot, agent_events = _resolve(agent_or_snapshot)
    event_list = list(events) if events is not None else (agent_events or [])
    head = _head_of(segment)
    origin = snapshot.resumed_from
    prior_run = origin.get("run_id") if origin else None
    same_run = head is not None and head.run_id == snapshot.run_id
    continues = same_run or (head is not None and head.run_id is not None and head.run_id == prior_run)
    commits_from = head.next_commit_idx if (head is not None and continues) else 0
    events_after = head.last_event_seq if (head is not None and same_run) else None
    events_after_ts = head.last_event_timestamp if (head is not None and same_run) else None

    commits = sorted((c for c in snapshot.commit_log if c.idx >= commits_from), key=lambda c: c.idx)
    parts = [_event_parts(e) for e in event_list]
    parts = [p for p in parts if _is_new_event(p[2], events_after, events_after_ts)]
    parts.sort(key=lambda p: _event_seq(p[2]) or 0)

    genesis_payload = {
        "format": AUDIT_FORMAT,
        "canonicalization": "RFC8785",
        "hash_alg": "sha256",
        "payload_mode": payload_mode,
        "run_id": snapshot.run_id,
        "chart_id": snapshot.chart_id,
        "chart_name": snapshot.chart_name,
        "redacted": snapshot.redacted,
        "continues": continues,
        "commits_from": commits_from,
        "commit_count": len(commits),
        "event_count": len(parts),
        "resumed_from": jsonable(origin) if origin else None,
        "initial_state": state_payload(snapshot.initial_state, payload_mode),
        "state": state_payload(snapshot.state, payload_mode),
        "subflow_states": {k: state_payload(v, payload_mode) for k, v in snapshot.subflow_states.items()},
    }
    now = _iso(_dt.datetime.now(_dt.UTC).timestamp())
    bodies: list[tuple[str | None, str, dict[str, Any], dict[str, Any]]] = [
        (now, GENESIS_TYPE, genesis_payload, {"kind": "genesis", "run_id": snapshot.run_id})
    ]
    for c in commits:
        meta = {"kind": "commit", "run_id": snapshot.run_id, "idx": c.idx, "runtime_stage_id": c.runtime_stage_id}
        bodies.append((None, COMMIT_TYPE, commit_payload(c, payload_mode), meta))
    for etype, payload, emeta in parts:
        meta = {
            "kind": "event",
            "run_id": snapshot.run_id,
            "event_seq": _event_seq(emeta),
            "event_run_id": emeta.get("run_id"),
            "runtime_stage_id": emeta.get("runtime_stage_id"),
            "iteration": emeta.get("iteration"),
        }
        bodies.append((_iso(emeta.get("timestamp")), etype, event_payload(payload, payload_mode), jsonable(meta)))

    records: list[dict[str, Any]] = []
    prev_hash = head.hash if head is not None else ZERO_HASH
    seq = head.seq + 1 if head is not None else 0
    for timestamp, rtype, payload, meta in bodies:
        record: dict[str, Any] = {
            "seq": seq,
            "timestamp": timestamp,
            "type": jsonable(rtype),
            "payload": payload,
            "meta": meta,
            "prev_hash": prev_hash,
        }
        record["hash"] = record_hash(record)
        records.append(record)
        prev_hash, seq = record["hash"], seq + 1
    return records


def to_jsonl(records: Iterable[Mapping[str, Any]]) -> str:
    """JSON lines, one record per line, each in its RFC 8785 canonical form."""
    return "".join(canonical_bytes(dict(r)).decode("utf-8") + "\n" for r in records)


def write_jsonl(records: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write ``to_jsonl(records)`` to ``path`` (UTF-8) and return the path."""
    target = Path(path)
    target.write_text(to_jsonl(records), encoding="utf-8")
    return target
