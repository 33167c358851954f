"""Agent factories the scale tests name as ``tests.scale.factories:<name>`` (importable in Ray workers too)."""

from __future__ import annotations

import re
from typing import Any

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.providers import LLMRequest, mock

NUMBERS = re.compile(r"(-?\d+) plus (-?\d+)")


def _calculator(req: LLMRequest) -> Any:
    """Adds with the tool when it has one, else guesses (off by one); greets the tenant the fact names."""
    last = req.messages[-1]
    question = next(m.content for m in req.messages if m.role == "user")
    found = NUMBERS.search(question)
    if found is None:
        return "I only add numbers."
    if last.role != "tool" and any(t.name == "add" for t in req.tools):
        a, b = found.groups()
        return {"tool_calls": [{"id": "add-1", "name": "add", "args": {"a": int(a), "b": int(b)}}]}
    total = last.content if last.role == "tool" else str(int(found[1]) + int(found[2]) + 1)
    polite = "Kindly: " if "be polite" in req.system_prompt else ""
    return f"{polite}The sum is {total}."


def calculator() -> Agent:
    """A fresh calculator agent on its own mock provider (one tool, one fact)."""
    add = define_tool(
        name="add",
        description="Add two integers.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        execute=lambda args, ctx: str(args["a"] + args["b"]),
    )
    return (
        Agent.create(provider=mock(respond=_calculator), model="mock-calc", max_iterations=3, name="calculator")
        .system("You add numbers.")
        .tool(add)
        .fact(define_fact(id="politeness", data="Always be polite."))
        .build()
    )


def broken() -> Agent:
    """A factory that fails with a secret in its message (the outcome must not carry it)."""
    raise RuntimeError("could not reach the model: api_key=sk-live-abcdef123456 rejected")


def not_an_agent() -> Any:
    """A factory that returns the wrong thing."""
    return 42
