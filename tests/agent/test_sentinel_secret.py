"""A sentinel secret, given only under a redacted key, reaches no surface: live listeners, kept events, snapshots,
narrative, audit, reports, results and exceptions. (Checkpoints keep real values by design, and say so.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Agent, RunCheckpointError, ask_human, define_tool
from agentfootprint.audit import export_audit, to_jsonl
from agentfootprint.events import AgentEvent
from agentfootprint.explain import backtrack
from agentfootprint.providers import LLMRequest, mock

SECRET = "tok-7f3a9c2e51d4b8a0"


def _tools() -> list[Any]:
    def fetch(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"account": "acme", "api_key": args["api_key"], "note": f"key {args['api_key']} is active"}

    def rotate(args: dict[str, Any], ctx: Any) -> str:
        raise ValueError(f"cannot rotate {args['api_key']}")

    schema = {"type": "object", "properties": {"api_key": {"type": "string"}}, "required": ["api_key"]}
    return [
        define_tool(name="fetch_account", description="Fetch the account", input_schema=schema, execute=fetch),
        define_tool(name="rotate_key", description="Rotate the key", input_schema=schema, execute=rotate),
        ask_human,
    ]


def _script(req: LLMRequest) -> Any:
    done = {m.tool_call_id for m in req.messages if m.role == "tool"}
    if "f1" not in done:
        return {
            "content": f"Checking {SECRET} now.",
            "tool_calls": [
                {"id": "f1", "name": "fetch_account", "args": {"api_key": SECRET}},
                {"id": "r1", "name": "rotate_key", "args": {"api_key": SECRET}},
            ],
        }
    if "h1" not in done:
        return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": f"Rotate {SECRET} by hand?"}}]}
    return f"Done. Your key {SECRET} was checked; you said: {req.messages[-1].content}"


def _agent(provider: Any) -> Agent:
    return Agent.create(provider=provider, model="m").tools(_tools()).redact(keys=["api_key"]).keep_events().build()


def _everything(agent: Agent, live: list[AgentEvent], *extra: Any) -> str:
    snap = agent.last_snapshot()
    assert snap is not None
    parts = [
        json.dumps([e.model_dump(mode="json") for e in live]),
        json.dumps([e.model_dump(mode="json") for e in agent.last_events()]),
        snap.model_dump_json(),
        json.dumps([e.model_dump(mode="json") for e in agent.last_narrative()]),
        to_jsonl(export_audit(agent, payload_mode="bounded")),
        to_jsonl(export_audit(agent, payload_mode="verbatim")),
        json.dumps(agent.redaction_report()),
        str(backtrack(agent)),
        *(json.dumps(x, default=str) if not isinstance(x, str) else x for x in extra),
    ]
    return "\n".join(parts)


async def test_a_sentinel_secret_reaches_no_surface_including_live_listeners() -> None:
    agent = _agent(mock(respond=_script))
    live: list[AgentEvent] = []
    agent.on("*", live.append)  # every event, as it happens: also the token stream
    paused = await agent.run({"message": f"Please check my key {SECRET}", "api_key": SECRET})
    assert paused.status == "paused"
    assert paused.checkpoint is not None and SECRET in json.dumps(paused.checkpoint)  # real values, and it says so
    assert paused.checkpoint["contains_unredacted_values"] is True
    result = paused.model_dump(mode="json", exclude={"checkpoint"})
    assert SECRET not in _everything(agent, live, result)

    fresh = _agent(mock(respond=_script))
    live2: list[AgentEvent] = []
    fresh.on("*", live2.append)
    done = await fresh.resume(json.loads(json.dumps(paused.checkpoint)), f"yes, rotate {SECRET}")
    assert done.status == "completed"
    assert SECRET not in _everything(fresh, live2, done.model_dump(mode="json"))
    assert live and live2 and any(e.type.endswith("turn_start") for e in live)

    follow = await fresh.follow_up(f"and {SECRET} again?")
    assert SECRET not in _everything(fresh, live2, follow.model_dump(mode="json", exclude={"checkpoint"}))


async def test_a_crash_carrying_the_secret_in_its_message_is_scrubbed() -> None:
    calls = {"n": 0}

    def respond(req: LLMRequest) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            return {"tool_calls": [{"id": "f1", "name": "fetch_account", "args": {"api_key": SECRET}}]}
        raise RuntimeError(f"upstream rejected {SECRET}")

    agent = _agent(mock(respond=respond))
    live: list[AgentEvent] = []
    agent.on("*", live.append)
    with pytest.raises(RunCheckpointError) as err:
        await agent.run("check my account")
    shown = " ".join([str(err.value), repr(err.value), *map(str, err.value.args), *getattr(err.value, "__notes__", [])])
    assert SECRET not in shown
    assert SECRET not in _everything(agent, live)
