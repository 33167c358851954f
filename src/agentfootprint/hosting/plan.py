"""Plan one AG-UI turn (seed 001): a checked request against what the server holds for the bound conversation.

A page decides only this: the run's message, answers to the held pause, allow-listed tools, validated state."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentfootprint.hosting._ids import TOOL_NAME_PATTERN
from agentfootprint.hosting.refusal import HostingConfigError, WireRequestRefusal
from agentfootprint.hosting.request import ToolMessageIn, TurnRequest, UserMessageIn
from agentfootprint.identity import Identity, coerce_identity

__all__ = [
    "FrontendTool",
    "HeldPause",
    "HeldThread",
    "ResumeAnswer",
    "ThreadBinder",
    "ToolAnswer",
    "TurnPlan",
    "TurnRules",
    "UserTurn",
    "ValidationScope",
    "Validator",
    "bind_identity",
    "plan_turn",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HeldPause(_Frozen):
    """A paused run the server keeps: the frontend tool calls and interrupts it waits on, by the ids it handed out."""

    frontend_tool_call_ids: tuple[str, ...] = ()
    interrupt_ids: tuple[str, ...] = ()

    @property
    def waiting(self) -> bool:
        """Whether the pause waits on anything at all."""
        return bool(self.frontend_tool_call_ids or self.interrupt_ids)


class HeldThread(_Frozen):
    """What the server holds for the bound conversation: its stored messages (AG-UI JSON) and any held pause."""

    conversation: tuple[dict[str, Any], ...] = ()
    pause: HeldPause | None = None


class FrontendTool(_Frozen):
    """A frontend tool the app allow-lists: the name the page offers, and the app's own description and schema."""

    name: str
    description: str
    parameters: dict[str, Any] = {"type": "object", "properties": {}}


class UserTurn(_Frozen):
    """The run's message: the newest user message, as text plus (when sent as parts) its checked content parts."""

    id: str
    text: str
    parts: tuple[dict[str, Any], ...] = ()


class ToolAnswer(_Frozen):
    """A tool message answering a frontend tool call the held pause waits on."""

    tool_call_id: str
    message_id: str
    content: str | tuple[dict[str, Any], ...]
    error: str | None = None


class ResumeAnswer(_Frozen):
    """A resume entry answering an interrupt the held pause handed out."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None


class TurnPlan(_Frozen):
    """What a turn may do: run ``message``, or resume the held pause with ``tool_answers``/``resume``."""

    kind: Literal["message", "resume"]
    thread_id: str
    run_id: str
    parent_run_id: str | None = None
    identity: Identity | None = None
    message: UserTurn | None = None
    tool_answers: tuple[ToolAnswer, ...] = ()
    resume: tuple[ResumeAnswer, ...] = ()
    frontend_tools: tuple[FrontendTool, ...] = ()
    state: Any = None
    context: Any = None
    conversation: tuple[dict[str, Any], ...] = ()
    out_of_sync: bool = False
    """The page sent a history missing messages the thread holds (a stream it lost): it is sent a snapshot."""


@dataclass(frozen=True)
class ValidationScope:
    """What a state/context validator is told besides the value: the bound thread and identity, the headers."""

    thread_id: str
    identity: Identity | None
    headers: Mapping[str, str] = field(default_factory=dict)


Validator = Callable[[Any, ValidationScope], Any]
"""``validator(value, scope)`` → the value the agent may see; raise to refuse (422). Synchronous."""

ThreadBinder = Callable[[Any], Identity | Mapping[str, Any] | Awaitable[Identity | Mapping[str, Any] | None] | None]
"""``bind_thread(request)`` → the caller the app authenticated (or None: anonymous); sync or async."""


@dataclass(frozen=True)
class TurnRules:
    """The app's rules for planning: allow-listed frontend tools by name, and the state/context validators."""

    frontend_tools: Mapping[str, FrontendTool] = field(default_factory=dict)
    accept_state: Validator | None = None
    accept_context: Validator | None = None

    @classmethod
    def build(
        cls,
        *,
        frontend_tools: Iterable[FrontendTool | Mapping[str, Any] | Any] | None = None,
        accept_state: Validator | None = None,
        accept_context: Validator | None = None,
    ) -> TurnRules:
        """Rules from ``ag_ui_app`` options: tools as ``FrontendTool``, dicts, or ``agentfootprint`` ``Tool``s."""
        tools: dict[str, FrontendTool] = {}
        for item in frontend_tools or ():
            tool = _frontend_tool(item)
            if tool.name in tools:
                raise HostingConfigError(f"frontend tool {tool.name!r} is allow-listed twice")
            tools[tool.name] = tool
        for name, validator in (("accept_state", accept_state), ("accept_context", accept_context)):
            if validator is not None and not callable(validator):
                raise HostingConfigError(f"{name} must be callable")
        return cls(frontend_tools=tools, accept_state=accept_state, accept_context=accept_context)


