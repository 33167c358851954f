"""``find_context_errors(run)``: every integrity finding of one run, read from its record (a result, a record, a
recording, its JSON or a snapshot): filed findings, dead checks, wire-manifest mismatches and unsupported claims."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from html import escape
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentfootprint.agent._integrity_wire import WIRE_KEY, full_parts, parse_part
from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain._targets import as_target
from agentfootprint.flow import FlowSnapshot

FINDINGS_KEY = "integrity_findings"
CLAIM_CHECKS_KEY = "claim_checks"
_UNSUPPORTED = ("checked-fail", "unreachable", "unsupported")


class ContextErrorsTargetError(AgentFootprintError, TypeError):
    """``find_context_errors`` was given something that is not a run, a record or a recording."""

    code = "ERR_CONTEXT_ERRORS_TARGET"


class ContextError(BaseModel):
    """One integrity finding: its kind, the runtime stage that filed it, the source it names, and what is wrong."""

    model_config = ConfigDict(frozen=True)

    kind: str
    stage_id: str | None = None
    source_id: str | None = None
    message: str
    iteration: int | None = None


class ContextErrors(list[ContextError]):
    """A run's integrity findings in record order (a list; empty when the run is clean)."""

    def kinds(self) -> list[str]:
        """The kind of each finding, in order."""
        return [e.kind for e in self]

    def of_kind(self, kind: str) -> ContextErrors:
        """The findings of one kind."""
        return ContextErrors(e for e in self if e.kind == kind)


def _snapshot_of(target: Any) -> tuple[FlowSnapshot, Mapping[str, Any] | None]:
    """The run's snapshot and, for a result, what its extensions returned."""
    extensions = getattr(target, "extensions", None)
    if isinstance(target, str | Path):
        from agentfootprint.explain.recording import load_recording

        if not Path(target).is_file():
            raise ContextErrorsTargetError("no recording file at the given path")
        return load_recording(target).snapshot, None
    record = as_target(target)
    if isinstance(record, Mapping):
        body: Any = record.get("snapshot", record)
        try:
            return FlowSnapshot.model_validate(body), None
        except ValidationError:
            raise ContextErrorsTargetError("the mapping is not a recording or a run snapshot") from None
    snap = getattr(record, "snapshot", None)
    if snap is None and callable(getattr(record, "last_snapshot", None)):
        snap = record.last_snapshot()
    if isinstance(record, FlowSnapshot):
        snap = record
    if not isinstance(snap, FlowSnapshot):
        raise ContextErrorsTargetError("find_context_errors reads a run result, a run record or a recording")
    return snap, extensions if isinstance(extensions, Mapping) else None


def _filed(snap: FlowSnapshot, key: str) -> Iterator[tuple[str, Any]]:
    """Each item a list under ``key`` gained, with the runtime stage id of the commit that added it."""
    size = len(snap.initial_state.get(key) or ()) if isinstance(snap.initial_state.get(key), list) else 0
    for commit in snap.commit_log:
        if commit.namespace or not commit.applied:
            continue
        for write in commit.writes:
            if write.path != key or not isinstance(write.value, list | tuple):
                if write.path == key and write.verb == "delete":
                    size = 0
                continue
            new = list(write.value) if write.verb == "append" else list(write.value)[size:]
            size = size + len(new) if write.verb == "append" else len(write.value)
            for item in new:
                yield commit.runtime_stage_id, item


def wire_rows(snap: FlowSnapshot) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each model call's wire manifest, with the runtime stage id of the call and its full part list rebuilt from
    the kept prefixes (``parts`` is None when a row cannot be rebuilt)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for commit in snap.commit_log:
        if commit.namespace or not commit.applied:
            continue
        for write in commit.writes:
            if write.path == "llm_call" and write.verb == "set" and isinstance(write.value, Mapping):
                row = write.value.get(WIRE_KEY)
                if isinstance(row, Mapping):
                    found.append((commit.runtime_stage_id, dict(row)))
    rebuilt = full_parts([row for _, row in found])
    for (stage, row), parts in zip(found, rebuilt, strict=True):
        yield stage, {**row, "parts": parts}


def _text(value: Any, limit: int = 200) -> str | None:
    return None if value is None else str(value)[:limit]


