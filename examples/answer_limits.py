"""What travels with an answer: the limits tools declared, negative statements, answer checks and the standing.

Runs offline (scripted model). Prints the answer with its appended limits and what each surface reads back.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from agentfootprint import Agent
from agentfootprint.extensions import answer_check
from agentfootprint.providers import mock
from agentfootprint.tools import absent, coverage, define_tool

health = define_tool(
    name="replication_health",
    description="Replication health of the storage arrays",
    input_schema={"type": "object", "properties": {}},
    execute=lambda args, ctx: coverage(
        {"healthy": True},
        checked=["SRDF pair state on all 4 arrays"],
        cannot_cover=[{"what": "host-side multipathing", "why": "no collector on the ESX hosts"}],
    ),
)
flogi = define_tool(
    name="flogi",
    description="FLOGI entries on a port",
    input_schema={"type": "object", "properties": {"port": {"type": "string"}}},
    execute=lambda args, ctx: absent(f"FLOGI entries on port {args.get('port')}", checked=["the live fcns database"]),
)


def calls(*names: str) -> list[object]:
    return [{"tool_calls": [{"id": f"c{i}", "name": n, "args": {"port": "7"}}]} for i, n in enumerate(names, 1)]


class Verdict(BaseModel):
    healthy: bool


async def main() -> None:
    model = mock(replies=[*calls("replication_health", "flogi"), "Replication is healthy; nothing on port 7."])
    agent = (
        Agent.create(provider=model, model="m")
        .tools([health, flogi])
        .limits_travel_with_the_answer()
        .negative_claims()
        .answer_validation(answer_check("cites_a_tool", lambda view: bool(view.tool_results) or "no tool ran"))
        .answer_layer()
        .build()
    )
    result = await agent.run("Is replication healthy, and is anything on port 7?")
    print(result.answer)
    print("negatives:", [s.statement for s in agent.answer_negatives().statements])
    print("checks:", [(c.id, c.passed) for c in agent.answer_validation().checks])
    print("standing:", agent.answer_standing().standing)

    typed = (
        Agent.create(provider=mock(replies=[*calls("replication_health"), '{"healthy": true}']), model="m")
        .tool(health)
        .output_schema(Verdict)
        .limits_travel_with_the_answer()
        .build()
    )
    print("typed:", await typed.run_typed("Healthy?"))
    print("cannot cover:", [item.what for item in typed.answer_coverage().cannot_cover])


if __name__ == "__main__":
    asyncio.run(main())
