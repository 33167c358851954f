"""Reading LLM, tool, retrieval and agent spans under the OTel GenAI conventions (current and previous) and
OpenInference, into one neutral shape."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agentfootprint.interop._spans import Span

Convention = Literal["genai", "openinference"]
CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})
_PARAGRAPHS = re.compile(r"\n\s*\n")
_ROLE_ALIASES = {"developer": "system", "model": "assistant", "ai": "assistant", "human": "user", "function": "tool"}


@dataclass
class Msg:
    """One message as the span recorded it (roles: system, user, assistant, tool)."""

    role: str
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None

    def __post_init__(self) -> None:
        self.role = _ROLE_ALIASES.get(self.role.lower(), self.role.lower())

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [dict(c) for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.tool_name is not None:
            out["tool_name"] = self.tool_name
        return out


@dataclass
class LLMCall:
    """One model call: what it was sent (system paragraphs, messages, tools) and what it answered."""

    span: Span
    convention: Convention
    system: list[str]
    messages: list[Msg]
    output: Msg
    tools: list[dict[str, Any]]
    model: str
    has_content: bool
    agent: str | None = None


@dataclass
class ToolRun:
    span: Span
    name: str
    call_id: str | None
    args: Any
    result: str | None


@dataclass
class Retrieval:
    span: Span
    documents: list[tuple[str, str]]
    """(document id, text) in rank order."""


def _loads(value: Any) -> Any:
    """A JSON-encoded attribute decoded; anything else as it is."""
    if isinstance(value, str) and value[:1] in ("[", "{", '"'):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):  # nested past the parser's depth: left as text
            return value
    return value


def as_text(value: Any) -> str:
    """A content value as text: a string as is, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _args(value: Any) -> dict[str, Any]:
    value = _loads(value)
    return dict(value) if isinstance(value, dict) else ({} if value in (None, "") else {"input": value})


def indexed(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """``prefix{i}.rest`` attributes grouped by ``i`` (as ``{rest: value}``)."""
    return index_groups(attrs, (prefix,))[prefix]


def index_groups(attrs: dict[str, Any], prefixes: tuple[str, ...]) -> dict[str, dict[int, dict[str, Any]]]:
    """``indexed`` for several prefixes in one pass over ``attrs`` (keys that match none are skipped in C)."""
    groups: dict[str, dict[int, dict[str, Any]]] = {p: {} for p in prefixes}
    for key, value in attrs.items():
        if not key.startswith(prefixes):
            continue
        for prefix in prefixes:
            if key.startswith(prefix):
                index, dot, rest = key[len(prefix) :].partition(".")
                if dot and rest and index.isdigit() and index.isascii():
                    groups[prefix].setdefault(int(index), {})[rest] = value
                break
    return {p: dict(sorted(g.items())) for p, g in groups.items()}


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _PARAGRAPHS.split(text) if p.strip()]


# ---- GenAI, current: JSON parts -------------------------------------------------------------------------------


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type", "text") == "text" and part.get("visible", True) is not False:
        return as_text(part.get("content", part.get("text")))
    return None


