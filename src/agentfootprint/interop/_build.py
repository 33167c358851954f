"""A foreign trace as a recording: each LLM span a model call whose commit log says what reached it, and how."""

from __future__ import annotations

import gc
import json
import operator
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, count, islice
from typing import Any, Literal

from agentfootprint.explain.recording import Recording
from agentfootprint.flow import Commit, FlowSnapshot
from agentfootprint.flow.commit import Write
from agentfootprint.interop._conventions import (
    LLMCall,
    PrefixCache,
    Retrieval,
    ToolRun,
    agent_name,
    read_llm,
    read_retrieval,
    read_tool,
    span_kind,
)
from agentfootprint.interop._spans import Span, read_spans
from agentfootprint.interop.errors import InvalidTraceError, TraceContentMissingError

FOREIGN_CHART = "foreign-trace"
"""The ``chart_id`` of every imported run."""
REQUEST_KEY = "foreign_request"
"""The state key under which each model call keeps the frozen request its span recorded."""
_UNKNOWN = "not recorded in the trace (foreign-trace)"


@dataclass
class _Log:
    commits: list[Commit] = field(default_factory=list)
    states: dict[str, dict[str, Any]] = field(default_factory=lambda: {"": {}})
    """Each namespace's final state, kept as the commits are added (what ``FlowSnapshot.replay`` computes)."""
    ids: set[str] = field(default_factory=set)
    ns: str = ""
    """The namespace new commits go to: an agent's, when the trace has several agents."""

    @property
    def state(self) -> dict[str, Any]:
        return self.states[""]

    def add(
        self,
        stage_id: str,
        rid: str,
        name: str,
        reads: dict[str, int | None],
        writes: list[Write],
        kind: Literal["stage", "subflow-enter", "subflow-exit"] = "stage",
    ) -> int:
        idx = len(self.commits)
        self.ids.add(rid)
        state = self.states.setdefault(self.ns, {})
        if kind == "subflow-enter":
            state.clear()
        for w in writes:
            if w.verb == "append":
                state.setdefault(w.path, []).extend(w.value)
            else:
                state[w.path] = list(w.value) if isinstance(w.value, list) else w.value
        self.commits.append(
            Commit(
                idx=idx,
                stage_id=stage_id,
                runtime_stage_id=rid,
                stage_name=name,
                kind=kind,
                namespace=self.ns,
                reads=reads,
                writes=writes,
            )
        )
        return idx


def _set(path: str, value: Any) -> Write:
    return Write(path=path, verb="set", value=value)


def _append(path: str, value: list[Any]) -> Write:
    return Write(path=path, verb="append", value=value)


def _pick_trace(spans: list[Span], trace_id: str | None, convention: str) -> list[Span]:
    traces: dict[str, list[Span]] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    if trace_id is not None:
        key = trace_id.strip().lower()
        if key not in traces:
            raise InvalidTraceError("no span of the trace has that trace_id", code="ERR_TRACE_NOT_FOUND")
        return traces[key]
    with_calls = [t for t in traces.values() if any(span_kind(s, convention) == "llm" for s in t)]
    if not with_calls:
        raise InvalidTraceError(
            f"no LLM span in {len(spans)} span(s) under the {convention} convention(s) "
            "(OTel GenAI chat spans or OpenInference LLM spans)",
            code="ERR_TRACE_NO_LLM_SPANS",
        )
    return max(with_calls, key=lambda t: max(s.end for s in t))


def _agent_of(span: Span, by_id: dict[str, Span], agents: dict[str, str]) -> str | None:
    seen = 0
    parent = span.parent_id
    while parent is not None and seen < 512:
        if parent in agents:
            return agents[parent]
        node = by_id.get(parent)
        parent = node.parent_id if node is not None else None
        seen += 1
    return None


def _agent_span_of(span: Span, by_id: dict[str, Span], agents: dict[str, str]) -> str | None:
    """The id of the nearest agent span above ``span``."""
    parent, seen = span.parent_id, 0
    while parent is not None and seen < 512:
        if parent in agents:
            return parent
        node = by_id.get(parent)
        parent = node.parent_id if node is not None else None
        seen += 1
    return None


