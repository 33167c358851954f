"""Scripted agents shared by the composition tests (offline, deterministic)."""

from __future__ import annotations

from typing import Any

from agentfootprint import Agent, ask_human, define_fact, define_tool
from agentfootprint.providers import LLMRequest, mock


def echo(name: str, *, fact: str | None = None) -> Agent:
    """Answers ``name(<its message>)``; with ``fact``, carries a fact of that id."""

    def respond(req: LLMRequest) -> str:
        user = next(m.content for m in req.messages if m.role == "user")
        return f"{name}({user})"

    builder = Agent.create(provider=mock(respond=respond), model="m", name=name)
    if fact is not None:
        builder = builder.fact(define_fact(id=fact, data=f"{fact} says hello"))
    return builder.build()


def asker(name: str = "asker", question: str = "Which order?") -> Agent:
    """Asks a person ``question`` through ask_human, then answers ``order <the answer>``."""

    def respond(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": question}}]}
        return f"order {req.messages[-1].content}"

    return Agent.create(provider=mock(respond=respond), model="m", name=name).tool(ask_human).build()


def witness(name: str, seen: list[tuple[str, Any]]) -> Agent:
    """Calls a tool that records the run id and identity it sees, then answers."""

    def who(args: dict[str, Any], ctx: Any) -> str:
        seen.append((ctx.run_id, ctx.identity))
        return "ok"

    tool = define_tool(name="who", description="who am I serving", input_schema={"type": "object"}, execute=who)

    def respond(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": f"{name}-w", "name": "who", "args": {}}]}
        return f"{name} done"

    return Agent.create(provider=mock(respond=respond), model="m", name=name).tool(tool).build()
