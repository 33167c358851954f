"""Record payloads: ``bounded`` keeps names, types and sizes (no values); ``verbatim`` keeps served values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from agentfootprint.audit._canonical import jsonable
from agentfootprint.flow.commit import Commit
from agentfootprint.flow.redaction import REDACTED

PayloadMode = Literal["bounded", "verbatim"]
PAYLOAD_MODES: tuple[str, ...] = ("bounded", "verbatim")
_MAX_KEYS = 50
_MAX_NAME = 64
_MAX_IDENT = 200

# Event payload fields that name things (tools, models, ids, counts) and stay readable in bounded mode.
IDENTITY_FIELDS = frozenset(
    {
        "name",
        "tool",
        "tool_name",
        "tool_call_id",
        "call_id",
        "id",
        "model",
        "provider",
        "stage_id",
        "runtime_stage_id",
        "iteration",
        "turn",
        "finish_reason",
        "stop_reason",
        "source",
        "source_id",
        "slot",
        "kind",
        "status",
        "branch",
        "route",
        "trigger",
        "skill",
        "skill_id",
        "member",
        "composition",
        "decision",
        "allowed",
        "ok",
        "is_error",
        "error_type",
        "attempt",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "duration_ms",
        "latency_ms",
    }
)


def _name(key: Any) -> str:
    return (key if isinstance(key, str) else str(key))[:_MAX_NAME]


def shape(value: Any) -> dict[str, Any]:
    """Type and size of a value, with key names for objects; never the value itself."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "bool"}
    if isinstance(value, int):
        return {"type": "int"}
    if isinstance(value, float):
        return {"type": "float"}
    if isinstance(value, str):
        out: dict[str, Any] = {"type": "str", "size": len(value)}
        if value == REDACTED:
            out["redacted"] = True
        return out
    if isinstance(value, Mapping):
        keys = [_name(k) for k in list(value)[:_MAX_KEYS]]
        return {"type": "object", "size": len(value), "keys": jsonable(keys)}
    if isinstance(value, list | tuple | set | frozenset):
        return {"type": "array", "size": len(value)}
    return {"type": type(value).__name__[:_MAX_NAME]}


def _exception_name(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    head = text.split(":", 1)[0].strip()
    name = head if head.isidentifier() else "error"
    return {"exception": name[:_MAX_NAME], "size": len(text)}


def _bounded_decision(decision: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if decision is None:
        return None
    rules = []
    for rule in decision.get("rules") or []:
        if not isinstance(rule, Mapping):
            continue
        rules.append(
            {
                "index": rule.get("index"),
                "type": rule.get("type"),
                "branch": rule.get("branch"),
                "label": rule.get("label"),
                "matched": rule.get("matched"),
                "conditions": [
                    {"key": c.get("key"), "op": c.get("op"), "result": c.get("result"), "redacted": c.get("redacted")}
                    for c in rule.get("conditions") or []
                    if isinstance(c, Mapping)
                ],
                "inputs": len(rule.get("inputs") or []),
                "error": _exception_name(rule.get("error")),
            }
        )
    return {
        "kind": decision.get("kind"),
        "chosen": list(decision.get("chosen") or []),
        "default": decision.get("default"),
        "default_used": decision.get("default_used"),
        "rules": rules,
    }


def commit_payload(commit: Commit, mode: PayloadMode) -> dict[str, Any]:
    """One commit as a record payload: verbatim is the served commit; bounded drops values for shapes."""
    data = commit.model_dump()
    if mode == "verbatim":
        return jsonable(data)  # type: ignore[no-any-return]
    data["writes"] = [
        {"path": w.path, "verb": w.verb, "shape": shape(w.value)}
        | ({"read_keys": list(w.read_keys)} if w.read_keys is not None else {})
        for w in commit.writes
    ]
    if commit.read_values is not None:
        data["read_values"] = {k: shape(v) for k, v in commit.read_values.items()}
    data["emits"] = [{"name": _name(e.get("name")), "shape": shape(e.get("payload"))} for e in commit.emits]
    data["error"] = _exception_name(commit.error)
    data["decision"] = _bounded_decision(data.get("decision"))
    data["break_reason"] = None if commit.break_reason is None else shape(commit.break_reason)
    return jsonable(data)  # type: ignore[no-any-return]


def _bounded_event_value(key: str, value: Any) -> Any:
    if key in IDENTITY_FIELDS:
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str) and len(value) <= _MAX_IDENT:
            return value
    return shape(value)


def event_payload(payload: Any, mode: PayloadMode) -> dict[str, Any]:
    """An event's (already redacted) payload: verbatim as served, or identity fields plus shapes."""
    if isinstance(payload, BaseModel):
        payload = payload.model_dump()
    if not isinstance(payload, Mapping):
        payload = {"value": payload}
    if mode == "verbatim":
        return jsonable(payload)  # type: ignore[no-any-return]
    return jsonable({_name(k): _bounded_event_value(_name(k), v) for k, v in payload.items()})  # type: ignore[no-any-return]


def state_payload(state: Mapping[str, Any], mode: PayloadMode) -> dict[str, Any]:
    """A state dict: values (verbatim) or one shape per key (bounded)."""
    if mode == "verbatim":
        return jsonable(state)  # type: ignore[no-any-return]
    return jsonable({_name(k): shape(v) for k, v in state.items()})  # type: ignore[no-any-return]
