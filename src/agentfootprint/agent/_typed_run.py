"""Typed output on an agent: a run whose answer is validated against the output schema (asking again with
follow-ups when told to), and an answer parsed the same way, falling through to ``.output_fallback()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from agentfootprint.agent._options import read_options
from agentfootprint.agent._output import OutputContract, OutputFallback, parse_output, retries_spent_of, settle
from agentfootprint.agent._run_input import normalize_run_input
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import NoOutputSchemaError, OutputSchemaError

if TYPE_CHECKING:
    from agentfootprint.agent.agent import Agent


def output_fallback(config: AgentConfig) -> OutputFallback | None:
    """The ``.output_fallback()`` this agent was built with, or None."""
    contract = config.extension(OutputContract.name)
    return contract.fallback if isinstance(contract, OutputContract) else None


def output_schema(agent: Agent, door: str, schema: Any = None) -> type[BaseModel]:
    """``schema``, else the agent's output schema; refused by ``door`` when there is neither."""
    model = cast("type[BaseModel] | None", schema or agent.config.output_schema)
    if model is None:
        raise NoOutputSchemaError(door, agent.name)
    return model


async def run_typed(agent: Agent, input: Any, schema: Any, retries: int | None, kwargs: Any) -> BaseModel:
    """``Agent.run_typed``: run, then validate the answer; ``retries`` follow-ups ask again, then the fallback."""
    door = f"{agent.runner_name}.run_typed"
    normalize_run_input(input, door)  # the run-input door first: nothing runs for an input that is no message
    model = output_schema(agent, door, schema)
    budget = 0 if retries is None else retries
    result = await agent.run(input, **kwargs)
    while True:
        if result.status != "completed":
            raise OutputSchemaError(
                f"{door}: the run paused before producing an answer; use run() for pausing agents", issues=[]
            )
        try:
            return parse_output(model, result.answer or "")
        except OutputSchemaError as err:
            fallback = output_fallback(agent.config)
            record = result.record
            if budget <= 0 and fallback is not None:
                spent = retries_spent_of(record.committed_state() if record is not None else None)
                return await settle(model, result.answer or "", err, fallback, agent._emit_now, spent)
            if budget <= 0:
                raise
            budget -= 1
            listed = "; ".join(f"{i['path']}: {i['problem']}" for i in err.issues)
            result = await agent._continue(  # this run's own conversation, whatever else the agent runs
                record,
                f"Your answer did not match the required JSON schema ({listed}). Reply with JSON only.",
                None,
                read_options(door, {}),
            )


async def parse_output_async(agent: Agent, raw: str) -> BaseModel:
    """``Agent.parse_output_async``: ``raw`` validated, else (with a fallback) the fallback, then the canned value."""
    schema = output_schema(agent, "Agent.parse_output_async")
    try:
        return parse_output(schema, raw)
    except OutputSchemaError as err:
        fallback = output_fallback(agent.config)
        if fallback is None:
            raise
        last_raw = agent._last_raw
        last = (last_raw or {}).get("answer")
        spent = retries_spent_of(last_raw) if isinstance(raw, str) and raw == last else None
        return await settle(schema, raw if isinstance(raw, str) else "", err, fallback, agent._emit_now, spent)
