"""An answer with a contract: judged in the loop, re-asked once, and a typed read that never fails.

Runs offline (scripted model). Prints what each surface says about the answer's contract.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from agentfootprint import Agent, OutputSchemaError
from agentfootprint.providers import mock


class Refund(BaseModel):
    amount: int
    reason: str


async def main() -> None:
    # 1. The loop judges every final answer and re-asks once with the validator's report.
    model = mock(replies=['{"amount": "thirty"}', '{"amount": 30, "reason": "late delivery"}'])
    agent = Agent.create(provider=model, model="m").output_schema(Refund, retries=1).build()
    result = await agent.run("Refund order A-1001?")
    print("answer:", result.answer, "| model calls:", model.calls)
    print("unmet:", agent.output_contract_unmet())

    # 2. With retries=0 the first answer is the only one; run() returns it, the contract says how it failed.
    prose = Agent.create(provider=mock(reply="Sure! 30 dollars."), model="m").output_schema(Refund).build()
    await prose.run("Refund order A-1001?")
    unmet = prose.output_contract_unmet()
    assert unmet is not None
    print("unmet:", unmet.stage, unmet.attempts, unmet.retries_spent)
    try:
        prose.parse_output("Sure! 30 dollars.")
    except OutputSchemaError as err:
        print("parse_output:", err.code, err.stage, "raw kept:", err.raw_output == "Sure! 30 dollars.")

    # 3. primary -> fallback -> canned: a typed read that never raises.
    safe = (
        Agent.create(provider=mock(reply="Sure! 30 dollars."), model="m")
        .output_schema(Refund)
        .output_fallback(lambda err, raw: {"amount": 0, "reason": "manual review"})
        .build()
    )
    print("run_typed:", await safe.run_typed("Refund order A-1001?"))
    netted = (
        Agent.create(provider=mock(reply="Sure!"), model="m")
        .output_schema(Refund)
        .output_fallback(lambda err, raw: "still prose", canned={"amount": 0, "reason": "retry later"})
        .build()
    )
    print("canned:", await netted.parse_output_async("Sure!"))


if __name__ == "__main__":
    asyncio.run(main())
