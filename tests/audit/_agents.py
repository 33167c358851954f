"""Real agents for audit and OTel tests: a lookup tool that echoes a redacted field, and ask_human."""

from __future__ import annotations

from typing import Any

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import Tool

SECRET = "SENTINEL-SSN-4417-XQ"
SCHEMA = {"type": "object", "properties": {"ssn": {"type": "string"}}, "required": ["ssn"]}


class Recorder:
    """What the tool and the model really received (they must get the real value)."""

    def __init__(self) -> None:
        self.tool_args: list[dict[str, Any]] = []
        self.requests: list[LLMRequest] = []


def lookup_tool(rec: Recorder, *, fail: bool = False) -> Tool:
    def execute(args: dict[str, Any], ctx: Any) -> Any:
        rec.tool_args.append(dict(args))
        if fail:
            raise RuntimeError("lookup backend down")
        return {"ssn": args["ssn"], "status": "active", "note": f"record for {args['ssn']}"}

    return define_tool(name="lookup", description="Look a customer up by SSN.", input_schema=SCHEMA, execute=execute)


def scripted(rec: Recorder, replies: list[Any]) -> Any:
    """A mock provider that records each request and answers from ``replies`` in order."""
    queue = list(replies)

    def respond(request: LLMRequest) -> Any:
        rec.requests.append(request)
        return queue.pop(0)

    return mock(respond=respond)


def lookup_then_answer() -> list[Any]:
    """Two model calls, one tool call: the model passes the secret as an argument and repeats it in its answer."""
    return [
        {"tool_calls": [{"id": "call-1", "name": "lookup", "args": {"ssn": SECRET}}]},
        f"Customer {SECRET} is active.",
    ]


def lookup_agent(
    rec: Recorder, replies: list[Any] | None = None, *, keep_events: bool = True, fail: bool = False, **create: Any
) -> Agent:
    builder = Agent.create(provider=scripted(rec, replies or lookup_then_answer()), model="m-1", **create)
    builder = builder.tool(lookup_tool(rec, fail=fail)).redact(keys=["ssn"])
    return (builder.keep_events() if keep_events else builder).build()


def asking_agent(rec: Recorder, replies: list[Any], *, keep_events: bool = True) -> Agent:
    builder = Agent.create(provider=scripted(rec, replies), model="m-1").tool(lookup_tool(rec)).tool(ask_human)
    builder = builder.redact(keys=["ssn"])
    return (builder.keep_events() if keep_events else builder).build()


def lookup_then_ask() -> list[Any]:
    """Leg one: look the secret up, then ask a person; leg two (after resume): answer repeating the secret."""
    return [
        {"tool_calls": [{"id": "call-1", "name": "lookup", "args": {"ssn": SECRET}}]},
        {"tool_calls": [{"id": "ask-1", "name": "ask_human", "args": {"question": "Refund this customer?"}}]},
    ]


def after_resume() -> list[Any]:
    return [f"Refunded customer {SECRET}."]
