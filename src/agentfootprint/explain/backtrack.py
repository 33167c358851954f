"""Backtrack: the exact context that reached a model call, each with its chain from ANSWER back to BORN."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentfootprint._text import summarize_value
from agentfootprint.context.window import SUMMARY_PREFIX, folded_span_for
from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain._targets import RecordLike, as_target
from agentfootprint.flow import Commit, FlowSnapshot, thaw

SourceKind = Literal["fact", "steering", "instruction", "skill", "memory", "rag", "tool", "message", "system"]
HopKind = Literal["answer", "read", "landed", "allowed", "born", "via"]
_FLAVOR_FACTORY = {
    "fact": "define_fact",
    "steering": "define_steering",
    "instruction": "define_instruction",
    "skill": "define_skill",
    "memory": "define_memory",
    "rag": "define_rag",
    "custom": "Injection",
}
ABLATABLE_KINDS = ("fact", "steering", "instruction", "skill", "tool", "memory", "rag")


class BacktrackError(AgentFootprintError, ValueError):
    """Nothing to backtrack: no recorded model call, or an unknown ``at`` step (``steps`` lists the valid ones)."""

    code = "ERR_BACKTRACK"

    def __init__(self, message: str, *, steps: tuple[str, ...] = (), code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.steps = steps


class Hop(BaseModel):
    """One link of a source's chain; ``runtime_stage_id`` is None for a definition (born before the run)."""

    kind: HopKind
    runtime_stage_id: str | None
    detail: str
    note: str | None = None


class SourceTrail(BaseModel):
    """One piece of context that reached the model call, and how it got there."""

    kind: SourceKind
    id: str
    text: str
    slot: Literal["system_prompt", "messages", "tools"]
    hops: list[Hop]
    trigger: str | None = None
    position: int = 0
    document_id: str | None = None
    """For a retrieved chunk: the document it was cut from."""
    parent: str | None = None
    """For a retrieved chunk or a recalled memory entry: the retrieval or memory (its injection id) that landed it;
    for one result of a tool ranked on its own (``rank_suspects``): the tool."""
    result_id: str | None = None
    """For a tool result: its per-call id (``lookup#2``: the run's second result of ``lookup``), ablatable alone."""

    @property
    def ablatable(self) -> bool:
        return self.kind in ABLATABLE_KINDS

    def __str__(self) -> str:
        """The source and its chain, one hop a line (ANSWER ← READ ← LANDED ← ALLOWED ← BORN)."""
        shown = summarize_value(self.text, 100) if self.text or self.kind != "message" else "(no text: a tool request)"
        lines = [f"[{self.kind}] {self.id}: {shown}"]
        for h in self.hops:
            where = f" {h.runtime_stage_id}" if h.runtime_stage_id else ""
            note = f" ({h.note})" if h.note else ""
            lines.append(f"  {h.kind.upper():<8}{where} {h.detail}{note}")
        return "\n".join(lines)


class Backtrack(BaseModel):
    """The answer, the model call that produced it, and every source that reached that call."""

    answer: str | None
    trigger: str
    answer_stage: str | None = None
    sources: list[SourceTrail] = Field(default_factory=list)
    run_id: str | None = None

    def source(self, source_id: str) -> SourceTrail | None:
        return next((s for s in self.sources if s.id == source_id), None)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def __str__(self) -> str:
        lines = [
            f"ANSWER {summarize_value(self.answer or '', 200)}",
            f"Decided at {self.trigger}; {len(self.sources)} source(s) reached it:",
        ]
        lines.extend(f"\n{s}" for s in self.sources)
        return "\n".join(lines)


def _snapshot_of(target: RecordLike) -> FlowSnapshot:
    target = as_target(target)
    if isinstance(target, FlowSnapshot):
        return target
    last = getattr(target, "last_snapshot", None)
    if callable(last):
        snap = last()
        if snap is None:
            raise BacktrackError("the agent has no recorded run yet; run it first")
        return snap  # type: ignore[no-any-return]
    snap_attr = getattr(target, "snapshot", None)
    if isinstance(snap_attr, FlowSnapshot):
        return snap_attr
    if isinstance(target, dict):
        return FlowSnapshot.model_validate(target.get("snapshot", target))
    raise BacktrackError(f"cannot backtrack a {type(target).__name__}: pass an Agent, a snapshot or a recording")


