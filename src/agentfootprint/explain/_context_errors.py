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
from agentfootprint.agent._invariants import INVARIANT_KIND, MOUNT_KEY
from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain._targets import as_target
from agentfootprint.flow import FlowSnapshot

FINDINGS_KEY = "integrity_findings"
LEDGER_KEY = "integrity_ledger"
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


def _filed(snap: FlowSnapshot, key: str, namespace: str | None = "") -> Iterator[tuple[str, str, Any]]:
    """Each item a list under ``key`` gained, with the namespace and runtime stage id of the commit that added it (in
    one namespace, or every one for None; a mount entered again starts its namespace afresh)."""
    first = snap.initial_state.get(key)
    sizes: dict[str, int] = {"": len(first) if isinstance(first, list) else 0}
    for commit in snap.commit_log:
        ns = commit.namespace
        if commit.kind == "subflow-enter":
            sizes[ns] = 0
        if (namespace is not None and ns != namespace) or not commit.applied:
            continue
        for write in commit.writes:
            if write.path != key or not isinstance(write.value, list | tuple):
                if write.path == key and write.verb == "delete":
                    sizes[ns] = 0
                continue
            size = sizes.get(ns, 0)
            new = list(write.value) if write.verb == "append" else list(write.value)[size:]
            sizes[ns] = size + len(new) if write.verb == "append" else len(write.value)
            for item in new:
                yield ns, commit.runtime_stage_id, item


def _namespaces(snap: FlowSnapshot) -> list[str]:
    """Every namespace of the run in first-commit order, the run's own first (a composition's members after it)."""
    seen = dict.fromkeys([""])
    for commit in snap.commit_log:
        seen.setdefault(commit.namespace)
    return list(seen)


def wire_rows(snap: FlowSnapshot, namespace: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each model call's wire manifest in one namespace (the run's own by default), with the runtime stage id of the
    call and its full part list rebuilt from the kept prefixes (``parts`` is None when a row cannot be rebuilt)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for commit in snap.commit_log:
        if commit.namespace != namespace or not commit.applied:
            continue
        for write in commit.writes:
            if write.path == "llm_call" and write.verb == "set" and isinstance(write.value, Mapping):
                row = write.value.get(WIRE_KEY)
                if isinstance(row, Mapping):
                    found.append((commit.runtime_stage_id, dict(row)))
    rebuilt = full_parts([row for _, row in found])
    for (stage, row), parts in zip(found, rebuilt, strict=True):
        yield stage, {**row, "parts": parts}


