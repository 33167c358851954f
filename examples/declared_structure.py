"""Declared structure: a recipe, a tool-choice classifier, an ontology, claims checked against settled facts, and
the script that produced an answer travelling with it. Runs offline (scripted model)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from agentfootprint import Agent
from agentfootprint.agent import OptionUnavailableError, define_agent_recipe
from agentfootprint.providers import mock
from agentfootprint.tools import define_tool, script, semantic


def make_tool(name: str, result: object) -> object:
    return define_tool(
        name=name, description=name, input_schema={"type": "object", "properties": {}}, execute=lambda a, c: result
    )


screen = make_tool("whats_here", semantic({"screen": 2}, facts=[{"entity": "screen2", "nav": 2}]))
weather = make_tool("weather", "sunny")
calc = make_tool("calc", script(42, code="print(6 * 7)"))
house = define_agent_recipe(id="house-style", version="1.0.0", configure=lambda b: b.system("Be brief."))


class Screen(BaseModel):
    nav_count: int


def call(name: str) -> dict[str, object]:
    return {"tool_calls": [{"id": "c1", "name": name, "args": {}}]}


async def main() -> None:
    model = mock(replies=[call("whats_here"), '{"nav_count": 5}'])
    agent = (
        Agent.create(provider=model, model="m")
        .recipe(house)
        .tools([screen, weather])
        .tool_choice(lambda message, names: [n for n in names if n != "weather"])
        .ontology(
            {
                "entities": {"screen": "a page of the app", "nav": "a navigation item"},
                "relations": [{"from": "screen", "to": "nav", "name": "shows", "via": "whats_here"}],
            }
        )
        .output_schema(Screen)
        .claims({"nav_count": {"entity": "screen2", "field": "nav"}})
        .build()
    )
    result = await agent.run("How many nav items are on this screen?")
    print("offered:", [t.name for t in model.requests[0].tools])
    print("recipes:", result.extensions["declared_structure"]["recipes"])
    check = agent.claim_checks()[0]
    print("claim:", check["claim"], check["verdict"], "claimed", check["claimed"], "settled", check["settled"])

    scripted = (
        Agent.create(provider=mock(replies=[call("calc"), "It is 42."]), model="m")
        .tool(calc)
        .script_travels_with_the_answer()
        .build()
    )
    print((await scripted.run("6 times 7?")).answer)
    try:
        Agent.create(provider=mock(reply="x"), model="m").script_travels_with_the_answer(code="match")
    except OptionUnavailableError as err:
        print("refused:", err.code, err.option)


if __name__ == "__main__":
    asyncio.run(main())