def _delegated(agent: Span, by_id: dict[str, Span], agents: dict[str, str], tools: dict[str, ToolRun]) -> str | None:
    """The tool call id of the tool span an agent span runs inside (another agent's tool delegating to it), if any."""
    parent, seen = agent.parent_id, 0
    while parent is not None and parent not in agents and seen < 512:
        run = tools.get(parent)
        if run is not None:
            return run.call_id
        node = by_id.get(parent)
        parent = node.parent_id if node is not None else None
        seen += 1
    return None


def _shared(prev: Sequence[Any], cur: Sequence[Any]) -> int:
    """How many leading messages ``cur`` shares (as the same objects) with ``prev`` (see ``PrefixCache``)."""
    return next(compress(count(), map(operator.is_not, prev, cur)), min(len(prev), len(cur)))


def _answer_of(call: LLMCall) -> str:
    """A call's reply as an answer: its text, or the tools it asked for when it said nothing."""
    if call.output.content or not call.output.tool_calls:
        return call.output.content
    return "\n".join(f"-> {tc.get('name')}" for tc in call.output.tool_calls)


def _segments(new: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """New history entries grouped: ``tools`` (a tool-call turn and its results), ``user``, ``model``."""
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for m in new:
        kind = "tools" if m["role"] == "tool" or m.get("tool_calls") else ("user" if m["role"] == "user" else "model")
        starts = m["role"] == "assistant" and m.get("tool_calls")
        if out and out[-1][0] == kind and not (kind == "tools" and starts):
            out[-1][1].append(m)
        else:
            out.append((kind, [m]))
    return out


class _Builder:
    def __init__(self, spans: list[Span], convention: str) -> None:
        self.spans = sorted(spans, key=lambda s: (s.start, s.end, s.span_id))
        self.by_id = {s.span_id: s for s in self.spans}
        kinds = {s.span_id: span_kind(s, convention) for s in self.spans}
        agents = {s.span_id: agent_name(s) for s in self.spans if kinds[s.span_id] == "agent"}
        cache = PrefixCache()
        self.calls: list[LLMCall] = [read_llm(s, cache) for s in self.spans if kinds[s.span_id] == "llm"]
        for c in self.calls:
            c.agent = _agent_of(c.span, self.by_id, agents)
        self.tools: list[ToolRun] = [read_tool(s) for s in self.spans if kinds[s.span_id] == "tool"]
        self.tool_by_id = {t.call_id: t for t in reversed(self.tools) if t.call_id}
        tool_spans = {t.span.span_id: t for t in self.tools}
        self.runs_by_name: dict[str, list[tuple[int, ToolRun]]] = {}
        for n, t in enumerate(self.tools):
            self.runs_by_name.setdefault(t.name, []).append((n, t))
        self.first_free: dict[str, int] = {}
        delegated = {a: _delegated(self.by_id[a], self.by_id, agents, tool_spans) for a in agents}
        self.delegations: dict[str, tuple[str, list[LLMCall]]] = {}
        """Tool call id -> the agent that tool ran (a delegation) and that agent's model calls."""
        self.top: list[LLMCall] = []
        for c in self.calls:
            inst = _agent_span_of(c.span, self.by_id, agents)
            cid = delegated.get(inst) if inst is not None else None
            outer = _agent_of(self.by_id[inst], self.by_id, agents) if inst is not None and cid else None
            if inst is not None and cid and outer is not None and outer != agents[inst]:
                self.delegations.setdefault(cid, (agents[inst], []))[1].append(c)
            else:
                self.top.append(c)
        if not self.top:  # nothing ran outside a tool: no lead to mount the delegations in
            self.top, self.delegations = list(self.calls), {}
        self.retrievals: list[Retrieval] = [read_retrieval(s) for s in self.spans if kinds[s.span_id] == "retrieval"]
        self.log = _Log()
        self.history: list[dict[str, Any]] = []
        self.history_idx = 0
        self.tool_results: list[dict[str, Any]] = []
        self.result_ids: dict[str, str] = {}
        self.result_counts: dict[str, int] = {}  # tool name -> results of it so far
        self.asked: dict[str, int] = {}  # tool call id -> commit idx of the model call that asked for it
        self.tool_names: dict[str, str] = {}
        self.tool_args: dict[str, Any] = {}
        self.prev_messages: list[Any] = []
        self.prev_entries: list[dict[str, Any]] = []
        self.entries: dict[int, dict[str, Any]] = {}  # id(Msg) -> its history entry (the Msgs live in self.calls)
        prev: list[Any] = []
        for c in self.calls:
            fresh = c.messages[_shared(prev, c.messages) :]
            prev = c.messages
            for m in [*fresh, c.output]:
                for tc in m.tool_calls:
                    if tc.get("id"):
                        self.tool_names.setdefault(str(tc["id"]), str(tc.get("name") or "tool"))
                        self.tool_args.setdefault(str(tc["id"]), tc.get("args", {}))
        for t in self.tools:
            if t.call_id:
                self.tool_names.setdefault(t.call_id, t.name)

    def check_content(self) -> None:
        missing = [c for c in self.calls if not c.has_content]
        if missing:
            conventions = {c.convention for c in missing}
            raise TraceContentMissingError(
                len(missing), len(self.calls), conventions.pop() if len(conventions) == 1 else "auto"
            )

    def _messages(self, call: LLMCall) -> list[dict[str, Any]]:
        """The call's input as history entries; a message shared with the previous span is the same entry."""
        k = _shared(self.prev_messages, call.messages)
        out = self.prev_entries[:k]
        self.prev_messages = call.messages
        for m in call.messages[k:]:
            d = self.entries.get(id(m))
            if d is None:
                d = m.as_dict()
                if m.role == "tool":
                    d["tool_name"] = m.tool_name or self.tool_names.get(m.tool_call_id or "", "tool")
                    d["tool_call_id"] = m.tool_call_id or ""
                self.entries[id(m)] = d
            out.append(d)
        self.prev_entries = out
        return out

    def _new_results(self, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        records = []
        for m in messages:
            cid = str(m.get("tool_call_id") or "")
            if m["role"] != "tool" or cid in self.result_ids:
                continue
            name = str(m.get("tool_name"))
            n = self.result_counts[name] = self.result_counts.get(name, 0) + 1
            record = {"call_id": cid, "name": name, "args": self._args_of(cid)}
            self.tool_results.append(record)
            self.result_ids[cid] = f"{name}#{n}"
            records.append(record)
        return records

    def _args_of(self, call_id: str) -> Any:
        return self.tool_args.get(call_id, {})

    def _free_run(self, called: set[Any], before: int) -> ToolRun | None:
        """The earliest tool span (in trace order) of a called tool that ended by ``before`` and that no commit has
        taken yet (tool spans without a call id); each name's taken prefix is skipped once, not rescanned."""
        taken = self.log.ids
        best: tuple[int, ToolRun] | None = None
        for name in called:
            runs = self.runs_by_name.get(name, [])
            k = self.first_free.get(name, 0)
            while k < len(runs) and runs[k][1].span.span_id in taken:
                k += 1
            self.first_free[name] = k
            free = (r for r in islice(runs, k, None) if r[1].span.end <= before and r[1].span.span_id not in taken)
            hit = next(free, None)
            if hit is not None and (best is None or hit[0] < best[0]):
                best = hit
        return best[1] if best is not None else None

    def _tool_commit(self, messages: list[dict[str, Any]], at: Span) -> None:
        ids = [str(m.get("tool_call_id")) for m in messages if m["role"] == "tool"]
        ids += [str(tc.get("id")) for m in messages for tc in m.get("tool_calls") or []]
        runs = [self.tool_by_id[i] for i in ids if i in self.tool_by_id]
        requester = next((self.asked[i] for i in ids if i in self.asked), None)
        delegated = {f"delegated:{i}": d for i in dict.fromkeys(ids) if (d := self._delegate(i)) is not None}
        taken = self.log.ids
        run = next((t for t in runs if t.span.span_id not in taken), None)
        if not runs:
            run = self._free_run({m.get("tool_name") for m in messages}, at.start)
        rid = run.span.span_id if run is not None else f"tool-results#{len(self.log.commits)}"
        names = ", ".join(dict.fromkeys(str(m.get("tool_name")) for m in messages if m["role"] == "tool"))
        writes = [_append("history", messages)]
        records = self._new_results(messages)
        if records:
            writes.append(_append("tool_results", records))
        reads: dict[str, int | None] = {"last_response": requester} if requester is not None else {}
        reads.update(delegated)
        self.history_idx = self.log.add("tool-calls", rid, f"execute_tool {names}".strip(), reads, writes)

    def _history_for(self, call: LLMCall, messages: list[dict[str, Any]]) -> None:
        cur = self.history
        rid = call.span.span_id
        if len(messages) >= len(cur) and messages[: len(cur)] == cur:
            for n, (kind, seg) in enumerate(_segments(messages[len(cur) :])):
                if kind == "tools":
                    self._tool_commit(seg, call.span)
                    continue
                writes = [_append("history", seg)]
                stage = "seed" if kind == "user" else "span-input"
                self.history_idx = self.log.add(stage, f"{rid}/input-{n + 1}", f"input of {call.span.name}", {}, writes)
        else:
            writes = [_set("history", messages)]
            records = self._new_results(messages)
            if records:
                writes.append(_append("tool_results", records))
            self.history_idx = self.log.add("span-input", f"{rid}/input", f"input of {call.span.name}", {}, writes)
        self.history = messages

    def _documents(self, call: LLMCall, messages: list[dict[str, Any]]) -> list[tuple[str, str, Retrieval]]:
        """Retrieved documents whose text reached this call (found in what its span says it sent, as is or as a
        tool returned it quoted in JSON or Python form); each with the exact form found."""
        before = [r for r in self.retrievals if r.span.start <= call.span.start]
        if not before:
            return []
        sent = "\n".join([*call.system, *(str(m.get("content") or "") for m in messages)])
        out: dict[str, tuple[str, str, Retrieval]] = {}
        for r in before:
            for doc_id, text in r.documents:
                text = text.strip()
                if doc_id in out or not text:
                    continue
                form = next((f for f in (text, json.dumps(text)[1:-1], repr(text)[1:-1]) if f in sent), None)
                if form is not None:
                    out[doc_id] = (doc_id, form, r)
        return list(out.values())

    def _call(self, call: LLMCall, first: bool) -> int:
        rid = call.span.span_id
        messages = self._messages(call)
        if first:
            user = next((m["content"] for m in messages if m["role"] == "user"), "")
            writes = [
                _set("run", {"run_id": call.span.trace_id, "agent": call.agent or "agent", "source": FOREIGN_CHART}),
                _set("user_message", user),
                _set("history", messages),
                _set("tool_results", self._new_results(messages)),
            ]
            self.history_idx = self.log.add("seed", "seed#0", "input of the traced run", {}, writes)
            self.history = messages
        else:
            self._history_for(call, messages)
        where = f"LLM span '{call.span.name}' ({rid})"
        paragraph_ids = [
            f"{self.log.ns}/system-{i + 1}" if self.log.ns else f"system-{i + 1}" for i in range(len(call.system))
        ]
        instructions = [
            {
                "source": "instruction",
                "source_id": paragraph_ids[i],
                "trigger": "foreign",
                "foreign": True,
                "text": text,
                "born": f"paragraph {i + 1} of the system instructions recorded on {where}; who wrote it is {_UNKNOWN}",
            }
            for i, text in enumerate(call.system)
        ]
        documents = self._documents(call, messages)
        retrieved = [
            {
                "source": "rag",
                "source_id": doc_id,
                "trigger": "foreign",
                "foreign": True,
                "text": text,
                "born": f"document {doc_id} returned by retrieval span '{r.span.name}' ({r.span.span_id})",
            }
            for doc_id, text, r in documents
        ]
        specs = [{**spec, "foreign": True} for spec in call.tools]
        context = self.log.add(
            "span-context",
            f"{rid}/context",
            f"context recorded on {call.span.name}",
            {},
            [_set("system_prompt_injections", instructions), _set("message_injections", retrieved)],
        )
        request = self.log.add(
            "span-request",
            f"{rid}/request",
            f"request of {call.span.name}",
            {"system_prompt_injections": context, "message_injections": context},
            [_set("system_prompt", "\n\n".join(call.system)), _set("message_slot", []), _set("tool_specs", specs)],
        )
        response = {
            "content": call.output.content,
            "tool_calls": [dict(tc) for tc in call.output.tool_calls],
            "model": call.model or None,
        }
        frozen = {
            "span_id": rid,
            "span_name": call.span.name,
            "agent": call.agent,
            "model": call.model,
            "system": list(call.system),
            "system_ids": paragraph_ids,
            "tools": [dict(spec) for spec in call.tools],
            "documents": [{"id": d, "text": t} for d, t, _ in documents],
        }
        name = f"{call.span.name} (agent {call.agent})" if call.agent else call.span.name
        idx = self.log.add(
            "call-llm",
            rid,
            name,
            {
                "history": self.history_idx,
                "system_prompt": request,
                "message_slot": request,
                "tool_specs": request,
                "system_prompt_injections": context,
            },
            [
                _set("llm_call", {"model": call.model, "span_id": rid, "agent": call.agent}),
                _set(REQUEST_KEY, frozen),
                _set("last_response", response),
            ],
        )
        for tc in call.output.tool_calls:
            if tc.get("id"):
                self.asked.setdefault(str(tc["id"]), idx)
        return idx

    def _agents(self) -> int:
        """Several agents: each one's run of consecutive calls in its own namespace, mounted like a composition's
        member (enter reads the previous agent's answer), so backtrack shows ``via`` hops across agents. An agent a
        tool ran (a delegation) is mounted where its tool result lands instead (see ``_delegate``)."""
        segments: list[tuple[str, list[LLMCall]]] = []
        for c in self.top:
            name = c.agent or "agent"
            if segments and segments[-1][0] == name:
                segments[-1][1].append(c)
            else:
                segments.append((name, [c]))
        first = self.top[0]
        user = next((m.content for m in first.messages if m.role == "user"), "")
        run = {"run_id": first.span.trace_id, "agent": segments[0][0], "source": FOREIGN_CHART}
        self.log.add("seed", "seed#0", "input of the traced run", {}, [_set("run", run), _set("user_message", user)])
        handed: int | None = None
        for name, calls in segments:
            handed = self._member(name, calls, {"input": handed} if handed is not None else {})
        for call_id in list(self.delegations):  # a delegation whose result no later call read
            self._delegate(call_id)
        assert handed is not None
        return handed

    def _member(self, name: str, calls: list[LLMCall], reads: dict[str, int | None]) -> int:
        """One agent's calls in its own namespace between an enter (``reads``: what it was handed) and an exit
        that reads its answer; returns the exit's index. The caller's namespace and history are kept."""
        parent = self.log.ns
        saved = (self.history, self.history_idx, self.prev_messages, self.prev_entries)
        self.log.ns = name
        self.log.add("agent", f"{name}#enter{len(self.log.commits)}", name, reads, [], kind="subflow-enter")
        self.history, self.prev_messages, self.prev_entries = [], [], []
        last = 0
        for c in calls:
            last = self._call(c, False)
        answer = self.log.add(
            "final", f"{name}#answer{len(self.log.commits)}", f"{name}'s answer", {"last_response": last},
            [_set("answer", _answer_of(calls[-1]))],
        )  # fmt: skip
        self.log.ns = parent
        done = self.log.add(
            "agent", f"{name}#exit{len(self.log.commits)}", name, {"answer": answer}, [], kind="subflow-exit"
        )
        self.history, self.history_idx, self.prev_messages, self.prev_entries = saved
        return done

    def _delegate(self, call_id: str) -> int | None:
        """The agent tool call ``call_id`` ran, as its own member: entered from a hand-off step of the call that asked
        for the tool (so its input's sources are that call's, through a ``via`` hop), its answer read by the tool
        result. None when no agent ran under that tool call."""
        found = self.delegations.pop(call_id, None)
        if found is None:
            return None
        name, calls = found
        asked = self.asked.get(call_id)
        reads: dict[str, int | None] = {}
        if asked is not None:
            tool = self.tool_names.get(call_id, "tool")
            handoff = self.log.add(
                "delegate", f"{call_id}#handoff", f"{tool} call {call_id}", {"last_response": asked},
                [_set("delegated", {"agent": name, "tool": tool, "call_id": call_id,
                                    "args": self.tool_args.get(call_id, {})})],
            )  # fmt: skip
            reads = {"input": handoff}
        return self._member(name, calls, reads)

    def build(self) -> Recording:
        if len({c.agent or "agent" for c in self.calls}) > 1:
            last = self._agents()
            key = "answer"
        else:
            for n, call in enumerate(self.calls):
                last = self._call(call, n == 0)
            key = "last_response"
        final = self.top[-1] if self.top else self.calls[-1]
        self.log.add("final", "answer", "the traced run's answer", {key: last}, [_set("answer", _answer_of(final))])
        first = self.calls[0]
        snap = FlowSnapshot(
            run_id=first.span.trace_id,
            chart_id=FOREIGN_CHART,
            chart_name=f"{first.convention} trace",
            state=self.log.state,
            subflow_states={k: v for k, v in self.log.states.items() if k},
            commit_log=self.log.commits,
        )
        models = [c.model for c in self.calls if c.model]
        sources = {f"system-{i + 1}": "instruction" for i in range(len(final.system))}
        sources.update({t["name"]: "tool" for t in final.tools})
        return Recording(
            agent=final.agent or first.agent or "agent",
            model=models[-1] if models else "",
            sources=sources,
            snapshot=snap,
        )


CONVENTIONS = ("auto", "genai", "openinference")


def import_trace(source: Any, *, convention: str = "auto", trace_id: str | None = None) -> Recording:
    """A foreign run as a ``Recording``: ``source`` is a list of ``ReadableSpan``s, an OTLP/JSON mapping, or a path
    to an OTLP/JSON file, JSON lines of such documents, or OTLP protobuf; ``trace_id`` picks one of several traces."""
    if convention not in CONVENTIONS:
        raise InvalidTraceError("convention must be 'auto', 'genai' or 'openinference'", code="ERR_TRACE_CONVENTION")
    if trace_id is not None and not isinstance(trace_id, str):
        raise InvalidTraceError("trace_id must be a hex string", code="ERR_TRACE_NOT_FOUND")
    with _collector_paused():
        return build_recording(read_spans(source), convention=convention, trace_id=trace_id)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector held off while a trace is read: parsing one allocates millions of acyclic
    containers, and the collector would walk them over and over (a third of the import time on long traces)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def build_recording(spans: list[Span], *, convention: str = "auto", trace_id: str | None = None) -> Recording:
    """The recording of one traced run (the newest trace with an LLM span, unless ``trace_id`` names one)."""
    chosen = _pick_trace(spans, trace_id, convention)
    builder = _Builder(chosen, convention)
    if not builder.calls:
        raise InvalidTraceError("that trace has no LLM span", code="ERR_TRACE_NO_LLM_SPANS")
    builder.check_content()
    return builder.build()


__all__ = ["CONVENTIONS", "FOREIGN_CHART", "REQUEST_KEY", "build_recording", "import_trace"]
