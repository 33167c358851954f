"""An AG-UI request read as UNTRUSTED input (seed 001): a replaceable reader, then the core's shape and id checks.

Whichever reader produced it, the core checks the turn; refusals name the wire field, never the value."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentfootprint.hosting._body import check_json_value, check_text, plain_json_copy
from agentfootprint.hosting._ids import ID_PATTERN, MAX_ID_LENGTH, TOOL_NAME_PATTERN
from agentfootprint.hosting.refusal import WireRequestRefusal

__all__ = [
    "ContextItem",
    "HistoryMessageIn",
    "MessageIn",
    "RequestFacts",
    "RequestReader",
    "ResumeEntryIn",
    "ToolMessageIn",
    "ToolOffer",
    "TurnRequest",
    "UserMessageIn",
    "check_id",
    "check_turn_request",
    "read_request",
    "run_agent_input_reader",
]

_READ_ROLES = frozenset({"user", "assistant", "tool", "activity", "reasoning"})
_INSTRUCTION_ROLES = frozenset({"system", "developer"})
_RESUME_STATUSES = frozenset({"resolved", "cancelled"})
_WALKED_FIELDS = ("messages", "tools", "context", "state", "resume")


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class UserMessageIn(_Wire):
    """A user message as sent: text, or AG-UI content parts (each checked against the protocol's part models)."""

    id: str
    role: Literal["user"] = "user"
    content: str | tuple[dict[str, Any], ...]


class ToolMessageIn(_Wire):
    """A tool message as sent: read only as the answer to a frontend tool call the server holds a pause for."""

    id: str
    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: str | tuple[dict[str, Any], ...]
    error: str | None = None


class HistoryMessageIn(_Wire):
    """The browser's copy of what the server said (assistant, activity, reasoning): kept by id and role only."""

    id: str
    role: Literal["assistant", "activity", "reasoning"]


MessageIn = Annotated[UserMessageIn | ToolMessageIn | HistoryMessageIn, Field(discriminator="role")]


class ToolOffer(_Wire):
    """A frontend tool the page offers; only its name is ever used (the app's description and schema win)."""

    name: str
    description: str | None = None
    parameters: Any = None


class ContextItem(_Wire):
    """One AG-UI context entry; reaches the agent only through the app's context validator."""

    description: str
    value: str


class ResumeEntryIn(_Wire):
    """An answer to one interrupt; taken only for an interrupt id the server's held pause handed out."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None


class TurnRequest(_Wire):
    """The one turn a request asks for, checked; carries no identity. ``state``/``context`` None: not carried."""

    thread_id: str
    run_id: str
    parent_run_id: str | None = None
    messages: tuple[MessageIn, ...] = ()
    tools: tuple[ToolOffer, ...] = ()
    context: tuple[ContextItem, ...] | None = None
    state: Any = None
    resume: tuple[ResumeEntryIn, ...] = ()


@dataclass(frozen=True)
class RequestFacts:
    """The request as the host read it, UNTRUSTED: the parsed JSON body and the headers (lower-case names)."""

    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)


RequestReader = Callable[[RequestFacts], TurnRequest | Mapping[str, Any]]
"""A body → the turn it asks for (a ``TurnRequest`` or its camelCase JSON shape). Mapping only; the core decides."""


def run_agent_input_reader(facts: RequestFacts) -> Any:
    """The default reader: the body IS an AG-UI ``RunAgentInput`` and is read as it is."""
    return facts.body


def read_request(reader: RequestReader | None, facts: RequestFacts) -> TurnRequest:
    """Run ``reader`` (None: the default) and the core checks on what it produced (a custom reader's as plain JSON).

    Raises ``WireRequestRefusal``: the reader's own, or the core's by field name."""
    if reader is None or reader is run_agent_input_reader:
        return check_turn_request(facts.body)
    try:
        produced = reader(facts)
        if isinstance(produced, TurnRequest):
            produced = produced.model_dump(mode="json", by_alias=True, exclude_none=True)
    except WireRequestRefusal:
        raise
    except Exception:
        raise WireRequestRefusal("ERR_AGUI_UNREADABLE") from None
    return check_turn_request(plain_json_copy(produced))


def check_turn_request(value: Any) -> TurnRequest:
    """Check a turn request's JSON shape field by field and its ids' format and length; nothing else is trusted."""
    if not isinstance(value, dict):
        raise WireRequestRefusal("ERR_AGUI_NOT_OBJECT")
    for name in _WALKED_FIELDS:
        if name in value:
            check_json_value(value[name], name)
    thread_id = _req_id(value, "threadId", "threadId")
    run_id = _req_id(value, "runId", "runId")
    parent_run_id = _opt_id(value, "parentRunId", "parentRunId")
    messages = _messages(value)
    tools = _tools(value.get("tools"))
    context = _context(value.get("context"))
    state = value.get("state")
    if state == {}:
        state = None
    resume = _resume(value.get("resume"))
    return TurnRequest(
        thread_id=thread_id,
        run_id=run_id,
        parent_run_id=parent_run_id,
        messages=messages,
        tools=tools,
        context=context,
        state=state,
        resume=resume,
    )


def check_id(value: Any, at: str) -> str:
    """Refuse (by ``at``) anything but an id string of 1-128 characters from the id charset."""
    if not isinstance(value, str):
        raise WireRequestRefusal("ERR_AGUI_FIELD_TYPE", at)
    if len(value) > MAX_ID_LENGTH:
        raise WireRequestRefusal("ERR_AGUI_ID_TOO_LONG", at)
    if ID_PATTERN.fullmatch(value) is None:
        raise WireRequestRefusal("ERR_AGUI_ID_FORMAT", at)
    return value


def _opt_id(obj: dict[str, Any], key: str, at: str) -> str | None:
    value = obj.get(key)
    return None if value is None else check_id(value, at)


def _req_id(obj: dict[str, Any], key: str, at: str) -> str:
    value = _opt_id(obj, key, at)
    if value is None:
        raise WireRequestRefusal("ERR_AGUI_FIELD_MISSING", at)
    return value


def _opt_str(obj: dict[str, Any], key: str, at: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise WireRequestRefusal("ERR_AGUI_FIELD_TYPE", at)
    check_text(value, at)
    return value


def _req_str(obj: dict[str, Any], key: str, at: str) -> str:
    value = _opt_str(obj, key, at)
    if value is None:
        raise WireRequestRefusal("ERR_AGUI_FIELD_MISSING", at)
    return value


def _list(value: Any, at: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WireRequestRefusal("ERR_AGUI_FIELD_TYPE", at)
    return value


def _object(value: Any, at: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireRequestRefusal("ERR_AGUI_FIELD_TYPE", at)
    return value


def _messages(body: dict[str, Any]) -> tuple[UserMessageIn | ToolMessageIn | HistoryMessageIn, ...]:
    if "messages" not in body:
        raise WireRequestRefusal("ERR_AGUI_FIELD_MISSING", "messages")
    read = tuple(_message(raw, f"messages[{i}]") for i, raw in enumerate(_list(body["messages"], "messages")))
    seen: set[str] = set()
    for i, message in enumerate(read):
        if message.id in seen:
            raise WireRequestRefusal("ERR_AGUI_DUPLICATE_ID", f"messages[{i}].id")
        seen.add(message.id)
    return read


def _message(raw: Any, at: str) -> UserMessageIn | ToolMessageIn | HistoryMessageIn:
    obj = _object(raw, at)
    role = obj.get("role")
    if role is None:
        raise WireRequestRefusal("ERR_AGUI_FIELD_MISSING", f"{at}.role")
    if not isinstance(role, str):
        raise WireRequestRefusal("ERR_AGUI_FIELD_TYPE", f"{at}.role")
    if role in _INSTRUCTION_ROLES:
        raise WireRequestRefusal("ERR_AGUI_SYSTEM_MESSAGE", f"{at}.role")
    if role not in _READ_ROLES:
        raise WireRequestRefusal("ERR_AGUI_MESSAGE_ROLE", f"{at}.role")
    message_id = _req_id(obj, "id", f"{at}.id")
    if role == "user":
        return UserMessageIn(id=message_id, content=_content(obj, f"{at}.content"))
    if role == "tool":
        call_id = _req_id(obj, "toolCallId", f"{at}.toolCallId")
        content = _content(obj, f"{at}.content")
        return ToolMessageIn(
            id=message_id, tool_call_id=call_id, content=content, error=_opt_str(obj, "error", f"{at}.error")
        )
    if role == "assistant":
        _opt_str(obj, "content", f"{at}.content")
        for j, call in enumerate(_list(obj.get("toolCalls"), f"{at}.toolCalls")):
            call_at = f"{at}.toolCalls[{j}]"
            _req_id(_object(call, call_at), "id", f"{call_at}.id")
            function = _object(call.get("function"), f"{call_at}.function")
            _req_str(function, "name", f"{call_at}.function.name")
            _req_str(function, "arguments", f"{call_at}.function.arguments")
    elif role == "reasoning":
        _req_str(obj, "content", f"{at}.content")  # AG-UI: a reasoning message always carries its text
    return HistoryMessageIn(id=message_id, role=role)


def _content(obj: dict[str, Any], at: str) -> str | tuple[dict[str, Any], ...]:
    content = obj.get("content")
    if content is None:
        raise WireRequestRefusal("ERR_AGUI_FIELD_MISSING", at)
    if isinstance(content, str):
        check_text(content, at)
        return content
    if not isinstance(content, list):
        raise WireRequestRefusal("ERR_AGUI_FIELD_TYPE", at)
    parts: list[dict[str, Any]] = []
    for j, raw in enumerate(content):
        part = _object(raw, f"{at}[{j}]")
        if not isinstance(part.get("type"), str):
            raise WireRequestRefusal("ERR_AGUI_CONTENT", f"{at}[{j}].type")
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            raise WireRequestRefusal("ERR_AGUI_CONTENT", f"{at}[{j}].text")
        _check_part(part, f"{at}[{j}]")
        parts.append(part)
    return tuple(parts)


@functools.cache
def _part_validator() -> Any:
    from ag_ui.core import ContentPart
    from pydantic import TypeAdapter

    return TypeAdapter(ContentPart)


def _check_part(part: dict[str, Any], at: str) -> None:
    try:
        _part_validator().validate_python(part, strict=True)
    except Exception:
        raise WireRequestRefusal("ERR_AGUI_CONTENT", at) from None


def _tools(raw: Any) -> tuple[ToolOffer, ...]:
    offers: list[ToolOffer] = []
    names: set[str] = set()
    for i, item in enumerate(_list(raw, "tools")):
        at = f"tools[{i}]"
        obj = _object(item, at)
        name = _req_str(obj, "name", f"{at}.name")
        if len(name) > 64 or TOOL_NAME_PATTERN.fullmatch(name) is None:
            raise WireRequestRefusal("ERR_AGUI_TOOL_NAME", f"{at}.name")
        if name in names:
            raise WireRequestRefusal("ERR_AGUI_DUPLICATE_TOOL", f"{at}.name")
        names.add(name)
        description = _opt_str(obj, "description", f"{at}.description")
        offers.append(ToolOffer(name=name, description=description, parameters=obj.get("parameters")))
    return tuple(offers)


def _context(raw: Any) -> tuple[ContextItem, ...] | None:
    items: list[ContextItem] = []
    for i, item in enumerate(_list(raw, "context")):
        at = f"context[{i}]"
        obj = _object(item, at)
        description = _req_str(obj, "description", f"{at}.description")
        value = _req_str(obj, "value", f"{at}.value")
        items.append(ContextItem(description=description, value=value))
    return tuple(items) or None


def _resume(raw: Any) -> tuple[ResumeEntryIn, ...]:
    entries: list[ResumeEntryIn] = []
    seen: set[str] = set()
    for i, item in enumerate(_list(raw, "resume")):
        at = f"resume[{i}]"
        obj = _object(item, at)
        interrupt_id = _req_id(obj, "interruptId", f"{at}.interruptId")
        if interrupt_id in seen:
            raise WireRequestRefusal("ERR_AGUI_DUPLICATE_ID", f"{at}.interruptId")
        seen.add(interrupt_id)
        status = obj.get("status")
        if status is None:
            raise WireRequestRefusal("ERR_AGUI_FIELD_MISSING", f"{at}.status")
        if not isinstance(status, str) or status not in _RESUME_STATUSES:
            raise WireRequestRefusal("ERR_AGUI_FIELD_VALUE", f"{at}.status")
        entries.append(ResumeEntryIn(interrupt_id=interrupt_id, status=status, payload=obj.get("payload")))
    return tuple(entries)
