"""Diff: where two runs first part ways (stage, model call, tool call, decision) and which sources their answers
did not share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint._text import summarize_value
from agentfootprint.explain._runs import final_answer_commit, quiet, read_value, snapshot_of_run
from agentfootprint.flow import Commit, FlowSnapshot

StagePair = tuple[str | None, str | None]
"""A runtime stage id in run A and its counterpart in run B (None: that run had no such step)."""


class RunDiff(BaseModel):
    """Two runs compared: their first divergent steps, and the sources added, removed or changed between them."""

    model_config = ConfigDict(frozen=True)

    run_a: str
    run_b: str
    first_divergence: StagePair | None = None
    divergence_keys: list[str] = Field(default_factory=list)
    """What differed there: the keys read or written differently (``stage`` when different stages ran)."""
    first_model_call: StagePair | None = None
    first_tool_call: StagePair | None = None
    first_decision: StagePair | None = None
    sources_added: list[str] = Field(default_factory=list)
    sources_removed: list[str] = Field(default_factory=list)
    sources_changed: list[str] = Field(default_factory=list)
    only_a: list[str] = Field(default_factory=list)
    """Source ids A's answer depended on that B's did not (removed in B, or changed)."""
    only_b: list[str] = Field(default_factory=list)
    """Source ids B's answer depended on that A's did not (added in B, or changed)."""
    answer_a: str | None = None
    answer_b: str | None = None

    @property
    def agree(self) -> bool:
        """Whether the runs read and wrote the same values at every step."""
        return self.first_divergence is None

    def __str__(self) -> str:
        lines = [f"Run A {self.run_a[:12]} vs run B {self.run_b[:12]}"]
        if self.first_divergence is None:
            lines.append("The runs agree: the same steps read and wrote the same values.")
        else:
            what = f" ({', '.join(self.divergence_keys)} differ)" if self.divergence_keys else ""
            lines.append(f"First divergence: {_pair(self.first_divergence)}{what}")
            for label, pair in (
                ("model call", self.first_model_call),
                ("tool call", self.first_tool_call),
                ("decision", self.first_decision),
            ):
                if pair is not None:
                    lines.append(f"First divergent {label}: {_pair(pair)}")
        if self.answer_a == self.answer_b:
            lines.append(f"Same answer: {_shown(self.answer_a)}")
        else:
            lines.append(f"Answer A: {_shown(self.answer_a)}")
            lines.append(f"Answer B: {_shown(self.answer_b)}")
        lines.append(f"Sources removed (A only): {', '.join(self.sources_removed) or 'none'}")
        lines.append(f"Sources added (B only): {', '.join(self.sources_added) or 'none'}")
        lines.append(f"Sources changed: {', '.join(self.sources_changed) or 'none'}")
        return "\n".join(lines)


def _shown(answer: str | None) -> str:
    return "(none: the run gave no answer)" if answer is None else summarize_value(answer, 100)


def _pair(pair: StagePair) -> str:
    return f"{pair[0] or '(no such step)'} in A, {pair[1] or '(no such step)'} in B"


def _writes_by_key(commit: Commit) -> dict[str, list[tuple[str, Any]]]:
    out: dict[str, list[tuple[str, Any]]] = {}
    for w in commit.writes:
        out.setdefault(w.path, []).append((w.verb, quiet(w.value)))
    return out


def _differences(
    sa: FlowSnapshot, ca: Commit, sb: FlowSnapshot, cb: Commit, *, same_past: bool, reads: bool = True
) -> list[str]:
    """What differs between two commits (empty: nothing). ``same_past``: every earlier commit is known equal, so a
    read that saw the same commit idx in both runs saw the same value; ``reads=False`` compares what they did only."""
    if (ca.stage_id, ca.namespace, ca.kind) != (cb.stage_id, cb.namespace, cb.kind):
        return ["stage"]
    out: dict[str, None] = {}
    if (ca.failed, ca.paused) != (cb.failed, cb.paused):
        out["outcome"] = None
    for key in sorted(set(ca.reads) | set(cb.reads)) if reads else ():
        if key not in ca.reads or key not in cb.reads:
            out[key] = None
            continue
        tracked = key in (ca.read_values or {}) or key in (cb.read_values or {})
        if same_past and not tracked and ca.reads[key] == cb.reads[key] and ca.reads[key] is not None:
            continue
        if quiet(read_value(sa, ca, key)) != quiet(read_value(sb, cb, key)):
            out[key] = None
    wa, wb = _writes_by_key(ca), _writes_by_key(cb)
    for key in [*wa, *(k for k in wb if k not in wa)]:
        if wa.get(key) != wb.get(key):
            out[key] = None
    if quiet(ca.decision) != quiet(cb.decision):
        out["decision"] = None
    return list(out)


def _first_divergence(sa: FlowSnapshot, sb: FlowSnapshot) -> tuple[int, StagePair, list[str]] | None:
    """The position of the first commit that differs, its pair of stage ids and what differed there."""
    same_start = quiet(sa.initial_state) == quiet(sb.initial_state)
    for n, (ca, cb) in enumerate(zip(sa.commit_log, sb.commit_log, strict=False)):
        keys = _differences(sa, ca, sb, cb, same_past=same_start)
        if keys:
            return n, (ca.runtime_stage_id, cb.runtime_stage_id), keys
    tail = _tail(sa.commit_log, sb.commit_log)
    return None if tail is None else (min(len(sa.commit_log), len(sb.commit_log)), tail, ["stage"])


def _tail(la: list[Commit], lb: list[Commit]) -> StagePair | None:
    """The first step only one run took, when one sequence is a prefix of the other."""
    if len(la) == len(lb):
        return None
    n = min(len(la), len(lb))
    return la[n].runtime_stage_id if n < len(la) else None, lb[n].runtime_stage_id if n < len(lb) else None


def _first_among(
    sa: FlowSnapshot, sb: FlowSnapshot, which: Callable[[Commit], bool], agreed: int, *, reads: bool = True
) -> StagePair | None:
    """The first pair (by order) of the steps ``which`` picks that differ (``reads``: read values included); the
    first ``agreed`` commits of both logs are known equal."""
    la = [c for c in sa.commit_log if which(c)]
    lb = [c for c in sb.commit_log if which(c)]
    for ca, cb in zip(la, lb, strict=False):
        if ca.idx < agreed and cb.idx < agreed:
            continue
        if _differences(sa, ca, sb, cb, same_past=False, reads=reads):
            return ca.runtime_stage_id, cb.runtime_stage_id
    return _tail(la, lb)


def _is_model_call(c: Commit) -> bool:
    return c.stage_id == "call-llm"


def _is_decision(c: Commit) -> bool:
    return c.kind in ("decider", "selector")


def _is_tool_call(c: Commit) -> bool:
    """A tool call is judged by what it ran and returned (its writes), not by the model turn that asked for it."""
    return c.stage_id == "tool-calls"


def _sources(snap: FlowSnapshot) -> dict[str, tuple[str, ...]]:
    """Each source that reached the answer (a tool result by its ``name#n``) → its text(s)."""
    from agentfootprint.explain.backtrack import BacktrackError, backtrack

    try:
        trail = backtrack(snap)
    except BacktrackError:  # a run with no model call: nothing reached an answer
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for s in trail.sources:
        sid = s.result_id or s.id
        out[sid] = (*out.get(sid, ()), s.text)
    return out


def _answer(snap: FlowSnapshot) -> str | None:
    final = final_answer_commit(snap)
    if final is None:
        return None
    value = snap.value_at("answer", final.idx)
    return value if isinstance(value, str) or value is None else str(value)


def diff(a: Any, b: Any) -> RunDiff:
    """Compare run ``a`` with run ``b`` (results, recordings or snapshots): where they part and what changed."""
    sa, sb = snapshot_of_run(a, "a"), snapshot_of_run(b, "b")
    found = _first_divergence(sa, sb)
    src_a, src_b = _sources(sa), _sources(sb)
    changed = [k for k in src_a if k in src_b and src_a[k] != src_b[k]]
    removed = [k for k in src_a if k not in src_b]
    added = [k for k in src_b if k not in src_a]
    agreed = found[0] if found else 0
    return RunDiff(
        run_a=sa.run_id,
        run_b=sb.run_id,
        first_divergence=found[1] if found else None,
        divergence_keys=found[2] if found else [],
        first_model_call=_first_among(sa, sb, _is_model_call, agreed) if found else None,
        first_tool_call=_first_among(sa, sb, _is_tool_call, agreed, reads=False) if found else None,
        first_decision=_first_among(sa, sb, _is_decision, agreed) if found else None,
        sources_added=added,
        sources_removed=removed,
        sources_changed=changed,
        only_a=[k for k in src_a if k not in src_b or src_a[k] != src_b[k]],
        only_b=[k for k in src_b if k not in src_a or src_a[k] != src_b[k]],
        answer_a=_answer(sa),
        answer_b=_answer(sb),
    )
