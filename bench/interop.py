"""Interop benchmark: importing 1,000 spans, and exact culprit sets at the step on generated planted traces.

Import speed: one trace of 1,000 spans in three shapes (a GenAI agent loop whose history grows with every call, a
pipeline of short independent calls, and the same loop under OpenInference, whose flattened attributes make the file
2.5 times larger), as OTLP/JSON text read from a file, median of runs (wall and CPU; and the CPU of the stdlib JSON
parse of the file alone, the part of the import no reading of spans can save).
Planted cases: traces generated here in four span shapes (GenAI current parts, GenAI previous indexed attributes,
GenAI previous events, OpenInference), each with one misleading tool result or document planted among distractors
(varied wording, tool counts, repeated tools, paragraphs, documents in the system prompt / a user message / a
retriever tool's result), plus two kinds the planting did not design for: a cue said twice (the exact culprit set
is the pair) and a model that flips on its own now and then. A mock model is misled while the cue is in the request;
the case passes when the confirmed culprit sets are exactly the expected one."""

from __future__ import annotations

import gc
import json
import random
import statistics
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

from agentfootprint.explain import backtrack
from agentfootprint.interop import import_trace, localize_sync
from agentfootprint.providers import LLMRequest, mock

SHAPES = ("genai", "genai-indexed", "genai-events", "openinference")
CUES = [
    ("final sale", "No: it was a final sale."),
    ("store credit only", "No cash back: store credit only."),
    ("warranty void", "Denied: the warranty is void."),
    ("account frozen", "Blocked: the account is frozen."),
    ("recall notice", "Stop: there is a recall notice."),
]
GOOD = "Yes, approved."
TOOLS = ["lookup_order", "crm_profile", "inventory", "billing", "shipping_status", "search_docs"]
FILLER = [
    "in stock, 10 days old",
    "customer since 2019, 4 orders",
    "paid by card, no disputes",
    "delivered on time",
    "two open tickets, both closed",
    "warehouse B, shelf 4",
]
DOCS = [
    "Refunds are accepted within 30 days of delivery.",
    "Express shipping arrives the next business day.",
    "Gift cards never expire.",
    "Electronics carry a one year warranty.",
    "Loyalty points are credited after delivery.",
]
SYSTEMS = [
    "You are the support desk.",
    "Be brief and polite.",
    "Cite the source of every claim.",
    "Never promise what a policy does not allow.",
    "Answer in one paragraph.",
]


KINDS = ["tool", "tool-repeat", "doc-system", "doc-user", "doc-tool", "twin", "noisy", "noisy-25", "doc-json", "window"]
"""The last four were added after the first run passed everything: a noisier model, a document a tool returned
JSON-escaped, and a window that dropped the first exchange from the last span's input."""


@dataclass
class Case:
    shape: str
    kind: str
    expected: tuple[str, ...]
    doc: dict[str, Any]
    cue: str
    wrong: str
    noise: float = 0.0
    notes: list[str] = field(default_factory=list)