def _member_wire_rows(snap: FlowSnapshot) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Each member's model calls in a composed run, in call order, each rebuilt on the earlier call it extends: an
    agent mounted more than once (a loop's body, a fork's branches) continues one member run across the namespaces
    it serves, so the prefix a row keeps is the one its digest confirms (keyed rows: the latest that fits)."""
    history: list[list[str]] = []
    for commit in snap.commit_log:
        if not commit.namespace or not commit.applied:
            continue
        for write in commit.writes:
            row = write.value.get(WIRE_KEY) if write.path == "llm_call" and isinstance(write.value, Mapping) else None
            if not isinstance(row, Mapping):
                continue
            parts, kept = row.get("parts"), row.get("kept", 0)
            chosen: list[str] | None = None
            if isinstance(parts, list) and isinstance(kept, int) and not isinstance(kept, bool) and kept >= 0:
                for previous in [*reversed(history[-_CANDIDATES:]), []]:
                    if kept <= len(previous) and (row.get("keyed") or _adds_up([*previous[:kept], *parts], row)):
                        chosen = [*previous[:kept], *parts]
                        break
            if chosen is not None:
                history.append(chosen)
            yield commit.namespace, commit.runtime_stage_id, {**row, "parts": chosen}


_CANDIDATES = 64


def _adds_up(parts: list[str], row: Mapping[str, Any]) -> bool:
    parsed = [parse_part(t) for t in parts]
    return all(parsed) and _sha("".join(p[0] for p in parsed if p is not None)) == row.get("sha256")


def _text(value: Any, limit: int = 200) -> str | None:
    return None if value is None else str(value)[:limit]


def _findings(snap: FlowSnapshot) -> Iterator[ContextError]:
    for _, stage, row in _filed(snap, FINDINGS_KEY, None):
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
    results: dict[tuple[str, str], set[str]] = {}
    for ns, _, r in _filed(snap, "tool_results", None):
        if isinstance(r, Mapping) and isinstance(r.get("content"), str):
            results.setdefault((ns, str(r.get("call_id"))), set()).add(_sha(r["content"]))
    for stage, row in wire_rows(snap):
        yield from _wire_call(snap, "", stage, row, results)
    for ns, stage, row in _member_wire_rows(snap):
        yield from _wire_call(snap, ns, stage, row, results)


def _wire_call(
    snap: FlowSnapshot, ns: str, stage: str, row: Mapping[str, Any], results: Mapping[tuple[str, str], set[str]]
) -> Iterator[ContextError]:
    iteration = row.get("iteration") if isinstance(row.get("iteration"), int) else None
    if not isinstance(row.get("parts"), list):
        yield ContextError(
            kind="wire-mismatch",
            stage_id=stage,
            message="the call's manifest cannot be rebuilt from the calls before it",
            iteration=iteration,
        )
        return
    parts = [p for p in (parse_part(t) for t in row["parts"]) if p is not None]
    if row.get("keyed"):
        return  # digests keyed for redaction: nothing in a served record can be compared with them
    if _sha("".join(p[0] for p in parts)) != row.get("sha256") or len(parts) != len(row["parts"]):
        yield ContextError(
            kind="wire-mismatch",
            stage_id=stage,
            message="the call's manifest digest is not the digest of its parts",
            iteration=iteration,
        )
    for sha, kind, part_id in parts:
        if kind != "tool" or snap.redacted:
            continue
        call_id = part_id.removeprefix("tool:")
        returned = results.get((ns, call_id))
        if returned is not None and sha not in returned:
            yield ContextError(
                kind="wire-mismatch",
                stage_id=stage,
                source_id=call_id[:200],
                message="the model was sent a tool result other than the one the tool returned",
                iteration=iteration,
            )


def _ledgers(snap: FlowSnapshot) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Each ledger a final stage recorded (``integrity_ledger``): its namespace, stage, declared checks, rows and
    declared invariants (read from its text; a malformed row is skipped)."""
    for commit in snap.commit_log:
        if not commit.applied:
            continue
        for write in commit.writes:
            if write.path == LEDGER_KEY and write.verb == "set" and isinstance(write.value, Mapping):
                yield commit.namespace, commit.runtime_stage_id, _parse_ledger(write.value)


def _words(value: Any) -> list[str]:
    return value.split()[:256] if isinstance(value, str) else []


def _parse_ledger(value: Mapping[str, Any]) -> dict[str, Any]:
    rows = []
    for text in _words(value.get("rows")):
        pieces = text.split("/")
        if len(pieces) == 6 and all(p.isdigit() for p in pieces[2:]):
            armed, checked, findings, na = (int(p) for p in pieces[2:])
            rows.append(
                {"check": pieces[0], "seam": pieces[1], "armed": bool(armed), "checked": checked, "findings": findings,
                 "not_applicable": na}
            )  # fmt: skip
    return {"declared": _words(value.get("declared")), "rows": rows, "invariants": _words(value.get("invariants"))}


def _dead(snap: FlowSnapshot, extensions: Mapping[str, Any] | None) -> Iterator[ContextError]:
    """Checks that never ran: a declared check with no row, an armed wire check idle on a run whose model was called
    (from the recorded ledgers, else a result's), and a member's invariants its mount never checked."""
    ledgers: list[tuple[str, str, dict[str, Any]]] = list(_ledgers(snap))
    ledger = (extensions or {}).get("integrity")
    if not any(ns == "" for ns, _, _ in ledgers) and isinstance(ledger, Mapping):
        rows = ledger.get("disposition")
        declared = [r.get("check") for r in rows or () if isinstance(r, Mapping)]
        ledgers.insert(0, ("", "", {"declared": declared, "rows": rows or []}))
    called = set(_called(snap))
    for ns, stage, value in ledgers:
        rows = [r for r in value.get("rows") or () if isinstance(r, Mapping)]
        filed = {r.get("check") for r in rows}
        for check in value.get("declared") or ():
            if check not in filed:
                yield ContextError(
                    kind="dead-check",
                    stage_id=stage or None,
                    source_id=_text(check),
                    message="a declared check filed no row in the run's ledger",
                )
        for row in rows:
            if not row.get("armed") or row.get("seam") != "wire" or ns not in called:
                continue
            if not row.get("checked") and not row.get("not_applicable"):
                yield ContextError(
                    kind="dead-check",
                    stage_id=stage or None,
                    source_id=_text(row.get("check")),
                    message="an armed check filed nothing on a run whose model was called",
                )
    yield from _unchecked_mounts(snap, ledgers)