def _root_calls(snap: FlowSnapshot) -> list[Commit]:
    """Applied model calls in any namespace (a composition's members run in subflow namespaces)."""
    return [c for c in snap.commit_log if c.stage_id == "call-llm" and c.applied]


def _trigger_commit(snap: FlowSnapshot, at: str | None) -> Commit:
    calls = _root_calls(snap)
    if not calls:
        raise BacktrackError("no model call was recorded in this run")
    if at is None:
        return calls[-1]
    target = snap.commit(at)
    before = [] if target is None else [c for c in calls if c.idx <= target.idx]
    if not before:
        steps = tuple(c.runtime_stage_id for c in snap.commit_log[calls[0].idx :] if c.namespace == calls[0].namespace)
        shown = ", ".join(steps[:30]) + (f", and {len(steps) - 30} more" if len(steps) > 30 else "")
        why = "no step with that id in this run" if target is None else "that step comes before any model call"
        raise BacktrackError(f"{why}; steps you can backtrack from: {shown}", steps=steps)
    return before[-1]


def _history_provenance(snap: FlowSnapshot, upto: int, namespace: str) -> list[tuple[int, Any]]:
    """(commit idx that added it, message) for each history entry as of commit ``upto``."""
    entries: list[tuple[int, Any]] = []
    for c in snap.commit_log[: upto + 1]:
        if c.namespace != namespace or not c.applied:
            continue
        if c.kind == "subflow-enter":
            entries = []
        for w in c.writes:
            if w.path != "history":
                continue
            if w.verb == "set":
                entries = _realigned(entries, list(w.value or []), c.idx)
            elif w.verb == "append":
                entries.extend((c.idx, m) for m in (w.value or []))
            elif w.verb == "delete":
                entries = []
    return entries


def _realigned(before: list[tuple[int, Any]], after: list[Any], idx: int) -> list[tuple[int, Any]]:
    """A rewritten history keeps the provenance of the entries it kept (a window fold replaces a middle span):
    the common prefix and suffix keep their adders, what changed between them is attributed to commit ``idx``."""
    head = 0
    while head < min(len(before), len(after)) and before[head][1] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail][1] == after[-1 - tail]:
        tail += 1
    middle = [(idx, m) for m in after[head : len(after) - tail]]
    return [*before[:head], *middle, *(before[len(before) - tail :] if tail else [])]


FOREIGN_NOTE = "foreign-trace: the imported trace does not record why this reached the call"


def _born_detail(record: dict[str, Any]) -> str:
    if record.get("foreign"):  # an imported trace: only what it recorded, never an invented definition
        return str(record.get("born") or "unknown (foreign-trace)")
    source = record.get("source", "custom")
    if source == "system":
        return "Agent.system(...) — the base system prompt"
    return f"{_FLAVOR_FACTORY.get(source, 'Injection')}('{record.get('source_id')}')"


def _allowed_hop(rid: str, record: dict[str, Any]) -> Hop:
    """ALLOWED: ``detail`` is exactly the trigger (always / rule / on-tool-return <tool> / llm-activated)."""
    if record.get("foreign"):
        return Hop(kind="allowed", runtime_stage_id=None, detail="unknown", note=FOREIGN_NOTE)
    trigger = str(record.get("trigger") or "always")
    reason = str(record.get("reason") or "")
    since = record.get("since_iteration")
    when = f"active since iteration {since}" if since is not None else None
    if trigger.startswith("llm-activated") or record.get("source") == "skill":
        detail, note = "llm-activated", "the model called read_skill"
    elif trigger.startswith("rule"):
        label = trigger[5:] if trigger.startswith("rule ") else ""
        detail, note = "rule", (f"rule {label} held" if label else "its rule held")
    elif trigger.startswith("on-tool-return"):
        detail, note = (reason if reason.startswith("on-tool-return ") else trigger), "the named tool returned"
    else:
        detail, note = "always", None
    parts = [p for p in (note, when) if p]
    return Hop(kind="allowed", runtime_stage_id=rid, detail=detail, note="; ".join(parts) or None)