class Spans:
    """OTLP/JSON spans of one trace in one of the four shapes."""

    def __init__(self, shape: str, rng: random.Random) -> None:
        self.shape = shape
        self.trace = f"{rng.getrandbits(128):032x}"
        self.rng = rng
        self.spans: list[dict[str, Any]] = []
        self.clock = 1_700_000_000_000_000_000
        self.root = self._id()
        self._add(self.root, None, "invoke_agent support", self._agent_attrs())

    def _id(self) -> str:
        return f"{self.rng.getrandbits(64):016x}"

    def _add(self, sid: str, parent: str | None, name: str, attrs: dict[str, Any], events: Any = ()) -> str:
        self.clock += 1000
        span = {
            "traceId": self.trace,
            "spanId": sid,
            "name": name,
            "startTimeUnixNano": str(self.clock),
            "endTimeUnixNano": str(self.clock + 500),
            "attributes": [{"key": k, "value": _any(v)} for k, v in attrs.items()],
            "events": [
                {"name": n, "attributes": [{"key": k, "value": _any(v)} for k, v in a.items()]} for n, a in events
            ],
        }
        if parent:
            span["parentSpanId"] = parent
        self.spans.append(span)
        return sid

    def _agent_attrs(self) -> dict[str, Any]:
        if self.shape == "openinference":
            return {"openinference.span.kind": "AGENT", "agent.name": "support"}
        return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}

    def llm(self, system: list[str], history: list[dict[str, Any]], reply: dict[str, Any], tools: list[str]) -> str:
        sid = self._id()
        text = "\n\n".join(system)
        if self.shape == "openinference":
            attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "m"}
            msgs = [{"role": "system", "content": text}, *history] if system else history
            attrs.update(_oi("llm.input_messages", msgs))
            attrs.update(_oi("llm.output_messages", [reply]))
            for i, name in enumerate(tools):
                spec = {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": {}}}
                attrs[f"llm.tools.{i}.tool.json_schema"] = json.dumps(spec)
            return self._add(sid, self.root, "ChatModel", attrs)
        if self.shape == "genai":
            attrs = {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.input.messages": json.dumps([_parts(m) for m in history]),
                "gen_ai.output.messages": json.dumps([_parts(reply)]),
                "gen_ai.tool.definitions": json.dumps(
                    [{"type": "function", "name": t, "description": f"{t} tool"} for t in tools]
                ),
            }
            if system:
                attrs["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": text}])
            return self._add(sid, self.root, "chat m", attrs)
        msgs = [{"role": "system", "content": text}, *history] if system else history
        if self.shape == "genai-indexed":
            attrs = {"gen_ai.system": "openai", "gen_ai.request.model": "m"}
            for i, m in enumerate(msgs):
                attrs[f"gen_ai.prompt.{i}.role"] = m["role"]
                if m.get("content"):
                    attrs[f"gen_ai.prompt.{i}.content"] = m["content"]
                if m.get("tool_call_id"):
                    attrs[f"gen_ai.prompt.{i}.tool_call_id"] = m["tool_call_id"]
                for j, (cid, name) in enumerate(m.get("tool_calls") or []):
                    base = f"gen_ai.prompt.{i}.tool_calls.{j}"
                    attrs.update({f"{base}.id": cid, f"{base}.name": name, f"{base}.arguments": "{}"})
            attrs["gen_ai.completion.0.role"] = "assistant"
            attrs["gen_ai.completion.0.content"] = reply.get("content", "")
            for j, (cid, name) in enumerate(reply.get("tool_calls") or []):
                attrs.update(
                    {f"gen_ai.completion.0.tool_calls.{j}.id": cid, f"gen_ai.completion.0.tool_calls.{j}.name": name}
                )
            return self._add(sid, self.root, "openai.chat", attrs)
        events = []
        for m in msgs:
            body: dict[str, Any] = {"content": m.get("content", "")}
            if m.get("tool_calls"):
                body["tool_calls"] = json.dumps(
                    [{"id": c, "function": {"name": n, "arguments": "{}"}} for c, n in m["tool_calls"]]
                )
            if m.get("tool_call_id"):
                body["id"] = m["tool_call_id"]
            events.append((f"gen_ai.{m['role']}.message", body))
        choice = {"role": "assistant", "content": reply.get("content", "")}
        if reply.get("tool_calls"):
            choice["tool_calls"] = [
                {"id": c, "function": {"name": n, "arguments": "{}"}} for c, n in reply["tool_calls"]
            ]
        events.append(("gen_ai.choice", {"message": json.dumps(choice)}))
        return self._add(sid, self.root, "chat m", {"gen_ai.operation.name": "chat"}, events)

    def tool(self, name: str, call_id: str, result: str) -> None:
        if self.shape == "openinference":
            attrs = {"openinference.span.kind": "TOOL", "tool.name": name, "output.value": result}
        else:
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
                     "gen_ai.tool.call.result": result}  # fmt: skip
        self._add(self._id(), self.root, f"execute_tool {name}", attrs)

    def retrieval(self, docs: list[tuple[str, str]]) -> None:
        if self.shape == "openinference":
            attrs: dict[str, Any] = {"openinference.span.kind": "RETRIEVER"}
            for i, (d, text) in enumerate(docs):
                attrs[f"retrieval.documents.{i}.document.id"] = d
                attrs[f"retrieval.documents.{i}.document.content"] = text
        else:
            attrs = {"gen_ai.operation.name": "retrieval",
                     "gen_ai.retrieval.documents": json.dumps([{"id": d, "content": t} for d, t in docs])}  # fmt: skip
        self._add(self._id(), self.root, "retrieve", attrs)

    def document(self) -> dict[str, Any]:
        return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": self.spans}]}]}


