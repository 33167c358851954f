"""What the explorer shows of a run, as JSON: question, answer, stages, model and tool calls, narrative and every
source's chain; a source's birth and forward slice; two runs compared. Read only from the served recording."""

from __future__ import annotations

from typing import Any

from agentfootprint.explain import BacktrackError, WhatIfError, backtrack, diff, forward_slice
from agentfootprint.explain.recording import Recording
from agentfootprint.explorer.catalog import ExplorerError
from agentfootprint.flow import Commit, FlowSnapshot, render_narrative

MAX_NARRATIVE = 5000


def _writes(c: Commit) -> dict[str, Any]:
    return {w.path: w.value for w in c.writes}


def _status(snap: FlowSnapshot) -> str:
    if any(c.failed for c in snap.commit_log):
        return "failed"
    if any(c.paused for c in snap.commit_log):
        return "paused"
    return "completed" if snap.state.get("answer") is not None else "unfinished"


def stages_of(snap: FlowSnapshot) -> dict[str, Any]:
    """The stages taken in order, and the flowchart they trace: each stage once (with its description, said once
    rather than on each of its steps), its visits and the edges the run actually followed."""
    steps: list[dict[str, Any]] = []
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[str, str], int] = {}
    last: dict[str, str] = {}
    for c in snap.commit_log:
        chosen = (c.decision or {}).get("chosen") if isinstance(c.decision, dict) else None
        steps.append(
            {
                "id": c.runtime_stage_id,
                "stage": c.stage_id,
                "name": c.stage_name or c.stage_id,
                "kind": c.kind,
                "namespace": c.namespace,
                "failed": c.failed,
                "paused": c.paused,
                "error": c.error,
                "chosen": list(chosen) if isinstance(chosen, list) else None,
            }
        )
        key = f"{c.namespace}/{c.stage_id}" if c.namespace else c.stage_id
        node = nodes.get(key)
        if node is None:
            name = c.stage_name or c.stage_id
            nodes[key] = node = {"id": key, "name": name, "description": c.description, "visits": 0, "failed": False}
        node["visits"] += 1
        node["failed"] = node["failed"] or c.failed
        prev = last.get(c.namespace)
        if prev is not None:
            edges[(prev, key)] = edges.get((prev, key), 0) + 1
        last[c.namespace] = key
    return {
        "steps": steps,
        "flow": {
            "nodes": list(nodes.values()),
            "edges": [{"from": a, "to": b, "count": n} for (a, b), n in edges.items()],
        },
    }


def _latency(response: dict[str, Any]) -> float | None:
    for key in ("latency_ms", "elapsed_ms", "duration_ms"):
        value = response.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def timeline_of(snap: FlowSnapshot) -> list[dict[str, Any]]:
    """Model and tool calls in order: tokens, latency and cost where the recording holds them."""
    out: list[dict[str, Any]] = []
    seen_calls: set[tuple[str, str]] = set()
    cost_before: dict[str, float] = {}
    for c in snap.commit_log:
        if not c.applied:
            continue
        w = _writes(c)
        response = w.get("last_response")
        if c.stage_id == "call-llm" and isinstance(response, dict):
            found = response.get("usage")
            usage: dict[str, Any] = found if isinstance(found, dict) else {}
            cost = None
            total = w.get("cost_total")
            if isinstance(total, int | float) and not isinstance(total, bool):
                cost = round(float(total) - cost_before.get(c.namespace, 0.0), 10)
                cost_before[c.namespace] = float(total)
            calls = response.get("tool_calls") or []
            out.append(
                {
                    "kind": "model",
                    "at": c.runtime_stage_id,
                    "namespace": c.namespace,
                    "model": response.get("model"),
                    "input_tokens": usage.get("input_tokens"),
                    "output_tokens": usage.get("output_tokens"),
                    "reasoning_tokens": usage.get("reasoning_tokens"),
                    "finish_reason": response.get("finish_reason"),
                    "tool_calls": [str(t.get("name")) for t in calls if isinstance(t, dict)],
                    "latency_ms": _latency(response),
                    "cost": cost,
                    "failed": False,
                }
            )
        results = w.get("tool_results")
        if isinstance(results, list):
            for r in results:
                if not isinstance(r, dict):
                    continue
                key = (c.namespace, str(r.get("call_id")))
                if key in seen_calls:
                    continue
                seen_calls.add(key)
                out.append(
                    {
                        "kind": "tool",
                        "at": c.runtime_stage_id,
                        "namespace": c.namespace,
                        "name": r.get("name"),
                        "call_id": r.get("call_id"),
                        "latency_ms": _latency(r),
                        "failed": bool(r.get("is_error")),
                        "error_code": r.get("error_code"),
                        "truncated": bool(r.get("truncated")),
                    }
                )
    return out