def _called(snap: FlowSnapshot) -> Iterator[str]:
    """The namespaces whose model was called."""
    for commit in snap.commit_log:
        if commit.applied and any(w.path == "llm_call" for w in commit.writes):
            yield commit.namespace


def _child(namespace: str, stage_id: str) -> str:
    return f"{namespace}/{stage_id}" if namespace else stage_id


def _unchecked_mounts(snap: FlowSnapshot, ledgers: list[tuple[str, str, dict[str, Any]]]) -> Iterator[ContextError]:
    """A member whose ledger declares invariants left its mount (a subflow exit) without the mount filing them."""
    declaring = {ns for ns, _, value in ledgers if ns and value.get("invariants")}
    if not declaring:
        return
    for commit in snap.commit_log:
        if commit.kind != "subflow-exit" or _child(commit.namespace, commit.stage_id) not in declaring:
            continue
        if not any(w.path == MOUNT_KEY + commit.stage_id for w in commit.writes):
            yield ContextError(
                kind="dead-check",
                stage_id=commit.runtime_stage_id,
                source_id="invariants",
                message="a member's declared invariants were not checked where it is mounted",
            )


def _mounts(snap: FlowSnapshot) -> Iterator[ContextError]:
    """Invariant violations filed where a composition mounts a member (``integrity_mount:<mount id>``)."""
    for commit in snap.commit_log:
        if not commit.applied:
            continue
        for write in commit.writes:
            if not write.path.startswith(MOUNT_KEY) or not isinstance(write.value, Mapping):
                continue
            for row in write.value.get("findings") or ():
                if isinstance(row, Mapping):
                    yield ContextError(
                        kind=str(row.get("kind", INVARIANT_KIND))[:64],
                        stage_id=commit.runtime_stage_id,
                        source_id=_text(row.get("source_id")),
                        message=str(row.get("message", ""))[:300],
                    )


def mount_dispositions(run_or_recording: Any) -> list[dict[str, Any]]:
    """Every row the mounts of a composed run filed for their members' invariants, in order, each with its mount's
    runtime stage id and member (``checked`` / ``not_applicable`` / ``findings`` / ``disposition``)."""
    snap, _ = _snapshot_of(run_or_recording)
    out: list[dict[str, Any]] = []
    for commit in snap.commit_log:
        for write in commit.writes if commit.applied else ():
            if write.path.startswith(MOUNT_KEY) and isinstance(write.value, Mapping):
                member = write.value.get("member")
                for row in write.value.get("rows") or ():
                    if isinstance(row, Mapping):
                        out.append({**row, "mount": commit.runtime_stage_id, "member": member})
    return out


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
    """The last value set under ``key`` (a list) in each namespace, and the stage that set it."""
    last: dict[str, tuple[str, list[Any]]] = {}
    for commit in snap.commit_log:
        if not commit.applied:
            continue
        for write in commit.writes:
            if write.path == key and write.verb == "set" and isinstance(write.value, list | tuple):
                last[commit.namespace] = (commit.runtime_stage_id, list(write.value))
    yield from last.values()


def find_context_errors(run_or_recording: Any) -> ContextErrors:
    """Every integrity finding of one run: filed checks, dead checks, wire-manifest mismatches, unsupported claims."""
    snap, extensions = _snapshot_of(run_or_recording)
    found = ContextErrors(_findings(snap))
    found.extend(_wire(snap))
    found.extend(_claims(snap))
    found.extend(_mounts(snap))
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


__all__ = [
    "ContextError",
    "ContextErrors",
    "ContextErrorsTargetError",
    "errors_section",
    "find_context_errors",
    "mount_dispositions",
]
