"""Scripted mock runs that emit most of the catalogue: each event as ``{"type", "payload"}`` JSON, for comparing the
JSON form across changes (``golden_events.json`` holds what these runs emitted before the catalogue existed)."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint import Agent, Conditional, Loop, Parallel, Sequence, ask_human, define_tool
from agentfootprint.context.factories import define_fact, define_skill
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock


async def _weather(args: dict[str, Any], ctx: Any) -> str:
    return f"sunny in {args['city']}"


async def _broken(args: dict[str, Any], ctx: Any) -> str:
    raise ValueError("the lookup service is down")


WEATHER = define_tool(
    name="weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    execute=_weather,
)
BROKEN = define_tool(
    name="broken", description="Always raises", input_schema={"type": "object", "properties": {}}, execute=_broken
)


def _tool_then_answer(request: LLMRequest) -> Any:
    if request.messages[-1].role == "tool":
        return "It is sunny in Paris."
    return {"tool_calls": [{"id": "call_1", "name": "weather", "args": {"city": "Paris"}}]}


def _echo(tag: str) -> Agent:
    return Agent.create(provider=mock(respond=lambda r: f"{tag}({r.messages[-1].content})"), model="m").build()


def _shape(events: list[AgentEvent]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in events:
        data: dict[str, Any] = json.loads(e.model_dump_json())
        out.append({"type": data["type"], "payload": data["payload"]})
    return out


async def _listened(runner: Any, *messages: str, resume: Any = None) -> list[dict[str, Any]]:
    seen: list[AgentEvent] = []
    runner.on("*", seen.append)
    result = None
    for message in messages:
        result = await runner.run(message)
    if resume is not None and result is not None and result.status == "paused":
        await runner.resume(result.checkpoint, resume)
    return _shape(seen)


async def scripted_events() -> dict[str, list[dict[str, Any]]]:
    """Each scenario's events (type and payload only: ids and times are left out)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    tool_turn = (
        Agent.create(provider=mock(respond=_tool_then_answer), model="m", max_iterations=5)
        .system("You are a weather assistant.")
        .tool(WEATHER)
        .fact(define_fact(id="units", data="Use Celsius."))
        .skill(define_skill(id="travel", description="Travel advice", body="Suggest an umbrella."))
        .context_budget(system_prompt=10)
        .pricing({"*": {"input": 1.0, "output": 2.0}})
        .cost_budget(0.000001)
        .build()
    )
    runs["tool_turn"] = await _listened(tool_turn, "What is the weather in Paris?")

    skilled = (
        Agent.create(
            provider=mock(
                replies=[
                    {"tool_calls": [{"id": "s1", "name": "read_skill", "args": {"id": "travel"}}]},
                    {"tool_calls": [{"id": "w1", "name": "weather", "args": {"city": "Paris"}}]},
                    {"tool_calls": [{"id": "w2", "name": "weather", "args": {"city": "Paris"}}]},
                    "Sunny; take an umbrella anyway.",
                ]
            ),
            model="m",
        )
        .tool(WEATHER)
        .skill(define_skill(id="travel", description="Travel advice", body="Suggest an umbrella."))
        .build()
    )
    runs["skill_repeat"] = await _listened(skilled, "Trip to Paris?")

    looping = (
        Agent.create(
            provider=mock(respond=lambda r: {"tool_calls": [{"id": "c", "name": "weather", "args": {"city": "X"}}]}),
            model="m",
            max_iterations=2,
        )
        .tool(WEATHER)
        .tool(BROKEN)
        .window(max_turns=1)
        .build()
    )
    runs["exhausted"] = await _listened(looping, "loop forever", "again")

    raising = (
        Agent.create(
            provider=mock(replies=[{"tool_calls": [{"id": "b1", "name": "broken", "args": {}}]}, "gave up"]),
            model="m",
        )
        .tool(BROKEN)
        .build()
    )
    runs["tool_raised"] = await _listened(raising, "try it")

    asking = (
        Agent.create(
            provider=mock(
                replies=[
                    {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "Which city?"}}]},
                    "Paris it is.",
                ]
            ),
            model="m",
        )
        .tool(ask_human)
        .build()
    )
    runs["pause_resume"] = await _listened(asking, "weather please", resume="Paris")

    pipeline = Sequence.create("pipeline").step("draft", _echo("draft")).step("edit", _echo("edit")).build()
    runs["sequence"] = await _listened(pipeline, "a note")
    fan = (
        Parallel.create("fan")
        .branch("a", _echo("a"))
        .branch("b", _echo("b"))
        .merge_with(lambda r: " | ".join(r.values()))
        .build()
    )
    runs["parallel"] = await _listened(fan, "hello")
    loop = Loop.create("loop").repeat(_echo("again")).until(lambda a: a.count("again") >= 2).times(3).build()
    runs["loop"] = await _listened(loop, "x")
    cond = (
        Conditional.create("cond").when("short", lambda m: len(m) < 5, _echo("s")).otherwise("long", _echo("l")).build()
    )
    runs["conditional"] = await _listened(cond, "hi")
    return runs