def _frontend_tool(item: Any) -> FrontendTool:
    if isinstance(item, FrontendTool):
        tool = item
    elif isinstance(item, Mapping):
        tool = FrontendTool.model_validate(dict(item))
    elif hasattr(item, "name") and hasattr(item, "description") and hasattr(item, "input_schema"):
        tool = FrontendTool(name=item.name, description=item.description, parameters=dict(item.input_schema))
    else:
        raise HostingConfigError("a frontend tool must be a FrontendTool, a dict, or a Tool")
    if TOOL_NAME_PATTERN.fullmatch(tool.name) is None:
        raise HostingConfigError("a frontend tool name must be 1-64 characters from A-Z a-z 0-9 _ . -")
    return tool


async def bind_identity(binder: ThreadBinder | None, request: Any, thread_id: str | None) -> Identity:
    """The caller for this thread, from the host's ``bind_thread(request)`` (None: anonymous) — never the body."""
    bound: Any = None
    if binder is not None:
        bound = binder(request)
        if inspect.isawaitable(bound):
            bound = await bound
    identity = coerce_identity(bound)
    tenant = identity.tenant if identity is not None else None
    principal = identity.principal if identity is not None else None
    issuer = identity.issuer if identity is not None else None
    return Identity(tenant=tenant, principal=principal, conversation_id=thread_id, issuer=issuer)


def plan_turn(
    turn: TurnRequest,
    held: HeldThread,
    rules: TurnRules,
    *,
    identity: Identity | None = None,
    headers: Mapping[str, str] | None = None,
) -> TurnPlan:
    """Plan one checked turn against the held thread; raises ``WireRequestRefusal`` for what a page may not decide."""
    pause = held.pause if held.pause is not None and held.pause.waiting else None
    messages = turn.messages
    first_answer = len(messages)
    while first_answer > 0 and isinstance(messages[first_answer - 1], ToolMessageIn):
        first_answer -= 1
    answers = _tool_answers(messages, first_answer, pause)
    resume = _resume_answers(turn, pause)
    held_ids = {m.get("id") for m in held.conversation}
    message: UserTurn | None = None
    if pause is None:
        message = _run_message(turn, held_ids)
        kind: Literal["message", "resume"] = "message"
    else:
        _check_pause_answered(turn, pause, answers, held_ids)
        kind = "resume"
    frontend_tools = _allowed_tools(turn, rules)
    scope = ValidationScope(thread_id=turn.thread_id, identity=identity, headers=dict(headers or {}))
    state = None
    if turn.state is not None:
        if rules.accept_state is None:
            raise WireRequestRefusal("ERR_AGUI_STATE_NOT_ACCEPTED", "state")
        state = _validated(rules.accept_state, turn.state, scope, "ERR_AGUI_STATE_INVALID", "state")
    context = None
    if turn.context is not None:
        if rules.accept_context is None:
            raise WireRequestRefusal("ERR_AGUI_CONTEXT_NOT_ACCEPTED", "context")
        raw_context = [item.model_dump() for item in turn.context]
        context = _validated(rules.accept_context, raw_context, scope, "ERR_AGUI_CONTEXT_INVALID", "context")
    return TurnPlan(
        kind=kind,
        thread_id=turn.thread_id,
        run_id=turn.run_id,
        parent_run_id=turn.parent_run_id,
        identity=identity,
        message=message,
        tool_answers=answers,
        resume=resume,
        frontend_tools=frontend_tools,
        state=state,
        context=context,
        conversation=held.conversation,
        out_of_sync=not held_ids <= {getattr(m, "id", None) for m in messages},
    )


