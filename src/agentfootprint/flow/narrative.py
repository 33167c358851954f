"""Readable sentences for a run, rendered from the (served) commit log: the log is the single source."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agentfootprint._text import summarize_value
from agentfootprint.flow._namespace import MISSING, Namespace
from agentfootprint.flow.commit import Commit

if TYPE_CHECKING:
    from agentfootprint.flow.snapshot import FlowSnapshot


class NarrativeEntry(BaseModel):
    """One line of the story; ``type`` names what happened (stage, step, condition, fork, subflow, error...)."""

    type: str
    text: str
    depth: int
    runtime_stage_id: str | None = None
    stage_id: str | None = None


def _depth(ns: str) -> int:
    return 0 if not ns else ns.count("/") + 1


def _parent_ns(ns: str) -> str:
    return ns.rsplit("/", 1)[0] if "/" in ns else ""


def _threshold_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:80]
    except (TypeError, ValueError):
        return summarize_value(value)


class _Renderer:
    def __init__(self, snap: FlowSnapshot) -> None:
        self.snap = snap
        self.log = snap.commit_log
        self.out: list[NarrativeEntry] = []
        self.replay: dict[str, Namespace] = {"": Namespace("", snap.initial_state)}
        self.stage_no: dict[str, int] = defaultdict(int)
        self.branch_name: dict[int, str] = {}
        self.forks: dict[str, list[str]] = defaultdict(list)
        for c in self.log:
            if c.control_idx is not None and c.kind != "branch":
                self.branch_name.setdefault(c.control_idx, c.stage_name)
            if c.fork_branch and c.kind in ("branch", "subflow-enter") and c.parent_runtime_stage_id:
                self.forks[c.parent_runtime_stage_id].append(c.stage_name)
        self.forks_told: set[str] = set()

    def _fork_line(self, c: Commit, depth: int) -> None:
        parent = c.parent_runtime_stage_id
        if not c.fork_branch or not parent or parent in self.forks_told or c.control_idx:
            return
        names = self.forks[parent]
        self.forks_told.add(parent)
        plural = "s" if len(names) != 1 else ""
        self.add("fork", f"[Parallel]: Forking into {len(names)} parallel path{plural}: {', '.join(names)}.", depth, c)

    def add(self, type_: str, text: str, depth: int, c: Commit | None) -> None:
        self.out.append(
            NarrativeEntry(
                type=type_,
                text=text,
                depth=depth,
                runtime_stage_id=c.runtime_stage_id if c else None,
                stage_id=c.stage_id if c else None,
            )
        )

    def read_value(self, c: Commit, key: str, idx: int | None) -> Any:
        if idx is None:
            read_ns = c.namespace
            if c.kind == "subflow-enter":
                read_ns = _parent_ns(c.namespace)
            if read_ns:
                return MISSING
            return self.snap.initial_state.get(key, MISSING)
        if not 0 <= idx < len(self.log):
            return MISSING
        writer_ns = self.log[idx].namespace
        ns = self.replay.get(writer_ns)
        if ns is not None and ns.last_writer.get(key) == idx:
            return ns.state.get(key, MISSING)
        return self.snap.state_at(idx, writer_ns).get(key, MISSING)

    def steps(self, c: Commit, depth: int, read_prefix: str = "Read", write_prefix: str = "Write") -> None:
        i = 0
        for key, idx in c.reads.items():
            i += 1
            value = self.read_value(c, key, idx)
            shown = "undefined" if value is MISSING else summarize_value(value)
            self.add("step", f"Step {i}: {read_prefix} {key} = {shown}", depth, c)
        for w in c.writes:
            i += 1
            if w.verb == "set":
                text = f"{write_prefix} {w.path} = {summarize_value(w.value)}"
            elif w.verb == "append":
                items = w.value or []
                shown = summarize_value(items[0]) if len(items) == 1 else summarize_value(items)
                text = f"Append {w.path} += {shown}"
            elif w.verb == "merge":
                text = f"Update {w.path} = {summarize_value(w.value)}"
            else:
                text = f"Delete {w.path}"
            self.add("step", f"Step {i}: {text}", depth, c)
        for e in c.emits:
            self.add("emit", f"[emit] {e['name']}: {summarize_value(e['payload'])}", depth, c)

    def header(self, c: Commit, depth: int) -> None:
        self.stage_no[c.namespace] += 1
        n = self.stage_no[c.namespace]
        if c.visit > 1:
            text = f"Stage {n}: Looped back to {c.stage_name} (pass {c.visit})."
        elif n == 1:
            text = f"Stage {n}: The process began with {c.stage_name}."
        else:
            text = f"Stage {n}: Next, it moved on to {c.stage_name}."
        if c.description and c.visit == 1:  # the display name always appears; a description explains it
            text = f"{text[:-1]} — {c.description}."
        self.add("stage", text, depth, c)

    def decision(self, c: Commit, depth: int) -> None:
        d = c.decision or {}
        chosen = list(d.get("chosen") or [])
        rules = d.get("rules") or []
        if c.kind == "selector":
            names = [self._name_of_branch(c, b) for b in chosen]
            total = len(rules) if rules else len(chosen)
            self.add(
                "selected",
                f"[Selected]: {len(chosen)} of {total} paths selected: {', '.join(names) if names else 'none'}.",
                depth,
                c,
            )
            return
        name = self.branch_name.get(c.idx, chosen[0] if chosen else "?")
        if not rules:
            self.add("condition", f"[Condition]: A decision was made, and the path taken was {name}.", depth, c)
            return
        parts: list[str] = []
        for r in rules:
            mark = "✓" if r.get("matched") else "✗"
            if r.get("type") == "filter":
                conds = ", ".join(
                    f"{x['key']} {x['actual']} {x['op']} {_threshold_text(x.get('threshold'))} "
                    f"{'✓' if x['result'] else '✗'}"
                    for x in r.get("conditions", [])
                )
                text = f'Rule {r["index"]} "{r["label"]}": {conds or mark}'
            else:
                ins = ", ".join(f"{x['key']}={x['value']}" for x in r.get("inputs", []))
                text = f'"{r["label"]}": {ins} {mark}'.replace(":  ", ": ")
            if r.get("error"):
                text += f" (error: {r['error']})"
            parts.append(text)
            if r.get("matched"):
                break
        if d.get("default_used"):
            errs = sum(1 for r in rules if r.get("error"))
            extra = f" ({errs} rules threw errors)" if errs else ""
            self.add(
                "condition",
                f"[Condition]: It evaluated {'; '.join(parts)}. No rules matched{extra}, fell back to default: {name}.",
                depth,
                c,
            )
        else:
            self.add("condition", f"[Condition]: It evaluated {'; '.join(parts)}, and chose {name}.", depth, c)

    def _name_of_branch(self, c: Commit, branch_id: str) -> str:
        for later in self.log[c.idx + 1 :]:
            if later.stage_id == branch_id and later.control_idx == c.idx:
                return later.stage_name
        return branch_id

    def run(self) -> list[NarrativeEntry]:
        for c in self.log:
            ns = c.namespace
            if c.kind == "subflow-enter":
                d = _depth(_parent_ns(ns))
                self._fork_line(c, d)
                self.add("subflow", f"Entering the {c.stage_name} subflow.", d, c)
                self.steps(c, d + 1, write_prefix="Input:")
                self.replay[ns] = Namespace(ns)
            elif c.kind == "subflow-exit":
                d = _depth(ns)
                self.add("subflow", f"Exiting the {c.stage_name} subflow.", d, c)
                self.steps(c, d + 1, read_prefix="Output from", write_prefix="Write")
            elif c.kind == "join":
                d = _depth(ns)
                if c.failed:
                    self.add("error", f"[Error]: An error occurred at the join of {c.stage_name}: {c.error}.", d, c)
                elif c.writes:
                    keys = ", ".join(w.path for w in c.writes)
                    self.add("join", f"[Join]: Merged {keys} from the parallel paths of {c.stage_name}.", d, c)
            else:
                d = _depth(ns)
                if c.kind == "branch" and not c.control_idx:
                    self._fork_line(c, d)
                self.header(c, d)
                self.steps(c, d + 1)
                if c.kind in ("decider", "selector") and c.decision is not None and not c.failed:
                    self.decision(c, d + 1)
            if c.failed and c.kind != "join":
                self.add("error", f"[Error]: An error occurred at {c.stage_name}: {c.error}.", _depth(ns), c)
            if c.paused:
                self.add("pause", f"Execution paused at {c.stage_name}.", _depth(ns), c)
            if c.break_reason is not None and c.kind != "subflow-exit":
                self.add("break", f"Execution stopped at {c.stage_name}: {c.break_reason}.", _depth(ns), c)
            if c.applied:
                target = self.replay.get(ns)
                if target is None:
                    target = self.replay[ns] = Namespace(ns)
                target.apply(c.idx, c.writes)
        return self.out


def render_narrative(snapshot: FlowSnapshot) -> list[NarrativeEntry]:
    """Render a snapshot's commit log as narrative entries (byte-stable for the same log)."""
    return _Renderer(snapshot).run()


def narrative_text(entries: list[NarrativeEntry]) -> str:
    return "\n".join("  " * e.depth + e.text for e in entries)
