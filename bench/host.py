"""Hosting benchmark: AG-UI requests/s and p99 latency, 50 concurrent clients on loopback, vs pydantic-ai's AG-UI app.

Both servers run the same mock turn (a tool call, then the answer; bench/agent.py) under uvicorn in their own
process (one worker each) on 127.0.0.1; the client streams each response to its end in this process."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

HERE = Path(__file__).parent

CLIENTS = 50
REQUESTS = 1000  # per measured round, per server (bounded: 20 per client)
WARMUP = 100
ROUNDS = 2
QUESTION = "What is the weather in Paris?"
SERVERS = ("agentfootprint", "pydantic_ai")


# ---------------------------------------------------------------- the two apps (run in a child process)


def our_app() -> Any:
    """agentfootprint's AG-UI app: one fresh agent per turn, threads in memory (the default store)."""
    from agent import our_turn_agent
    from agentfootprint.hosting import ag_ui_app

    return ag_ui_app(our_turn_agent)


def pydantic_ai_streaming_agent() -> Any:
    """bench/agent.py's pydantic-ai turn with a streaming model function (its AG-UI adapter streams the model)."""
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

    from agent import ANSWER, SYSTEM

    async def stream_fn(messages: list[Any], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            yield ANSWER
        else:
            yield {0: DeltaToolCall(name="weather", json_args='{"city": "Paris"}', tool_call_id="call_1")}

    agent: Any = PydanticAgent(FunctionModel(stream_function=stream_fn), system_prompt=SYSTEM)

    @agent.tool_plain
    async def weather(city: str) -> str:
        """Current weather for a city"""
        return f"sunny in {city}"

    return agent


def pydantic_ai_app() -> Any:
    """pydantic-ai's AG-UI app: its ``AGUIAdapter.dispatch_request`` on one Starlette route, the same mock turn."""
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    agent = pydantic_ai_streaming_agent()

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/agui", run, methods=["POST"]), Route("/healthz", health, methods=["GET"])])


def serve(which: str, port: int) -> None:
    """Run one app under uvicorn on 127.0.0.1 until terminated."""
    import uvicorn

    app = our_app() if which == "agentfootprint" else pydantic_ai_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# ---------------------------------------------------------------- the load (this process)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start(which: str) -> tuple[subprocess.Popen[bytes], str]:
    import httpx2

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", which, "--port", str(port)],
        cwd=HERE,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{which} server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        try:
            if httpx2.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return proc, base
        except httpx2.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{which} server did not start")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def _body() -> dict[str, Any]:
    thread = uuid.uuid4().hex
    return {
        "threadId": f"bench-{thread}",
        "runId": "r1",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": QUESTION}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


async def _load(base: str, total: int) -> dict[str, Any]:
    """``total`` turns from ``CLIENTS`` concurrent clients; each reads the SSE stream to RUN_FINISHED."""
    import httpx2

    latencies: list[float] = []
    failures = 0
    remaining = total
    limits = httpx2.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)

    async def client(http: Any) -> None:
        nonlocal remaining, failures
        while remaining > 0:
            remaining -= 1
            t0 = time.perf_counter()
            chunks: list[bytes] = []
            async with http.stream("POST", f"{base}/agui", json=_body()) as response:
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                ok = response.status_code == 200
            latencies.append(time.perf_counter() - t0)
            streamed = b"".join(chunks)
            if not ok or b'"RUN_FINISHED"' not in streamed[-1024:] or b'"TEXT_MESSAGE_END"' not in streamed:
                failures += 1

    async with httpx2.AsyncClient(timeout=60, limits=limits) as http:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(CLIENTS)))
        elapsed = time.perf_counter() - t0
    latencies.sort()
    return {
        "requests": total,
        "failures": failures,
        "seconds": round(elapsed, 3),
        "requests_per_s": round(total / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000, 2),
    }


async def _measure(which: str) -> list[dict[str, Any]]:
    proc, base = _start(which)
    try:
        await _load(base, WARMUP)
        return [await _load(base, REQUESTS) for _ in range(ROUNDS)]
    finally:
        _stop(proc)


def _best(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The round with the median throughput (its own p99)."""
    ordered = sorted(rounds, key=lambda r: r["requests_per_s"])
    return ordered[len(ordered) // 2]


async def main() -> dict[str, Any]:
    measured: dict[str, list[dict[str, Any]]] = {name: [] for name in SERVERS}
    for _ in range(2):  # alternate the servers so drift on the machine hits both
        for name in SERVERS:
            measured[name].extend(await _measure(name))
    ours, theirs = _best(measured["agentfootprint"]), _best(measured["pydantic_ai"])
    ratio = round(ours["requests_per_s"] / theirs["requests_per_s"], 3)
    ratios = {
        "host.throughput_vs_pydantic_ai": ratio,
        "host.p99_vs_pydantic_ai": round(ours["p99_ms"] / theirs["p99_ms"], 3),
    }
    return {
        "ratios": ratios,
        "targets": {"host.throughput_vs_pydantic_ai": 1.0},
        "within_target": {"host.throughput_vs_pydantic_ai": ratio >= 1.0},
        "agentfootprint": ours,
        "pydantic_ai": theirs,
        "rounds": measured,
        "setup": {"clients": CLIENTS, "requests_per_round": REQUESTS, "warmup": WARMUP, "rounds": 2 * ROUNDS},
        "notes": "Median-throughput round of each server (uvicorn, 1 worker, 127.0.0.1, same mock tool-call turn). "
        "Ours keeps every thread server-side (in-memory store: messages, conversation, the run's recording JSON); "
        "pydantic-ai's AGUIAdapter.dispatch_request keeps nothing (the page resends history). Client and servers "
        "share this machine's CPUs.",
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--serve", choices=SERVERS)
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    if options.serve:
        serve(options.serve, options.port)
    else:
        result = asyncio.run(main())
        path = write_results("host", result)
        print(f"host: {result['ratios']} (targets {result['targets']}) -> {path}")
        for name in SERVERS:
            print(f"  {name}: {result[name]}")