def _tool_answers(messages: tuple[Any, ...], first_answer: int, pause: HeldPause | None) -> tuple[ToolAnswer, ...]:
    pending = set(pause.frontend_tool_call_ids) if pause is not None else set()
    answers: list[ToolAnswer] = []
    seen: set[str] = set()
    for index in range(first_answer, len(messages)):
        tool_message: ToolMessageIn = messages[index]
        at = f"messages[{index}].toolCallId"
        if tool_message.tool_call_id not in pending:
            raise WireRequestRefusal("ERR_AGUI_TOOL_RESULT_NOT_HELD", at)
        if tool_message.tool_call_id in seen:
            raise WireRequestRefusal("ERR_AGUI_DUPLICATE_ID", at)
        seen.add(tool_message.tool_call_id)
        answers.append(
            ToolAnswer(
                tool_call_id=tool_message.tool_call_id,
                message_id=tool_message.id,
                content=tool_message.content,
                error=tool_message.error,
            )
        )
    return tuple(answers)


def _resume_answers(turn: TurnRequest, pause: HeldPause | None) -> tuple[ResumeAnswer, ...]:
    pending = set(pause.interrupt_ids) if pause is not None else set()
    answers: list[ResumeAnswer] = []
    for index, entry in enumerate(turn.resume):
        if entry.interrupt_id not in pending:
            raise WireRequestRefusal("ERR_AGUI_RESUME_NOT_HELD", f"resume[{index}].interruptId")
        answers.append(ResumeAnswer(interrupt_id=entry.interrupt_id, status=entry.status, payload=entry.payload))
    return tuple(answers)


def _run_message(turn: TurnRequest, held_ids: set[Any]) -> UserTurn:
    if not turn.messages:
        raise WireRequestRefusal("ERR_AGUI_NO_USER_MESSAGE", "messages")
    index = len(turn.messages) - 1
    newest = turn.messages[index]
    if not isinstance(newest, UserMessageIn):
        raise WireRequestRefusal("ERR_AGUI_NO_USER_MESSAGE", f"messages[{index}].role")
    if newest.id in held_ids:
        raise WireRequestRefusal("ERR_AGUI_MESSAGE_REPLAYED", f"messages[{index}].id")
    parts: tuple[dict[str, Any], ...] = ()
    if isinstance(newest.content, str):
        text = newest.content
    else:
        parts = newest.content
        text = "\n".join(str(p["text"]) for p in parts if p.get("type") == "text")
    if not text.strip() and not any(p.get("type") != "text" for p in parts):
        raise WireRequestRefusal("ERR_AGUI_EMPTY_MESSAGE", f"messages[{index}].content")
    return UserTurn(id=newest.id, text=text, parts=parts)


def _check_pause_answered(
    turn: TurnRequest, pause: HeldPause, answers: tuple[ToolAnswer, ...], held_ids: set[Any]
) -> None:
    if turn.messages:
        index = len(turn.messages) - 1
        newest = turn.messages[index]
        if isinstance(newest, UserMessageIn) and newest.id not in held_ids:
            raise WireRequestRefusal("ERR_AGUI_PAUSE_PENDING", f"messages[{index}]")
    if not answers and not turn.resume:
        raise WireRequestRefusal("ERR_AGUI_PAUSE_PENDING", "resume" if pause.interrupt_ids else "messages")
    if set(pause.frontend_tool_call_ids) - {a.tool_call_id for a in answers}:
        raise WireRequestRefusal("ERR_AGUI_PAUSE_INCOMPLETE", "messages")
    if set(pause.interrupt_ids) - {entry.interrupt_id for entry in turn.resume}:
        raise WireRequestRefusal("ERR_AGUI_PAUSE_INCOMPLETE", "resume")


def _allowed_tools(turn: TurnRequest, rules: TurnRules) -> tuple[FrontendTool, ...]:
    """The allow-listed tools the page offers, as the app defines them; an unlisted offer never reaches the model."""
    return tuple(rules.frontend_tools[offer.name] for offer in turn.tools if offer.name in rules.frontend_tools)


def _validated(validator: Validator, value: Any, scope: ValidationScope, code: str, at: str) -> Any:
    try:
        result = validator(value, scope)
    except WireRequestRefusal:
        raise
    except Exception:
        raise WireRequestRefusal(code, at) from None
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if callable(close):
            close()
        raise HostingConfigError(f"the {at} validator must be synchronous")
    return result