def _genai_message(raw: Any) -> list[Msg]:
    """One ``{role, parts}`` message; each tool-call response part becomes a tool message of its own."""
    if not isinstance(raw, dict):
        return []
    role = str(raw.get("role") or "user")
    parts = raw.get("parts")
    if parts is None and "content" in raw:  # the older flat form {role, content, tool_calls}
        parts = [{"type": "text", "content": raw.get("content")}] if raw.get("content") is not None else []
        for tc in raw.get("tool_calls") or []:
            if not isinstance(tc, dict):
                continue
            fn: dict[str, Any] = tc["function"] if isinstance(tc.get("function"), dict) else tc
            parts.append(
                {"type": "tool_call", "id": tc.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")}
            )
        if role == "tool":
            return [
                Msg(
                    role="tool",
                    content=as_text(raw.get("content")),
                    tool_call_id=_str(raw.get("tool_call_id") or raw.get("id")),
                    tool_name=_str(raw.get("name")),
                )
            ]
    out: list[Msg] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else []:
        kind = part.get("type") if isinstance(part, dict) else "text"
        if kind == "tool_call":
            calls.append(
                {
                    "id": _str(part.get("id")) or "",
                    "name": _str(part.get("name")) or "",
                    "args": _args(part.get("arguments")),
                }
            )
        elif kind == "tool_call_response":
            result = part.get("response", part.get("result"))
            out.append(
                Msg(
                    role="tool",
                    content=as_text(result),
                    tool_call_id=_str(part.get("id")),
                    tool_name=_str(part.get("name")),
                )
            )
        else:
            text = _part_text(part)
            if text is not None:
                texts.append(text)
    if texts or calls or not out:
        main = Msg(role=role if role != "tool" else "user", content="\n".join(texts), tool_calls=calls)
        out = [main, *out] if role == "assistant" else [*out, main] if (texts or calls) else out
    return out


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _genai_messages(value: Any) -> list[Msg]:
    value = _loads(value)
    out: list[Msg] = []
    for raw in value if isinstance(value, list) else []:
        out.extend(_genai_message(raw))
    return out


def _genai_system(value: Any) -> list[str]:
    value = _loads(value)
    if isinstance(value, str):
        return [value]
    texts = [_part_text(p) for p in value] if isinstance(value, list) else []
    return [t for t in texts if t]


def _tool_spec(raw: Any) -> dict[str, Any] | None:
    raw = _loads(raw)
    if not isinstance(raw, dict):
        return None
    fn: dict[str, Any] = raw["function"] if isinstance(raw.get("function"), dict) else raw
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    schema = fn.get("parameters", fn.get("input_schema", fn.get("parameters_json_schema")))
    return {
        "name": name,
        "description": as_text(fn.get("description") or ""),
        "input_schema": schema if isinstance(schema, dict) else {"type": "object", "properties": {}},
    }


def _genai_tools(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    raw = _loads(attrs.get("gen_ai.tool.definitions"))
    if not isinstance(raw, list):
        params = _loads(attrs.get("model_request_parameters"))  # pydantic-ai
        raw = params.get("function_tools") if isinstance(params, dict) else None
    if not isinstance(raw, list):
        raw = [
            {"name": f.get("name"), "description": f.get("description"), "parameters": _loads(f.get("parameters"))}
            for f in indexed(attrs, "llm.request.functions.").values()
        ]  # OpenLLMetry
    return [s for s in (_tool_spec(r) for r in raw) if s is not None]


# ---- GenAI, previous: indexed attributes and events ------------------------------------------------------------


def _indexed_messages(attrs: dict[str, Any], prefix: str) -> list[Msg]:
    out: list[Msg] = []
    for item in indexed(attrs, prefix).values():
        calls = [
            {"id": str(c.get("id") or ""), "name": str(c.get("name") or ""), "args": _args(c.get("arguments"))}
            for c in indexed(item, "tool_calls.").values()
        ]
        role = str(item.get("role") or "user")
        out.append(
            Msg(
                role=role,
                content=as_text(_loads(item.get("content")))
                if not isinstance(item.get("content"), str)
                else item["content"],
                tool_calls=calls,
                tool_call_id=_str(item.get("tool_call_id")),
                tool_name=_str(item.get("name")) if role == "tool" else None,
            )
        )
    return out


_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def _event_body(attrs: dict[str, Any]) -> dict[str, Any]:
    body = _loads(attrs.get("body", attrs.get("event.body")))
    merged = dict(body) if isinstance(body, dict) else {}
    merged.update({k: _loads(v) for k, v in attrs.items() if k not in ("body", "event.body")})
    return merged


def _event_messages(span: Span) -> tuple[list[Msg], Msg | None, bool]:
    """Messages and the reply from GenAI events (per-message events, or ``gen_ai.prompt``/``gen_ai.completion``)."""
    inputs: list[Msg] = []
    reply: Msg | None = None
    seen = False
    for name, attrs in span.events:
        if name in _EVENT_ROLES:
            seen = True
            body = _event_body(attrs)
            role = _EVENT_ROLES[name]
            raw = {"role": role, "content": body.get("content"), "tool_calls": body.get("tool_calls") or []}
            if role == "tool":
                raw["tool_call_id"] = body.get("id", body.get("tool_call_id"))
                raw["name"] = body.get("name")
            if isinstance(raw["content"], list):  # content given as parts
                raw = {"role": role, "parts": raw["content"]}
            inputs.extend(_genai_message(raw))
        elif name == "gen_ai.choice":
            seen = True
            body = _event_body(attrs)
            message: dict[str, Any] = body["message"] if isinstance(body.get("message"), dict) else body
            found = _genai_message({"role": "assistant", **{k: v for k, v in message.items() if k != "role"}})
            reply = found[0] if found else Msg(role="assistant")
        elif "gen_ai.prompt" in attrs or "gen_ai.completion" in attrs:
            seen = True
            if "gen_ai.prompt" in attrs:
                inputs.extend(_genai_messages(attrs["gen_ai.prompt"]))
            if "gen_ai.completion" in attrs:
                done = _loads(attrs["gen_ai.completion"])
                items = done if isinstance(done, list) else [done]
                msgs = [
                    m
                    for item in items
                    for m in _genai_message(item.get("message", item) if isinstance(item, dict) else {"content": item})
                ]
                reply = next((m for m in msgs if m.role == "assistant"), msgs[0] if msgs else None)
    return inputs, reply, seen


# ---- OpenInference ---------------------------------------------------------------------------------------------


def _oi_message(item: dict[str, Any]) -> Msg:
    """One ``llm.*_messages.{i}`` group of attributes as a message."""
    content = item.get("message.content")
    if content is None:
        texts = [
            str(c.get("message_content.text"))
            for c in indexed(item, "message.contents.").values()
            if c.get("message_content.text") is not None
        ]
        content = "\n".join(texts)
    calls = [
        {
            "id": str(c.get("tool_call.id") or ""),
            "name": str(c.get("tool_call.function.name") or ""),
            "args": _args(c.get("tool_call.function.arguments")),
        }
        for c in indexed(item, "message.tool_calls.").values()
    ]
    role = str(item.get("message.role") or "user")
    return Msg(
        role=role,
        content=as_text(content),
        tool_calls=calls,
        tool_call_id=_str(item.get("message.tool_call_id")),
        tool_name=_str(item.get("message.name")) if role == "tool" else None,
    )


def _oi_tools(groups: dict[int, dict[str, Any]], memo: dict[str, dict[str, Any] | None]) -> list[dict[str, Any]]:
    """OpenInference ``llm.tools.{i}`` groups as tool specs (a JSON schema seen before is decoded once)."""
    out = []
    for item in groups.values():
        raw = item.get("tool.json_schema")
        if isinstance(raw, str):
            if raw not in memo:
                memo[raw] = _tool_spec(raw)
            spec = memo[raw]
        else:
            spec = _tool_spec(raw)
        if spec is None and item.get("tool.name"):
            spec = _tool_spec({"name": item.get("tool.name"), "description": item.get("tool.description"),
                               "parameters": _loads(item.get("tool.parameters"))})  # fmt: skip
        if spec is not None:
            out.append(dict(spec))
    return out


# ---- span kinds ------------------------------------------------------------------------------------------------


def span_kind(span: Span, convention: str) -> str | None:
    """``llm``, ``tool``, ``retrieval``, ``agent`` or None, under ``convention`` (``auto`` tries both)."""
    a = span.attributes
    if convention in ("auto", "openinference"):
        kind = a.get("openinference.span.kind")
        if isinstance(kind, str):
            return {"LLM": "llm", "TOOL": "tool", "RETRIEVER": "retrieval", "AGENT": "agent"}.get(kind.upper())
    if convention in ("auto", "genai"):
        op = a.get("gen_ai.operation.name")
        if op in CHAT_OPERATIONS:
            return "llm"
        if op == "execute_tool":
            return "tool"
        if op in AGENT_OPERATIONS:
            return "agent"
        if op == "retrieval" or "gen_ai.retrieval.documents" in a:
            return "retrieval"
        if "gen_ai.input.messages" in a or "gen_ai.prompt.0.role" in a or "gen_ai.prompt.0.content" in a:
            return "llm"
        if "gen_ai.tool.name" in a and ("gen_ai.tool.call.id" in a or "tool_arguments" in a):
            return "tool"
        if "agent_name" in a or "gen_ai.agent.name" in a:
            return "agent"
    return None


_OI_IN, _OI_OUT, _OI_TOOLS = "llm.input_messages.", "llm.output_messages.", "llm.tools."


def _beside(attrs: dict[str, Any], flat: dict[str, Any]) -> dict[str, Any]:
    """The attributes whose key ``flat`` (all of it in ``attrs``) lacks: looked for at the two ends of ``attrs``,
    where a span's new attributes sit when the rest repeat the previous span's in one run, else over all of it."""
    want = len(attrs) - len(flat)
    front: list[str] = []
    back: list[str] = []
    for key in attrs:
        if key in flat:
            break
        front.append(key)
    for key in reversed(attrs):
        if key in flat or len(front) + len(back) == want:
            break
        back.append(key)
    if len(front) + len(back) < want:
        return {k: v for k, v in attrs.items() if k not in flat}
    return {k: attrs[k] for k in [*front, *reversed(back)]}


class PrefixCache:
    """Parsed input messages of the previous span: an agent's next span repeats them and appends a few, so only
    the new part is parsed (the shared messages are the same objects)."""

    def __init__(self) -> None:
        self.raw = ""
        self.messages: list[Msg] = []
        self.flat: dict[str, Any] = {}
        """The previous OpenInference span's ``llm.input_messages.*`` attributes."""
        self.items: dict[int, dict[str, Any]] = {}
        self.by_index: dict[int, Msg] = {}
        self.tool_specs: dict[str, dict[str, Any] | None] = {}

    def openinference(self, attrs: dict[str, Any]) -> tuple[list[Msg], dict[str, dict[int, dict[str, Any]]]]:
        """OpenInference input messages, and the span's output and tool groups. When the span carries every input
        attribute of the previous span unchanged (a subset test done in C), only the other attributes are grouped
        and only messages with new attributes are built; otherwise the whole span is."""
        flat = self.flat
        if flat and flat.items() <= attrs.items():
            rest = _beside(attrs, flat)
            items, by_index = self.items, self.by_index  # the cache's own dicts, extended in place
        else:
            rest, items, by_index, flat = attrs, {}, {}, {}
        groups = index_groups(rest, (_OI_IN, _OI_OUT, _OI_TOOLS))
        flat.update({k: v for k, v in rest.items() if k.startswith(_OI_IN)})
        top = next(reversed(items), -1)
        ordered = True
        for i, item in groups[_OI_IN].items():
            ordered = ordered and (i in items or i > top)
            items[i] = {**items[i], **item} if i in items else item
            by_index[i] = _oi_message(items[i])
        if not ordered:  # a message at a new index below the last one: keep index order
            items, by_index = dict(sorted(items.items())), dict(sorted(by_index.items()))
        self.items, self.by_index, self.flat, self.raw = items, by_index, flat, ""
        self.messages = list(by_index.values())
        return list(self.messages), groups

    def genai(self, raw: Any) -> list[Msg]:
        if not isinstance(raw, str):
            return _genai_messages(raw)
        prev = self.raw
        cut = len(prev) - 1
        if prev.endswith("]") and len(raw) > len(prev) and raw.startswith(prev[:cut]) and raw[cut] == ",":
            tail = _genai_messages("[" + raw[cut + 1 :])
            messages = [*self.messages, *tail] if tail or raw[cut + 1 :].strip() == "]" else _genai_messages(raw)
        elif raw == prev:
            messages = list(self.messages)
        else:
            messages = _genai_messages(raw)
        self.raw, self.messages, self.items, self.by_index, self.flat = raw, messages, {}, {}, {}
        return list(messages)


def read_llm(span: Span, cache: PrefixCache | None = None) -> LLMCall:
    """One LLM span's request and reply, under the convention its attributes use."""
    a = span.attributes
    if isinstance(a.get("openinference.span.kind"), str):
        cache = cache if cache is not None else PrefixCache()
        inputs, groups = cache.openinference(a)
        outs = [_oi_message(item) for item in groups[_OI_OUT].values()]
        reply = next((m for m in outs if m.role == "assistant"), outs[0] if outs else None)
        if reply is None and a.get("output.value") is not None and not inputs:
            reply = None
        model = str(a.get("llm.model_name") or a.get("llm.response.model_name") or "")
        system: list[str] = []
        has = bool(inputs)
        convention: Convention = "openinference"
        tools = _oi_tools(groups[_OI_TOOLS], cache.tool_specs)
    else:
        convention = "genai"
        system = _genai_system(a.get("gen_ai.system_instructions")) if "gen_ai.system_instructions" in a else []
        if "gen_ai.input.messages" in a:
            raw = a.get("gen_ai.input.messages")
            inputs = cache.genai(raw) if cache is not None else _genai_messages(raw)
            outs = _genai_messages(a.get("gen_ai.output.messages"))
            reply = next((m for m in outs if m.role == "assistant"), outs[0] if outs else None)
            has = bool(inputs) or bool(system)
        elif indexed(a, "gen_ai.prompt."):
            inputs = _indexed_messages(a, "gen_ai.prompt.")
            outs = _indexed_messages(a, "gen_ai.completion.")
            reply = next((m for m in outs if m.role == "assistant"), outs[0] if outs else None)
            has = bool(inputs)
        else:
            inputs, reply, has = _event_messages(span)
            has = has and bool(inputs)
        model = str(a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or "")
        tools = _genai_tools(a)
    for m in inputs:
        if m.role == "system":
            system.append(m.content)
    system_paragraphs = [p for text in system for p in paragraphs(text)]
    # with capture off some instrumentations keep the message skeleton (roles, tool names) and drop every text
    has = has and (bool(system_paragraphs) or any(m.content.strip() for m in inputs))
    messages = [m for m in inputs if m.role != "system"]
    return LLMCall(
        span=span,
        convention=convention,
        system=system_paragraphs,
        messages=messages,
        output=Msg(role="assistant", content=reply.content, tool_calls=reply.tool_calls) if reply else Msg("assistant"),
        tools=tools,
        model=model,
        has_content=has,
    )


def read_tool(span: Span) -> ToolRun:
    a = span.attributes
    name = a.get("gen_ai.tool.name") or a.get("tool.name") or span.name.removeprefix("execute_tool ").strip()
    call_id = a.get("gen_ai.tool.call.id") or a.get("tool_call.id") or a.get("tool.id")
    output = _loads(a.get("output.value"))
    if call_id is None and isinstance(output, dict) and isinstance(output.get("data"), dict):
        call_id = output["data"].get("tool_call_id")  # LangChain: the ToolMessage serialized
    args = a.get("gen_ai.tool.call.arguments", a.get("tool_arguments", a.get("input.value")))
    result = a.get("gen_ai.tool.call.result", a.get("tool_response", a.get("output.value")))
    return ToolRun(span, str(name), _str(call_id), _loads(args), None if result is None else as_text(_loads(result)))


def read_retrieval(span: Span) -> Retrieval:
    a = span.attributes
    docs: list[tuple[str, str]] = []
    raw = _loads(a.get("gen_ai.retrieval.documents"))
    if isinstance(raw, list):
        for n, d in enumerate(raw):
            if isinstance(d, dict):
                text = as_text(d.get("content", d.get("text", d.get("page_content"))))
                docs.append((str(d.get("id") or f"{span.span_id}-doc-{n + 1}"), text))
    for n, d in indexed(a, "retrieval.documents.").items():
        text = as_text(d.get("document.content"))
        meta = _loads(d.get("document.metadata"))
        meta = meta if isinstance(meta, dict) else {}
        doc_id = d.get("document.id") or meta.get("id") or meta.get("source")  # LangChain keeps the id in metadata
        docs.append((str(doc_id or f"{span.span_id}-doc-{n + 1}"), text))
    return Retrieval(span, [(i, t) for i, t in docs if t])


def agent_name(span: Span) -> str:
    a = span.attributes
    name = a.get("gen_ai.agent.name") or a.get("agent.name") or a.get("agent_name")
    if not name:
        name = span.name
        for prefix in ("invoke_agent ", "agent run ", "create_agent "):
            name = name.removeprefix(prefix)
    return str(name)


__all__ = [
    "LLMCall",
    "Msg",
    "PrefixCache",
    "Retrieval",
    "ToolRun",
    "agent_name",
    "as_text",
    "indexed",
    "paragraphs",
    "read_llm",
    "read_retrieval",
    "read_tool",
    "span_kind",
]
