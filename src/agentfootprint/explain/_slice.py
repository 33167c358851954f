"""Forward slice: every step that read a source, and every step that read what those fed, up to the answer."""

from __future__ import annotations

from typing import Any

from agentfootprint.explain._runs import WhatIfError, final_answer_commit, snapshot_of_run
from agentfootprint.explain._targets import as_target
from agentfootprint.flow import Commit, FlowSnapshot

_INJECTION_KEYS = ("system_prompt_injections", "message_injections")


def _carries(record: Any, source_id: str) -> bool:
    """Whether an injection record holds the source: as its own id, or as one of its chunks or memory entries."""
    if not isinstance(record, dict):
        return False
    if str(record.get("source_id")) == source_id:
        return True
    parts = [*(record.get("chunks") or ()), *(record.get("entries") or ())]
    ids = [*(record.get("chunk_ids") or ()), *(record.get("entry_ids") or ())]
    return source_id in {str(i) for i in ids} or any(
        isinstance(p, dict) and str(p.get("id")) == source_id for p in parts
    )


def _recorded_origins(snap: FlowSnapshot, source_id: str) -> dict[int, set[str]]:
    """Commits that wrote the source into the state (an injection, a tool's spec or result) → the keys holding it."""
    out: dict[int, set[str]] = {}
    counts: dict[tuple[str, str], int] = {}
    for c in snap.commit_log:
        if not c.applied:
            continue
        if c.kind == "subflow-enter":  # a member's tool results are counted from its own start
            counts = {k: v for k, v in counts.items() if k[0] != c.namespace}
        for w in c.writes:
            items = w.value if isinstance(w.value, list | tuple) and w.verb in ("set", "append") else ()
            if w.path in _INJECTION_KEYS and any(_carries(r, source_id) for r in items):
                out.setdefault(c.idx, set()).add(w.path)
            elif w.path == "tool_specs" and any(isinstance(s, dict) and s.get("name") == source_id for s in items):
                out.setdefault(c.idx, set()).add(w.path)
            elif w.path == "tool_results" and w.verb == "append":
                for r in items:
                    name = str(r.get("name")) if isinstance(r, dict) else ""
                    counts[(c.namespace, name)] = n = counts.get((c.namespace, name), 0) + 1
                    if source_id in (name, f"{name}#{n}"):
                        out.setdefault(c.idx, set()).update(c.keys_written())
    return out


def _traced_origins(snap: FlowSnapshot, source_id: str) -> dict[int, set[str]]:
    """Sources only backtrack names (a history message, a summary): the commit that landed them in the history."""
    from agentfootprint.explain.backtrack import BacktrackError, backtrack

    try:
        trail = backtrack(snap)
    except BacktrackError:
        return {}
    out: dict[int, set[str]] = {}
    for s in trail.sources:
        if source_id not in (s.id, s.result_id):
            continue
        # the deepest LANDED hop: a member's source is reached through the hops of the input that carried it
        hop = next((h for h in reversed(s.hops) if h.kind == "landed" and h.runtime_stage_id), None)
        hop = hop or next((h for h in reversed(s.hops) if h.kind == "born" and h.runtime_stage_id), None)
        landed = snap.commit(hop.runtime_stage_id) if hop is not None and hop.runtime_stage_id else None
        if landed is not None:
            keys = {k for k in landed.keys_written() if k in ("history", "user_message")}
            out.setdefault(landed.idx, set()).update(keys or landed.keys_written())
    return out


def _saw_tainted(snap: FlowSnapshot, key: str, idx: int | None, values: set[tuple[int, str]], steps: set[int]) -> bool:
    """Whether a read of ``key`` that saw commit ``idx`` saw a value the source fed (a mount may rename the key)."""
    if idx is None:
        return False
    if (idx, key) in values:
        return True
    return idx in steps and 0 <= idx < len(snap.commit_log) and key not in snap.commit_log[idx].keys_written()


def _fed(snap: FlowSnapshot, origins: dict[int, set[str]]) -> list[Commit]:
    """The origins and every commit that read a value they (or what they fed) wrote, in order, up to the answer."""
    final = final_answer_commit(snap)
    values: set[tuple[int, str]] = set()  # (commit idx, key) whose written value the source fed
    steps: set[int] = set()
    last: dict[tuple[str, str], int] = {}
    out: list[Commit] = []
    for c in snap.commit_log:
        if final is not None and c.idx > final.idx:
            break
        if c.kind == "subflow-enter" and c.namespace:
            last = {k: v for k, v in last.items() if k[0] != c.namespace}
        read = any(_saw_tainted(snap, k, i, values, steps) for k, i in c.reads.items())
        landed = origins.get(c.idx, set())
        for w in c.writes if c.applied else ():
            prev = last.get((c.namespace, w.path))
            kept = w.verb in ("append", "merge") and prev is not None and (prev, w.path) in values
            if read or kept or w.path in landed:
                values.add((c.idx, w.path))
            last[(c.namespace, w.path)] = c.idx
        if read or c.idx in origins:
            steps.add(c.idx)
            out.append(c)
    return out


def _declared(run: Any) -> set[str]:
    """The source ids the run's agent declared (a result's runner, a recording's ``sources``), when known."""
    record = as_target(run)
    declared = getattr(record, "sources", None)
    if isinstance(declared, dict):
        return {str(k) for k in declared}
    ids = getattr(record, "source_ids", None)
    try:
        found = ids() if callable(ids) else {}
    except (AttributeError, TypeError):  # a record whose runner declares nothing
        return set()
    return {str(k) for k in found} if isinstance(found, dict) else set()


def forward_slice(run: Any, source_id: str) -> list[str]:
    """Runtime stage ids, in order, of the steps that read ``source_id`` or what it fed, up to the answer."""
    snap = snapshot_of_run(run, "run")
    if not isinstance(source_id, str) or not source_id:
        raise WhatIfError("source_id must be a non-empty string", code="ERR_WHATIF_SOURCE_ID")
    origins = _recorded_origins(snap, source_id) or _traced_origins(snap, source_id)
    if not origins and source_id in _declared(run):
        return []  # declared, but it never landed in this run: it fed nothing
    if not origins:
        raise WhatIfError("no source with that id is declared or landed in this run", code="ERR_WHATIF_UNKNOWN_SOURCE")
    return list(dict.fromkeys(c.runtime_stage_id for c in _fed(snap, origins)))