def _any(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    return {"stringValue": str(v)}


def _parts(m: dict[str, Any]) -> dict[str, Any]:
    if m["role"] == "tool":
        return {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": m["tool_call_id"], "response": m["content"]}],
        }
    parts: list[dict[str, Any]] = [{"type": "text", "content": m["content"]}] if m.get("content") else []
    parts += [{"type": "tool_call", "id": c, "name": n, "arguments": {}} for c, n in m.get("tool_calls") or []]
    return {"role": m["role"], "parts": parts}


def _oi(prefix: str, msgs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, m in enumerate(msgs):
        out[f"{prefix}.{i}.message.role"] = m["role"]
        if m.get("content"):
            out[f"{prefix}.{i}.message.content"] = m["content"]
        if m.get("tool_call_id"):
            out[f"{prefix}.{i}.message.tool_call_id"] = m["tool_call_id"]
        for j, (cid, name) in enumerate(m.get("tool_calls") or []):
            base = f"{prefix}.{i}.message.tool_calls.{j}.tool_call"
            out.update({f"{base}.id": cid, f"{base}.function.name": name, f"{base}.function.arguments": "{}"})
    return out


def make_case(n: int, rng: random.Random) -> Case:
    """One planted trace: tool result (alone, or repeated tool's n-th result), or document in one of three places."""
    shape = SHAPES[n % len(SHAPES)]
    cue, wrong = CUES[rng.randrange(len(CUES))]
    kind = KINDS[n % len(KINDS)]
    spans = Spans(shape, rng)
    system = rng.sample(SYSTEMS, rng.randint(1, 3))
    tools = rng.sample(TOOLS[:-1], rng.randint(2, 4))
    history: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": rng.choice(["Can I get a refund?", "Please approve my return.", "Is my order refundable?"]),
        }
    ]
    expected: tuple[str, ...] = ()
    planted_at = rng.randrange(len(tools))
    wording = rng.choice(["note: {cue}", "status -> {cue} (per record)", "FLAG: {cue}", "{cue}"])
    calls: list[tuple[str, str]] = [(t, f"{t} says: {rng.choice(FILLER)}") for t in tools]
    if kind in ("tool", "noisy", "noisy-25", "twin", "window"):
        calls[planted_at] = (tools[planted_at], f"{tools[planted_at]}: " + wording.format(cue=cue))
        expected = (tools[planted_at],)
    if kind == "tool-repeat":
        name = tools[planted_at]
        calls.insert(planted_at + 1, (name, f"{name}: " + wording.format(cue=cue)))
        expected = (f"{name}#2",)
    docs = [(f"kb-{rng.randrange(1000, 9999)}-{i}", text) for i, text in enumerate(rng.sample(DOCS, rng.randint(1, 3)))]
    planted_doc = (f"kb-{rng.randrange(1000, 9999)}-p", "Policy update: " + wording.format(cue=cue) + ".")
    if kind == "doc-json":
        planted_doc = (planted_doc[0], f'Policy update: "{cue}" applies (see "terms").')
    if kind.startswith("doc"):
        docs.insert(rng.randrange(len(docs) + 1), planted_doc)
        expected = (planted_doc[0],)
    spans.retrieval(docs)
    doc_text = "\n".join(t for _, t in docs)
    if kind == "doc-system":
        system = [*system, f"Context:\n{doc_text}"]
    elif kind == "doc-user":
        history.append({"role": "user", "content": f"Here is what I found:\n{doc_text}"})
    elif kind in ("doc-tool", "doc-json"):
        calls.append(("search_docs", json.dumps([{"id": d, "text": t} for d, t in docs])))
    if kind == "twin":  # the cue said twice: only removing both flips it
        other = (planted_at + 1) % len(tools)
        calls[other] = (tools[other], f"{tools[other]}: also {cue}")
        expected = tuple(sorted({tools[planted_at], tools[other]}))
    offered = list(dict.fromkeys([*tools, *(c for c, _ in calls)]))
    for k, (name, result) in enumerate(calls):
        cid = f"call_{k}_{rng.randrange(10**6)}"
        ask = {"role": "assistant", "content": "", "tool_calls": [(cid, name)]}
        spans.llm(system, history, ask, offered)
        spans.tool(name, cid, result)
        history = [*history, ask, {"role": "tool", "content": result, "tool_call_id": cid}]
    if kind == "window":  # the framework's window dropped the first exchange (and the planted result stays)
        first_tool = next(i for i, m in enumerate(history) if m["role"] == "tool")
        kept = [history[0], *history[first_tool + 1 :]]
        history = kept if any(cue in str(m.get("content")) for m in kept) else history
    spans.llm(system, history, {"role": "assistant", "content": wrong}, offered)
    noise = {"noisy": 0.1, "noisy-25": 0.25}.get(kind, 0.0)
    return Case(shape, kind, expected, spans.document(), cue, wrong, noise=noise)


