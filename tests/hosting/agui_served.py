"""What the live-server tests serve: ``agui_served:make`` (for ``serve``) and ``agui_served:build_app`` (uvicorn).

The mock answers, asks first ("ask me"), calls a backend tool ("weather"), a frontend tool ("pick a color"), or
never answers ("hang": the turn runs until the host dies)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.hosting import (
    FrontendTool,
    ValidationScope,
    ag_ui_app,
    jwt_identity,
    open_sessions,
)
from agentfootprint.hosting._body import DEFAULT_MAX_BODY_BYTES
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, mock

JWT_ISSUER = "https://login.example.test/"
JWT_AUDIENCE = "agent-api"
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


async def _respond(request: LLMRequest) -> str | dict[str, object]:
    last = request.messages[-1]
    if last.content == "hang":  # a turn that runs until the host is killed
        await asyncio.Event().wait()
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
    """The app under test (``uvicorn agui_served:build_app --factory``): the store at $AGUI_DB (a SQLite path or a
    PostgreSQL DSN; memory without), callers by header; $AGUI_LIMITS (JSON), $AGUI_MAX_MESSAGE_BYTES and
    $AGUI_MAX_BODY_BYTES set the limits; with $AGUI_JWKS_URL, callers are bearer tokens verified against it."""
    env = os.environ
    limits = json.loads(env["AGUI_LIMITS"]) if "AGUI_LIMITS" in env else None
    binder: Any = _bind
    if "AGUI_JWKS_URL" in env:  # bearer tokens; a request without one is a guest
        binder = jwt_identity(
            env["AGUI_JWKS_URL"], issuer=JWT_ISSUER, audience=JWT_AUDIENCE, optional=True, min_refresh_seconds=0
        )
    max_message = int(env["AGUI_MAX_MESSAGE_BYTES"]) if "AGUI_MAX_MESSAGE_BYTES" in env else None
    return ag_ui_app(
        make,
        sessions=open_sessions(env.get("AGUI_DB")),
        frontend_tools=[PICK_COLOR],
        accept_state=_state,
        bind_thread=binder,
        limits=limits,
        max_message_bytes=max_message,
        max_body_bytes=int(env.get("AGUI_MAX_BODY_BYTES", str(DEFAULT_MAX_BODY_BYTES))),
    )
