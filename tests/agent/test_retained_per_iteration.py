"""The growth budget's guard, in objects (no clock): a tool-loop run keeps at most 70 GC-tracked objects per iteration
once it returns (its record, its final state and the caller's copies). CPython considers a full collection after
~70,000 new tracked objects: past ~80 per iteration the bench's 800-iteration run paid for one inside its timing."""

from __future__ import annotations

import gc
from typing import Any

from agentfootprint import Agent, define_tool
from agentfootprint.providers import LLMRequest, mock

BUDGET = 70


def _agent(iterations: int) -> Agent:
    def respond(request: LLMRequest) -> Any:
        k = (len(request.messages) + 1) // 2
        if k >= iterations:
            return f"finished after {k} iterations"
        return {"tool_calls": [{"id": f"call_{k}", "name": "step", "args": {"n": k}}]}

    step = define_tool(
        name="step",
        description="Do one step of the job",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        execute=lambda args, ctx: f"step {args['n']} done",
    )
    return (
        Agent.create(provider=mock(respond=respond, record_requests=False), model="m", max_iterations=iterations)
        .system("You do a job one step at a time.")
        .tool(step)
        .build()
    )


async def _kept(iterations: int) -> tuple[Agent, int]:
    gc.collect()
    before = {id(o) for o in gc.get_objects()}
    agent = _agent(iterations)
    result = await agent.run("Do the job, one step at a time.")
    assert result.iterations == iterations
    gc.collect()
    return agent, sum(1 for o in gc.get_objects() if id(o) not in before)


async def test_a_tool_loop_keeps_at_most_the_budget_of_tracked_objects_per_iteration() -> None:
    await _kept(10)  # warm: first-use caches are not the run's
    short, few = await _kept(40)
    long, many = await _kept(160)
    per_iteration = (many - few) / 120
    assert per_iteration <= BUDGET, f"{per_iteration:.1f} tracked objects retained per iteration (budget {BUDGET})"
    assert short.stopped_early() is None and long.stopped_early() is None