def _sources(rec: Recording) -> tuple[str | None, list[dict[str, Any]] | None, str | None]:
    try:
        bt = backtrack(rec)
    except BacktrackError as exc:
        return None, [], str(exc)
    return bt.trigger, [s.model_dump(mode="json") for s in bt.sources], None


def narrative_view(rec: Recording) -> dict[str, Any]:
    """The run's narrative (at most ``MAX_NARRATIVE`` lines)."""
    narrative = render_narrative(rec.snapshot)
    return {
        "narrative": [
            {"text": e.text, "depth": e.depth, "type": e.type, "stage": e.runtime_stage_id}
            for e in narrative[:MAX_NARRATIVE]
        ],
        "narrative_truncated": len(narrative) > MAX_NARRATIVE,
    }


def run_view(rec: Recording, *, sources: bool = True, narrative: bool = True) -> dict[str, Any]:
    """Everything the run page shows, as JSON. ``sources=False`` leaves out the backtrack (``trigger`` and
    ``sources`` None) and ``narrative=False`` the narrative (None): the page asks for them on their own, so the
    rest shows at once on a long run."""
    snap = rec.snapshot
    state = snap.state
    trigger, trails, why_none = _sources(rec) if sources else (None, None, None)
    told = narrative_view(rec) if narrative else {"narrative": None, "narrative_truncated": None}
    return {
        "run_id": snap.run_id,
        "agent": rec.agent,
        "model": rec.model,
        "question": state.get("user_message"),
        "answer": state.get("answer"),
        "status": _status(snap),
        "redacted": snap.redacted,
        "stopped_early": state.get("stopped_early"),
        "usage": state.get("usage_total"),
        "cost": state.get("cost_total"),
        "declared_sources": dict(rec.sources),
        **stages_of(snap),
        "timeline": timeline_of(snap),
        **told,
        "trigger": trigger,
        "sources": trails,
        "no_sources_reason": why_none,
    }


def backtrack_view(rec: Recording, at: str | None) -> dict[str, Any]:
    """``backtrack`` of the run (from the answer, or from the model call ``at``) as JSON."""
    try:
        return backtrack(rec, at=at).to_json()
    except BacktrackError:
        raise ExplorerError(
            "nothing to backtrack here: no recorded model call, or no such step", code="ERR_EXPLORER_BACKTRACK"
        ) from None


def source_view(rec: Recording, source_id: str) -> dict[str, Any]:
    """One source: its chain, where it was born, and every stage that read it or what it fed (forward slice)."""
    try:
        bt = backtrack(rec)
    except BacktrackError:
        bt = None
    trail = bt.source(source_id) if bt is not None else None
    try:
        sliced = forward_slice(rec, source_id)
    except WhatIfError:
        sliced = None
    if trail is None and sliced is None:
        raise ExplorerError("this run has no such source", code="ERR_EXPLORER_NO_SOURCE")
    born = next((h.model_dump(mode="json") for h in trail.hops if h.kind == "born"), None) if trail else None
    return {
        "id": source_id,
        "trail": trail.model_dump(mode="json") if trail is not None else None,
        "born": born,
        "forward_slice": sliced or [],
    }


def diff_view(a: Recording, b: Recording) -> dict[str, Any]:
    """Two runs compared: where they first diverge and which sources differ."""
    d = diff(a, b)
    data = d.model_dump(mode="json")
    data["text"] = str(d)
    data["a"] = {"run_id": a.snapshot.run_id, "answer": a.snapshot.state.get("answer")}
    data["b"] = {"run_id": b.snapshot.run_id, "answer": b.snapshot.state.get("answer")}
    return data


__all__ = ["backtrack_view", "diff_view", "narrative_view", "run_view", "source_view", "stages_of", "timeline_of"]