def _injected_sources(
    snap: FlowSnapshot,
    call: Commit,
    answer_hop: Hop,
    read_hop_detail: str,
    slot_key: str,
    records_key: str,
    slot: Literal["system_prompt", "messages"],
    start: int,
) -> list[SourceTrail]:
    landed_idx = call.reads.get(slot_key)
    if landed_idx is None:
        return []
    landed = snap.commit_log[landed_idx]
    allowed_idx = landed.reads.get(records_key)
    if allowed_idx is None:
        return []
    allowed = snap.commit_log[allowed_idx]
    records = snap.value_at(records_key, landed.idx, landed.namespace, default=[]) or []
    out: list[SourceTrail] = []
    for i, record in enumerate(records):
        kind = record.get("source", "custom")
        kind = kind if kind in ("fact", "steering", "instruction", "skill", "memory", "rag", "system") else "fact"
        if kind in ("rag", "memory"):
            out.extend(_part_sources(call, landed, allowed, record, answer_hop, read_hop_detail, slot, start + i))
        out.append(
            SourceTrail(
                kind=kind,
                id=str(record.get("source_id")),
                text=str(record.get("text", "")),
                slot=slot,
                trigger=str(record.get("trigger")),
                position=start + i,
                hops=[
                    answer_hop,
                    Hop(kind="read", runtime_stage_id=call.runtime_stage_id, detail=read_hop_detail),
                    Hop(kind="landed", runtime_stage_id=landed.runtime_stage_id, detail=f"wrote {slot_key}"),
                    _allowed_hop(allowed.runtime_stage_id, record),
                    Hop(kind="born", runtime_stage_id=None, detail=_born_detail(record)),
                ],
            )
        )
    return out


Part = tuple[SourceKind, str, str, str, str | None]
"""One piece of an injection: kind, id, text, how it was born, and (for a chunk) its document id."""


def _parts(record: dict[str, Any]) -> list[Part]:
    """A retrieval's chunks (chunk id, document id) or a memory's recalled entries (entry id), in landing order."""
    owner = str(record.get("source_id"))
    out: list[Part] = []
    for n, chunk in enumerate(record.get("chunks") or ()):
        chunk_id, doc = str(chunk.get("id")), str(chunk.get("document_id") or chunk.get("id"))
        born = (
            f"chunk {chunk_id} of document {doc}, retrieved by define_rag('{owner}') "
            f"(rank {n + 1}, score {chunk.get('score')})"
        )
        out.append(("rag", chunk_id, str(chunk.get("text", "")), born, doc))
    for n, entry in enumerate(record.get("entries") or ()):
        entry_id = str(entry.get("id"))
        born = f"{entry.get('kind', 'turn')} entry {entry_id}, recalled by define_memory('{owner}') (#{n + 1})"
        out.append(("memory", entry_id, str(entry.get("text", "")), born, None))
    return out


def _part_sources(
    call: Commit,
    landed: Commit,
    allowed: Commit,
    record: dict[str, Any],
    answer_hop: Hop,
    read_hop_detail: str,
    slot: Literal["system_prompt", "messages"],
    position: int,
) -> list[SourceTrail]:
    """Every retrieved chunk and recalled memory entry is a source of its own, ablatable one at a time."""
    return [
        SourceTrail(
            kind=kind,
            id=part_id,
            text=text,
            slot=slot,
            trigger=str(record.get("trigger")),
            position=position,
            document_id=doc,
            parent=str(record.get("source_id")),
            hops=[
                answer_hop,
                Hop(kind="read", runtime_stage_id=call.runtime_stage_id, detail=read_hop_detail),
                Hop(kind="landed", runtime_stage_id=landed.runtime_stage_id, detail=f"wrote {slot}"),
                _allowed_hop(allowed.runtime_stage_id, record),
                Hop(kind="born", runtime_stage_id=allowed.runtime_stage_id, detail=born),
            ],
        )
        for kind, part_id, text, born, doc in _parts(record)
    ]


def _result_id(snap: FlowSnapshot, adder: Commit, name: str, call_id: str) -> str | None:
    """``name#n`` when the commit that appended this tool message ran the call: the run's n-th result of ``name``."""
    return _result_ids(snap, [(adder, name, call_id)]).get((adder.idx, name, call_id))


class _ResultOrdinals:
    """``tool_results`` folded forward in one namespace: each (name, call id)'s ordinal among results of its name."""

    def __init__(self) -> None:
        self.listed = False
        self.counts: dict[str, int] = {}
        self.last: dict[tuple[str, str], int] = {}

    def reset(self, value: Any) -> None:
        self.listed, self.counts, self.last = isinstance(value, list | tuple), {}, {}
        if self.listed:
            self.extend(value)

    def extend(self, records: Any) -> None:
        for record in records if isinstance(records, list | tuple) else ():
            if isinstance(record, dict) and isinstance(record.get("name"), str):
                name = record["name"]
                self.counts[name] = self.counts.get(name, 0) + 1
                self.last[(name, str(record.get("call_id")))] = self.counts[name]


