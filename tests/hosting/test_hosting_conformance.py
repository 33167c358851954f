"""Conformance: every stream the live server sends passes ``ag-ui-validate`` (core + transport) with zero warnings.

Each scenario is POSTed by the validator's own HTTP transport to uvicorn on 127.0.0.1; the events are also checked
against the official ``ag-ui-protocol`` models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

validate = pytest.importorskip("ag_ui_validate.transport", reason="ag-ui-validate is not installed")
pytest.importorskip("httpx", reason="ag-ui-validate's HTTP transport needs httpx")

from ag_ui.core import Event  # noqa: E402
from ag_ui_validate.cli_args import decide_exit_code  # noqa: E402
from ag_ui_validate.report.pretty import format_diagnostic_line  # noqa: E402
from ag_ui_validate.types import ValidatorOptions  # noqa: E402

EVENT = TypeAdapter(Event)
# AGUI208 (info): a tool call's parent assistant message carried no text, so it was never streamed; the id is still
# the one the server stores the call under. AGUI902 (info): events carry no optional timestamp.
ALLOWED_INFO = {"AGUI208", "AGUI902"}


def _input(thread: str, run: str, *messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": run, "messages": list(messages), **fields}


def _user(mid: str, content: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": content}


async def _validated(base: str, payload: dict[str, Any], features: list[str] | None = None) -> list[dict[str, Any]]:
    """POST ``payload`` through the validator's transport; fail on any error or warning; the events, parsed."""
    raw: list[str] = []
    options = validate.TransportOptions(
        validator=ValidatorOptions(features=features) if features else None,
        input=payload,
        timeout_ms=30_000,
        on_event=lambda text, _: raw.append(text),
    )
    result = await validate.validate_endpoint(f"{base}/agui", options)
    report = result.report
    lines = [format_diagnostic_line(d, color=False) for d in report.diagnostics]
    assert result.status == 200 and result.transport_error is None
    assert decide_exit_code(report.summary, 0) == 0, "\n".join(lines)
    assert report.summary.errors == 0 and report.summary.warnings == 0, "\n".join(lines)
    assert {d.rule for d in report.diagnostics} <= ALLOWED_INFO, "\n".join(lines)
    events = [json.loads(text) for text in raw]
    for event in events:
        EVENT.validate_python(event)  # the official models read every event
    return events


async def test_a_text_turn_is_conformant(live_agui: str) -> None:
    events = await _validated(live_agui, _input("conf-text", "r1", _user("u1", "hi")))
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"


async def test_a_backend_tool_call_turn_is_conformant(live_agui: str) -> None:
    events = await _validated(live_agui, _input("conf-tool", "r1", _user("u1", "weather please")))
    kinds = [e["type"] for e in events]
    assert kinds.index("TOOL_CALL_START") < kinds.index("TOOL_CALL_END") < kinds.index("TOOL_CALL_RESULT")


async def test_an_interrupt_and_its_resume_are_conformant(live_agui: str) -> None:
    ask = _input("conf-ask", "r1", _user("u1", "ask me"))
    events = await _validated(live_agui, ask, features=["human-in-the-loop"])
    (interrupt,) = events[-1]["outcome"]["interrupts"]
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "tea"}]
    events = await _validated(live_agui, {**ask, "runId": "r2", "resume": resume}, features=["human-in-the-loop"])
    assert events[-1]["outcome"] == {"type": "success"}


async def test_a_frontend_tool_call_and_its_answer_are_conformant(live_agui: str) -> None:
    tools = [{"name": "pick_color", "description": "page's words", "parameters": {}}]
    first = _input("conf-front", "r1", _user("u1", "pick a color"), tools=tools)
    events = await _validated(live_agui, first)
    assert events[-1]["outcome"]["pendingToolCallIds"] == ["fc-1"]
    call = {"id": "fc-1", "type": "function", "function": {"name": "pick_color", "arguments": "{}"}}
    answer = _input(
        "conf-front",
        "r2",
        _user("u1", "pick a color"),
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": "fc-1", "content": "blue"},
        tools=tools,
    )
    events = await _validated(live_agui, answer)
    assert events[-1]["outcome"] == {"type": "success"}


async def test_a_turn_with_state_is_conformant(live_agui: str) -> None:
    payload = _input("conf-state", "r1", _user("u1", "hi"), state={"color": "red"})
    events = await _validated(live_agui, payload, features=["shared-state"])
    assert [e for e in events if e["type"] == "STATE_SNAPSHOT"] == [
        {"type": "STATE_SNAPSHOT", "snapshot": {"color": "red"}}
    ]
