"""MCP and reliability costs, side by side:

- circuit-breaker rejection: what a call refused by an open breaker costs inside the reliability gate (no provider
  call), next to a plain mock-provider call through the same gate with the breaker closed;
- MCP call overhead: one tool call through ``mcp_stdio``'s provider (what an agent's tool runs) vs the same call
  made directly with the ``mcp`` SDK's ``Client`` on the same kind of stdio server (our SDK fixture server).

Writes bench/results/mcp.json.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from _common import time_async, write_results

from agentfootprint.extensions.reliability import CircuitBreaker, Reliability, rule
from agentfootprint.mcp import mcp_stdio
from agentfootprint.providers import LLMRequest, LLMResponse, Message, mock

FIXTURE = Path(__file__).parents[1] / "tests" / "mcp" / "fixture_server.py"
N_GATE = 20_000
N_MCP = 200


class _Ctx:
    """The least a gate needs from a run: no turn (nothing recorded), events dropped."""

    turn = None
    iteration = 1

    def __init__(self, provider: Any) -> None:
        self.config = type("C", (), {"provider": provider})()

    def emit(self, event_type: str, payload: Any = None) -> None:
        return None


async def gate_costs() -> dict[str, float]:
    provider = mock(reply="ok")
    request = LLMRequest(system_prompt="", messages=[Message(role="user", content="hi")], tools=[], model="m")
    down = rule(when=lambda s: s.error is not None, then="fail-fast", kind="down")
    clock = [0.0]
    breaker = CircuitBreaker(failure_threshold=1, cooldown_s=3600, clock=lambda: clock[0])
    gate = Reliability(post_decide=[down], circuit_breaker=breaker)
    ctx: Any = _Ctx(provider)

    async def call_next(req: LLMRequest) -> LLMResponse:
        return await provider.complete(req)

    async def closed_batch() -> None:
        for _ in range(N_GATE):
            await gate.wrap_model_call(ctx, request, call_next)

    t_closed = await time_async(closed_batch, repeat=5, warmup=1)
    breaker.failure(provider.name, RuntimeError("down"))  # open it
    assert breaker.state_of(provider.name) == "open"

    async def rejected_batch() -> None:
        for _ in range(N_GATE):
            try:
                await gate.wrap_model_call(ctx, request, call_next)
            except Exception:
                pass

    t_rejected = await time_async(rejected_batch, repeat=5, warmup=1)
    t0 = time.perf_counter()
    for _ in range(N_GATE):
        breaker.admit(provider.name)
    admit = (time.perf_counter() - t0) / N_GATE
    return {
        "breaker_admit_open_us": round(admit * 1e6, 3),
        "gate_rejection_us": round(t_rejected / N_GATE * 1e6, 2),
        "gate_closed_mock_call_us": round(t_closed / N_GATE * 1e6, 2),
    }


async def mcp_costs() -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    provider = mcp_stdio(sys.executable, [str(FIXTURE)], name="fixture")
    await provider.list_tools()

    async def ours() -> None:
        for _ in range(N_MCP):
            await provider.call("echo", {"text": "x"})

    t_ours = await time_async(ours, repeat=5, warmup=1)
    await provider.aclose()
    async with Client(StdioServerParameters(command=sys.executable, args=[str(FIXTURE)]), cache=None) as client:
        await client.list_tools()

        async def direct() -> None:
            for _ in range(N_MCP):
                await client.call_tool("echo", {"text": "x"})

        t_direct = await time_async(direct, repeat=5, warmup=1)
    return {
        "mcp_call_ours_us": round(t_ours / N_MCP * 1e6, 1),
        "mcp_call_sdk_direct_us": round(t_direct / N_MCP * 1e6, 1),
        "mcp_overhead_ratio": round(t_ours / t_direct, 3),
    }


async def main() -> None:
    gate = await gate_costs()
    mcp = await mcp_costs()
    path = write_results("mcp", {**gate, **mcp, "gate_calls": N_GATE, "mcp_calls": N_MCP})
    for k, v in {**gate, **mcp}.items():
        print(f"{k}: {v}")
    print(f"wrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