def _result_ids(snap: FlowSnapshot, wanted: list[tuple[Commit, str, str]]) -> dict[tuple[int, str, str], str]:
    """``_result_id`` for many tool messages in one forward pass per namespace (what ``value_at`` would fold)."""
    out: dict[tuple[int, str, str], str] = {}
    by_namespace: dict[str, list[tuple[Commit, str, str]]] = {}
    for item in wanted:
        by_namespace.setdefault(item[0].namespace, []).append(item)
    for namespace, items in by_namespace.items():
        queries: dict[int, list[tuple[str, str]]] = {}
        for adder, name, call_id in items:
            queries.setdefault(adder.idx, []).append((name, call_id))
        fold = _ResultOrdinals()
        fold.reset(thaw(snap.initial_state.get("tool_results")) if namespace == "" else None)
        for commit in snap.commit_log[: max(queries) + 1]:
            if commit.namespace == namespace and commit.applied:
                if commit.kind == "subflow-enter" and namespace:
                    fold.reset(None)
                for w in commit.writes:
                    if w.path != "tool_results":
                        continue
                    if w.verb == "set":
                        fold.reset(thaw(w.value))
                    elif w.verb == "delete":
                        fold.reset(None)
                    elif w.verb == "append":
                        if not fold.listed:
                            fold.reset([])
                        fold.extend(thaw(w.value))
                    else:
                        fold.reset(None)  # merged into a mapping: not a list of results
            for name, call_id in queries.get(commit.idx, ()):
                ordinal = fold.last.get((name, call_id)) if fold.listed else None
                if ordinal is not None:
                    out[(commit.idx, name, call_id)] = f"{name}#{ordinal}"
    return out


def _call_that_requested(snap: FlowSnapshot, tool_commit: Commit) -> Commit | None:
    idx = tool_commit.reads.get("last_response")
    return snap.commit_log[idx] if idx is not None else None


def _route_before(snap: FlowSnapshot, tool_commit: Commit) -> Commit | None:
    return snap.commit_log[tool_commit.control_idx] if tool_commit.control_idx is not None else None


def _args_text(args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:60]}" for k, v in args.items())