def _findings(snap: FlowSnapshot) -> Iterator[ContextError]:
    for stage, row in _filed(snap, FINDINGS_KEY):
        if not isinstance(row, Mapping):
            continue
        source = row.get("source_id") or row.get("tool")
        yield ContextError(
            kind=str(row.get("kind", "finding"))[:64],
            stage_id=stage,
            source_id=_text(source),
            message=str(row.get("message", ""))[:300],
            iteration=row.get("iteration") if isinstance(row.get("iteration"), int) else None,
        )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _wire(snap: FlowSnapshot) -> Iterator[ContextError]:
    results = {
        str(r.get("call_id")): r
        for r in snap.state.get("tool_results") or ()
        if isinstance(r, Mapping) and isinstance(r.get("content"), str)
    }
    for stage, row in wire_rows(snap):
        iteration = row.get("iteration") if isinstance(row.get("iteration"), int) else None
        if not isinstance(row.get("parts"), list):
            yield ContextError(
                kind="wire-mismatch",
                stage_id=stage,
                message="the call's manifest cannot be rebuilt from the calls before it",
                iteration=iteration,
            )
            continue
        parts = [p for p in (parse_part(t) for t in row["parts"]) if p is not None]
        if row.get("keyed"):
            continue  # digests keyed for redaction: nothing in a served record can be compared with them
        if _sha("".join(p[0] for p in parts)) != row.get("sha256") or len(parts) != len(row["parts"]):
            yield ContextError(
                kind="wire-mismatch",
                stage_id=stage,
                message="the call's manifest digest is not the digest of its parts",
                iteration=iteration,
            )
        for sha, kind, part_id in parts:
            if kind != "tool":
                continue
            call_id = part_id.removeprefix("tool:")
            record = results.get(call_id)
            if record is None or snap.redacted:
                continue
            if _sha(record["content"]) != sha:
                yield ContextError(
                    kind="wire-mismatch",
                    stage_id=stage,
                    source_id=call_id[:200],
                    message="the model was sent a tool result other than the one the tool returned",
                    iteration=iteration,
                )


def _dead(snap: FlowSnapshot, extensions: Mapping[str, Any] | None) -> Iterator[ContextError]:
    ledger = (extensions or {}).get("integrity")
    rows = ledger.get("disposition") if isinstance(ledger, Mapping) else None
    called = any(True for _ in wire_rows(snap))
    for row in rows or ():
        if not isinstance(row, Mapping) or not row.get("armed") or row.get("seam") != "wire" or not called:
            continue
        if not row.get("checked") and not row.get("not_applicable"):
            yield ContextError(
                kind="dead-check",
                source_id=_text(row.get("check")),
                message="an armed check filed nothing on a run whose model was called",
            )


def _claims(snap: FlowSnapshot) -> Iterator[ContextError]:
    for stage, rows in _filed_value(snap, CLAIM_CHECKS_KEY):
        for row in rows:
            if not isinstance(row, Mapping) or row.get("verdict") not in _UNSUPPORTED or row.get("advisory"):
                continue
            yield ContextError(
                kind="unsupported-claim",
                stage_id=stage,
                source_id=_text(row.get("claim")),
                message=f"the answer claims what the run did not settle ({row.get('verdict')})",
            )


def _filed_value(snap: FlowSnapshot, key: str) -> Iterator[tuple[str, list[Any]]]:
    """The last value set under ``key`` (a list) and the stage that set it."""
    last: tuple[str, list[Any]] | None = None
    for commit in snap.commit_log:
        if commit.namespace or not commit.applied:
            continue
        for write in commit.writes:
            if write.path == key and write.verb == "set" and isinstance(write.value, list | tuple):
                last = (commit.runtime_stage_id, list(write.value))
    if last is not None:
        yield last


def find_context_errors(run_or_recording: Any) -> ContextErrors:
    """Every integrity finding of one run: filed checks, dead checks, wire-manifest mismatches, unsupported claims."""
    snap, extensions = _snapshot_of(run_or_recording)
    found = ContextErrors(_findings(snap))
    found.extend(_wire(snap))
    found.extend(_claims(snap))
    found.extend(_dead(snap, extensions))
    return found


def errors_section(snapshot: FlowSnapshot | None) -> str:
    """The report's "Context errors" section (HTML); empty when there is no snapshot or the run is clean."""
    if snapshot is None:
        return ""
    found = find_context_errors(snapshot)
    if not found:
        return ""
    rows = "".join(
        f"<li><span class='mono'>{escape(e.kind)}</span> at <span class='mono'>{escape(e.stage_id or '-')}</span>"
        f"{' (' + escape(e.source_id) + ')' if e.source_id else ''}: {escape(e.message)}</li>"
        for e in found
    )
    return f"<section><h2>Context errors ({len(found)})</h2><ul class='errors'>{rows}</ul></section>"


__all__ = ["ContextError", "ContextErrors", "ContextErrorsTargetError", "errors_section", "find_context_errors"]