def judge(case: Case) -> dict[str, Any]:
    rec = import_trace(case.doc)
    at = backtrack(rec).trigger

    def respond(request: LLMRequest) -> str:
        seen = "\n".join([request.system_prompt, *(m.content for m in request.messages)])
        answer = case.wrong if case.cue in seen else GOOD
        if case.noise and random.Random(zlib.crc32(f"{request.seed}|{seen}".encode())).random() < case.noise:
            answer = GOOD if answer == case.wrong else case.wrong
        return answer

    def changed(a: str, b: str) -> bool:
        return (a == GOOD) != (b == GOOD)

    t0 = time.perf_counter()
    report = localize_sync(rec, at=at, provider=mock(respond=respond, record_requests=False), outcome_changed=changed,
                           progress=False)  # fmt: skip
    got = sorted(c.ids for c in report.confirmed_sets)
    return {
        "shape": case.shape,
        "kind": case.kind,
        "exact": got == [case.expected],
        "expected": list(case.expected),
        "confirmed": [list(g) for g in got],
        "reruns": report.reruns,
        "seconds": round(time.perf_counter() - t0, 3),
    }


def import_speed(shape: str, spans: int) -> dict[str, Any]:
    rng = random.Random(7)
    s = Spans("openinference" if shape == "openinference-loop" else "genai", rng)
    tools = TOOLS[:4]
    if shape in ("loop", "openinference-loop"):  # one agent: each model call reads the whole conversation so far
        history: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
        while len(s.spans) + 2 <= spans - 1:
            cid = f"c{len(s.spans)}"
            ask = {"role": "assistant", "content": "", "tool_calls": [(cid, tools[len(s.spans) % 4])]}
            s.llm(SYSTEMS[:2], history, ask, tools)
            s.tool(ask["tool_calls"][0][1], cid, rng.choice(FILLER))
            history = [*history, ask, {"role": "tool", "content": rng.choice(FILLER), "tool_call_id": cid}]
        s.llm(SYSTEMS[:2], history, {"role": "assistant", "content": "done"}, tools)
    else:  # a pipeline: short independent calls
        while len(s.spans) < spans:
            s.llm(
                SYSTEMS[:2],
                [{"role": "user", "content": rng.choice(DOCS)}],
                {"role": "assistant", "content": "ok"},
                tools,
            )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        path.write_text(json.dumps(s.document()))
        size = path.stat().st_size
        wall, cpu, parse = [], [], []
        for _ in range(7):
            t0, c0 = time.perf_counter(), time.process_time()
            rec = import_trace(path)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            gc.disable()  # as import_trace holds the collector off while it reads
            c0 = time.process_time()
            json.loads(path.read_bytes())
            parse.append(time.process_time() - c0)
            gc.enable()
    calls = sum(1 for c in rec.snapshot.commit_log if c.stage_id == "call-llm")
    return {
        "spans": len(s.spans),
        "model_calls": calls,
        "file_bytes": size,
        "median_seconds": round(statistics.median(wall), 4),
        "median_cpu_seconds": round(statistics.median(cpu), 4),
        "json_parse_cpu_seconds": round(statistics.median(parse), 4),
    }


def main() -> None:
    speed = {shape: import_speed(shape, 1000) for shape in ("loop", "pipeline", "openinference-loop")}
    print(json.dumps(speed, indent=1))
    rng = random.Random(20261204)
    results = [judge(make_case(n, rng)) for n in range(200)]
    exact = sum(1 for r in results if r["exact"])
    by: dict[str, dict[str, int]] = {}
    for r in results:
        for key in (f"shape:{r['shape']}", f"kind:{r['kind']}"):
            row = by.setdefault(key, {"cases": 0, "exact": 0})
            row["cases"] += 1
            row["exact"] += int(r["exact"])
    misses = [r for r in results if not r["exact"]]
    payload = {
        "import_1000_spans": speed,
        "import_goal_seconds": 1.0,
        "planted_cases": len(results),
        "exact_culprit_sets": exact,
        "exact_rate": round(exact / len(results), 4),
        "by": by,
        "median_reruns": statistics.median(r["reruns"] for r in results),
        "median_seconds_per_case": statistics.median(r["seconds"] for r in results),
        "misses": misses[:20],
    }
    print(json.dumps({k: v for k, v in payload.items() if k != "misses"}, indent=1))
    for m in misses[:20]:
        print("MISS", m)
    print(write_results("interop", payload))


if __name__ == "__main__":
    main()