def _history_sources(snap: FlowSnapshot, call: Commit, answer_hop: Hop, start: int) -> list[SourceTrail]:
    landed_idx = call.reads.get("history")
    if landed_idx is None:
        return []
    out: list[SourceTrail] = []
    provenance = list(_history_provenance(snap, landed_idx, call.namespace))
    wanted = [
        (snap.commit_log[added_by], str(m.get("tool_name") or "tool"), str(m.get("tool_call_id") or ""))
        for added_by, m in provenance
        if isinstance(m, dict) and m.get("role") == "tool"
    ]
    result_ids = _result_ids(snap, wanted)
    for n, (added_by, message) in enumerate(provenance):
        if not isinstance(message, dict):
            continue
        adder = snap.commit_log[added_by]
        read = Hop(kind="read", runtime_stage_id=call.runtime_stage_id, detail=f"read history[{n}]")
        landed = Hop(kind="landed", runtime_stage_id=adder.runtime_stage_id, detail=f"appended history[{n}]")
        role = message.get("role")
        if role == "tool":
            name = str(message.get("tool_name") or "tool")
            call_id = str(message.get("tool_call_id") or "")
            requester = _call_that_requested(snap, adder)
            route = _route_before(snap, adder)
            args: Any = {}
            for req in message.get("tool_calls") or []:
                args = req.get("args")
            if requester is not None:
                response = snap.value_at("last_response", requester.idx, requester.namespace, default={}) or {}
                for tc in response.get("tool_calls", []):
                    if tc.get("id") == call_id:
                        args = tc.get("args", {})
            out.append(
                SourceTrail(
                    kind="tool",
                    id=name,
                    text=str(message.get("content", "")),
                    slot="messages",
                    trigger="tool-result",
                    position=start + n,
                    result_id=result_ids.get((adder.idx, name, call_id)),
                    hops=[
                        answer_hop,
                        read,
                        landed,
                        Hop(
                            kind="allowed",
                            runtime_stage_id=route.runtime_stage_id if route else None,
                            detail="tool-call",
                            note="the model asked for tools; route chose tool-calls",
                        ),
                        Hop(
                            kind="born",
                            runtime_stage_id=requester.runtime_stage_id if requester else None,
                            detail=f"{name}({_args_text(args)}) call {call_id}",
                        ),
                    ],
                )
            )
        elif (span := _span_of(snap, call, message)) is not None:
            text = str(message.get("content", ""))
            out.extend(_summary_sources(snap, call, span, text, [answer_hop, read, landed], n, start + n))
        else:
            origin = "run input" if adder.stage_id == "seed" else "model turn"
            asked = [str(c.get("name")) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            if asked and not message.get("content"):
                origin = f"model turn that only asked for {', '.join(asked)}"
            out.append(
                SourceTrail(
                    kind="message",
                    id=f"{role}-{n}",
                    text=str(message.get("content", "")),
                    slot="messages",
                    trigger=None,
                    position=start + n,
                    hops=[
                        answer_hop,
                        read,
                        landed,
                        Hop(kind="born", runtime_stage_id=adder.runtime_stage_id, detail=f"{role} message ({origin})"),
                    ],
                )
            )
    return out


def _span_of(snap: FlowSnapshot, call: Commit, message: dict[str, Any]) -> dict[str, Any] | None:
    """The folded span a summary message in the call's history stands for (joined by content fingerprint)."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str) or not content.startswith(SUMMARY_PREFIX):
        return None
    spans = snap.value_at("folded_spans", call.idx, call.namespace, default=None) or []
    return folded_span_for(spans, message)


def _summary_sources(
    snap: FlowSnapshot,
    call: Commit,
    span: dict[str, Any],
    text: str,
    lead: list[Hop],
    n: int,
    position: int,
) -> list[SourceTrail]:
    """A summary is a source whose BORN hop lists what it folded; each folded original is a source reached through
    it (a summary folded into a later one is walked too), so backtrack never stops at a summary."""
    spans = snap.value_at("folded_spans", call.idx, call.namespace, default=None) or []
    out: list[SourceTrail] = []
    stack: list[tuple[dict[str, Any], list[Hop], str, str]] = [(span, lead, f"summary-{n}", text)]
    while stack and len(out) < 100_000:
        current, path, label, content = stack.pop()
        here = current.get("stage") if current.get("run_id") == snap.run_id else None
        originals = list(current.get("messages") or [])
        folded_ids = [f"{current['span_id']}/{m.get('role')}-{k}" for k, m in enumerate(originals)]
        where = f" at {current.get('stage')}" if current.get("stage") else ""
        listed = ", ".join(folded_ids) if originals else "not retained"
        born = Hop(
            kind="born",
            runtime_stage_id=here,
            detail=(
                f"summary by {current.get('summarizer') or 'the summarizer'} of {current.get('message_count')} "
                f"folded message(s){where} (span {current['span_id']}, run {str(current.get('run_id'))[:12]}): "
                f"{listed}"
            ),
        )
        out.append(
            SourceTrail(
                kind="message",
                id=label,
                text=content,
                slot="messages",
                trigger="compaction",
                position=position,
                hops=[*path, born],
            )
        )
        via = Hop(kind="via", runtime_stage_id=here, detail=f"folded into {label} (span {current['span_id']})")
        adders = _fold_adders(snap, current)
        for k, original in enumerate(originals):
            nested = folded_span_for(spans, original) if isinstance(original, dict) else None
            if nested is not None and nested.get("span_id") != current.get("span_id"):
                stack.append((nested, [*path, via], folded_ids[k], str(original.get("content", ""))))
                continue
            out.append(_folded_original(original, folded_ids[k], [*path, via], adders.get(k), current, position))
    return out


def _fold_adders(snap: FlowSnapshot, span: dict[str, Any]) -> dict[int, Commit]:
    """For a fold made in this run: the commit that added each folded message (index within the span)."""
    if span.get("run_id") != snap.run_id or not span.get("stage"):
        return {}
    fold = snap.commit(str(span["stage"]))
    before = fold.reads.get("history") if fold is not None else None
    if fold is None or before is None:
        return {}
    entries = _history_provenance(snap, before, fold.namespace)
    start = int(span.get("start") or 0)
    count = int(span.get("message_count") or 0)
    return {k: snap.commit_log[entries[start + k][0]] for k in range(count) if start + k < len(entries)}


def _folded_original(
    message: Any, oid: str, lead: list[Hop], adder: Commit | None, span: dict[str, Any], position: int
) -> SourceTrail:
    role = message.get("role") if isinstance(message, dict) else "user"
    text = str(message.get("content", "")) if isinstance(message, dict) else ""
    if adder is not None:
        origin = "run input" if adder.stage_id == "seed" else ("tool call" if role == "tool" else "model turn")
        tail = [
            Hop(kind="landed", runtime_stage_id=adder.runtime_stage_id, detail="appended to history"),
            Hop(kind="born", runtime_stage_id=adder.runtime_stage_id, detail=f"{role} message ({origin})"),
        ]
    else:
        tail = [
            Hop(
                kind="born",
                runtime_stage_id=None,
                detail=f"{role} message of the conversation before run {str(span.get('run_id'))[:12]}",
            )
        ]
    tool = role == "tool" and isinstance(message, dict)
    return SourceTrail(
        kind="tool" if tool else "message",
        id=str(message.get("tool_name") or "tool") if tool else oid,
        text=text,
        slot="messages",
        trigger="folded",
        position=position,
        hops=[*lead, *tail],
    )


def _offered_tool_sources(
    snap: FlowSnapshot, call: Commit, answer_hop: Hop, have_results: set[str], start: int
) -> list[SourceTrail]:
    landed_idx = call.reads.get("tool_specs")
    if landed_idx is None:
        return []
    landed = snap.commit_log[landed_idx]
    specs = snap.value_at("tool_specs", landed.idx, landed.namespace, default=[]) or []
    injected = {
        r.get("tool"): r for r in (snap.value_at("tool_injections", landed.idx, landed.namespace, default=[]) or [])
    }
    out: list[SourceTrail] = []
    for i, spec in enumerate(specs):
        name = str(spec.get("name"))
        if name in have_results:
            continue
        record = injected.get(name)
        allowed = "llm-activated" if record else "always"
        out.append(
            SourceTrail(
                kind="tool",
                id=name,
                text=str(spec.get("description", "")),
                slot="tools",
                trigger=allowed,
                position=start + i,
                hops=[
                    answer_hop,
                    Hop(kind="read", runtime_stage_id=call.runtime_stage_id, detail="read tool_specs"),
                    Hop(kind="landed", runtime_stage_id=landed.runtime_stage_id, detail="wrote tool_specs"),
                    _allowed_hop(landed.runtime_stage_id, spec)
                    if spec.get("foreign")
                    else Hop(
                        kind="allowed",
                        runtime_stage_id=landed.runtime_stage_id,
                        detail=allowed,
                        note=f"skill '{record.get('source_id')}' is active" if record else None,
                    ),
                    Hop(
                        kind="born",
                        runtime_stage_id=None,
                        detail=_born_detail({**spec, "born": f"tool definition sent with {call.runtime_stage_id}"})
                        if spec.get("foreign")
                        else f"define_tool('{name}')",
                    ),
                ],
            )
        )
    return out


def _sources_for_call(snap: FlowSnapshot, call: Commit, answer_hop: Hop, depth: int) -> list[SourceTrail]:
    """Everything that reached one model call; for a composition member, also what its input was made of."""
    sources: list[SourceTrail] = []
    sources += _injected_sources(
        snap,
        call,
        answer_hop,
        "read the system prompt",
        "system_prompt",
        "system_prompt_injections",
        "system_prompt",
        0,
    )
    sources += _injected_sources(
        snap, call, answer_hop, "read the injected messages", "message_slot", "message_injections", "messages", 1000
    )
    history = _history_sources(snap, call, answer_hop, 2000)
    sources += history
    sources += _offered_tool_sources(snap, call, answer_hop, {s.id for s in history if s.kind == "tool"}, 100_000)
    if call.namespace and depth < 16:
        sources += _upstream_sources(snap, call, history, answer_hop, depth)
    return sources


def _upstream_sources(
    snap: FlowSnapshot, call: Commit, history: list[SourceTrail], answer_hop: Hop, depth: int
) -> list[SourceTrail]:
    """A member's input message was made of other members' answers: walk through the mount to their sources."""
    enter = next(
        (
            c
            for c in reversed(snap.commit_log[: call.idx])
            if c.kind == "subflow-enter" and c.namespace == call.namespace
        ),
        None,
    )
    if enter is None:
        return []
    out: list[SourceTrail] = []
    message = next((s for s in history if s.kind == "message" and s.id.startswith("user")), None)
    lead = message.hops[:3] if message is not None else [answer_hop]
    seen: set[int] = set()
    for key, idx in enter.reads.items():
        if idx is None:
            continue
        for upstream in calls_behind(snap, idx, seen):
            via = Hop(kind="via", runtime_stage_id=enter.runtime_stage_id, detail=_via_detail(snap, key, idx, upstream))
            for source in _sources_for_call(snap, upstream, answer_hop, depth + 1):
                out.append(
                    source.model_copy(update={"hops": [*lead, via, *source.hops[1:]], "position": 200_000 + len(out)})
                )
    return out


def calls_behind(snap: FlowSnapshot, idx: int, seen: set[int] | None = None) -> list[Commit]:
    """The model calls whose answers the value written at commit ``idx`` was made from (data, not routing)."""
    seen = set() if seen is None else seen
    out: list[Commit] = []
    stack = [idx]
    while stack and len(seen) < 4096:
        i = stack.pop()
        if i in seen or not 0 <= i < len(snap.commit_log):
            continue
        seen.add(i)
        c = snap.commit_log[i]
        if c.kind in ("decider", "selector"):  # a route chose what ran; it made no value
            continue
        if c.kind != "subflow-exit" and c.kind != "subflow-enter":
            made_by = next(
                (k for k in reversed(snap.commit_log[:i]) if k.namespace == c.namespace and _is_call(k)), None
            )
            if made_by is not None:  # an agent's namespace: its last model call made the value
                out.append(made_by)
                continue
        stack.extend(sorted((r for r in c.reads.values() if r is not None), reverse=True))
    return sorted({c.idx: c for c in out}.values(), key=lambda c: c.idx)


def _is_call(c: Commit) -> bool:
    return c.stage_id == "call-llm" and c.applied


def _member_of(snap: FlowSnapshot, call: Commit) -> str:
    enter = next(
        (
            c
            for c in reversed(snap.commit_log[: call.idx])
            if c.kind == "subflow-enter" and c.namespace == call.namespace
        ),
        None,
    )
    return enter.stage_name if enter is not None else call.namespace


def _via_detail(snap: FlowSnapshot, key: str, idx: int, upstream: Commit) -> str:
    handed = snap.commit_log[idx]
    member = _member_of(snap, upstream)
    if handed.kind == "subflow-exit" and handed.stage_name == member:
        return f"{key} handed over from {member}'s answer"
    return f"{key} made by {handed.stage_name} from {member}'s answer"


def backtrack(target: RecordLike, *, at: str | None = None) -> Backtrack:
    """Every piece of context that reached the final model call (or the call behind step ``at``), with its chain."""
    snap = _snapshot_of(target)
    final = next(
        (
            c
            for c in reversed(snap.commit_log)
            if c.namespace == "" and c.applied and any(w.path == "answer" for w in c.writes)
        ),
        None,
    )
    behind: list[Commit] = []
    if at is None and final is not None:
        before = [c for c in _root_calls(snap) if c.idx < final.idx]
        if not before:
            raise BacktrackError("no model call was recorded before the answer")
        behind = calls_behind(snap, final.idx)
        call = behind[-1] if behind else before[-1]
    else:
        call = _trigger_commit(snap, at)
    if at is None and final is not None:
        answer: str | None = snap.value_at("answer", final.idx)
        answer_stage: str | None = final.runtime_stage_id
    else:
        response = snap.value_at("last_response", call.idx, call.namespace, default={}) or {}
        answer = response.get("content")
        answer_stage = call.runtime_stage_id
    answer_hop = Hop(kind="answer", runtime_stage_id=answer_stage, detail=summarize_value(answer or "", 120))
    sources = _sources_for_call(snap, call, answer_hop, depth=0)
    if final is not None:
        for other in behind[:-1]:  # an answer merged from several members: every member's context reached it
            via = Hop(
                kind="via",
                runtime_stage_id=final.runtime_stage_id,
                detail=_via_detail(snap, "answer", final.idx, other),
            )
            for source in _sources_for_call(snap, other, answer_hop, depth=1):
                sources.append(
                    source.model_copy(
                        update={"hops": [answer_hop, via, *source.hops[1:]], "position": 300_000 + len(sources)}
                    )
                )
    return Backtrack(
        answer=answer, trigger=call.runtime_stage_id, answer_stage=answer_stage, sources=sources, run_id=snap.run_id
    )
