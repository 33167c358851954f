"""What the live-server tests serve: ``agui_served:make`` (for ``serve``) and ``agui_served:build_app`` (uvicorn).

The mock answers, asks first ("ask me"), calls a backend tool ("weather"), or a frontend tool ("pick a color")."""

from __future__ import annotations

import os
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.hosting import FrontendTool, ValidationScope, ag_ui_app, sqlite_sessions
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, mock

SECRET = "sk-live-4f9a2b7c"
"""A value the served agent redacts: it must never come back in a recording."""

PICK_COLOR = FrontendTool(
    name="pick_color",
    description="Ask the user to pick a color in the page.",
    parameters={"type": "object", "properties": {"palette": {"type": "string"}}},
)


async def _weather(args: dict[str, Any], ctx: Any) -> str:
    return f"sunny in {args.get('city', 'Paris')}"


WEATHER = define_tool(
    name="weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    execute=_weather,
)


def _respond(request: LLMRequest) -> str | dict[str, object]:
    last = request.messages[-1]
    if last.role == "tool":
        if last.tool_call_id == "w-1":
            return f"It is {last.content}."
        return f"You chose {last.content}."
    if last.content == "ask me":
        return {"tool_calls": [{"id": "ask-1", "name": "ask_human", "args": {"question": "Tea or coffee?"}}]}
    if "weather" in last.content:
        return {"tool_calls": [{"id": "w-1", "name": "weather", "args": {"city": "Paris"}}]}
    if "pick a color" in last.content:
        return {"tool_calls": [{"id": "fc-1", "name": "pick_color", "args": {"palette": "warm"}}]}
    return "Hello from uvicorn, streamed word by word."


PROVIDER = mock(respond=_respond)


def make() -> Agent:
    """One agent per turn on the shared mock."""
    return (
        Agent.create(provider=PROVIDER, model="mock-model")
        .system("You are the served test agent.")
        .tools([ask_human, WEATHER])
        .redact(patterns=[r"sk-live-[0-9a-f]+"])
        .build()
    )


def _bind(request: Request) -> Identity | None:
    user = request.headers.get("x-test-user")
    return Identity(tenant="test", principal=user) if user else None


def _state(value: Any, scope: ValidationScope) -> Any:
    if not isinstance(value, dict) or set(value) - {"color", "count"}:
        raise ValueError("state may carry color and count only")
    return value


def build_app() -> Starlette:
    """The app under test (``uvicorn agui_served:build_app --factory``): SQLite at $AGUI_DB, callers by header."""
    db = os.environ.get("AGUI_DB")
    return ag_ui_app(
        make,
        sessions=sqlite_sessions(db) if db else None,
        frontend_tools=[PICK_COLOR],
        accept_state=_state,
        bind_thread=_bind,
    )
