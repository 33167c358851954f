"""Hosting benchmark: AG-UI requests/s and p99 latency, 50 concurrent clients on loopback, vs pydantic-ai's AG-UI app;
then a 10,000-turn soak of our server, sampling its resident memory.

Both servers run the same mock turn (a tool call, then the answer; bench/agent.py) under uvicorn in their own
process (one worker each) on 127.0.0.1; the client streams each response to its end in this process. The soak runs
our server with its in-memory store capped (``BENCH_STORE_BYTES``) and with SQLite, every turn on a new thread."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
    """agentfootprint's AG-UI app: one fresh agent per turn; threads in memory (the default store), capped at
    $BENCH_STORE_BYTES when set, or in the SQLite file $BENCH_SQLITE."""
    from agent import our_turn_agent
    from agentfootprint.hosting import ag_ui_app, memory_sessions, sqlite_sessions

    if os.environ.get("BENCH_SQLITE"):
        return ag_ui_app(our_turn_agent, sessions=sqlite_sessions(os.environ["BENCH_SQLITE"]))
    cap = os.environ.get("BENCH_STORE_BYTES")
    return ag_ui_app(our_turn_agent, sessions=memory_sessions(max_bytes=int(cap)) if cap else None)


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


def _start(which: str, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    import httpx2

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", which, "--port", str(port)],
        cwd=HERE,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **env},
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


def _rss_mib(pid: int) -> float:
    """The process's resident memory (VmRSS), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS line")


SOAK_TURNS = 10_000
SOAK_SAMPLE_EVERY = 500
SOAK_STORE_BYTES = 32 * 1024 * 1024


async def _soak(**env: str) -> dict[str, Any]:
    """``SOAK_TURNS`` turns (each on a new thread) from ``CLIENTS`` clients; the server's RSS every 500 turns."""
    proc, base = _start("agentfootprint", **env)
    try:
        samples = [{"turns": 0, "rss_mib": _rss_mib(proc.pid)}]
        failures = 0
        for done in range(SOAK_SAMPLE_EVERY, SOAK_TURNS + 1, SOAK_SAMPLE_EVERY):
            failures += (await _load(base, SOAK_SAMPLE_EVERY))["failures"]
            samples.append({"turns": done, "rss_mib": _rss_mib(proc.pid)})
    finally:
        _stop(proc)
    half = [s["rss_mib"] for s in samples if s["turns"] >= SOAK_TURNS // 2]
    settled = next(s["rss_mib"] for s in samples if s["turns"] >= SOAK_TURNS // 2)
    return {
        "turns": SOAK_TURNS,
        "failures": failures,
        "rss_mib_start": samples[1]["rss_mib"],
        "rss_mib_at_half": settled,
        "rss_mib_end": samples[-1]["rss_mib"],
        "rss_mib_max_second_half": max(half),
        "growth_second_half": round(max(half) / settled - 1, 4),
        "samples": samples,
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


async def main(soak: bool = True) -> dict[str, Any]:
    measured: dict[str, list[dict[str, Any]]] = {name: [] for name in SERVERS}
    for _ in range(2):  # alternate the servers so drift on the machine hits both
        for name in SERVERS:
            measured[name].extend(await _measure(name))
    ours, theirs = _best(measured["agentfootprint"]), _best(measured["pydantic_ai"])
    ratio = round(ours["requests_per_s"] / theirs["requests_per_s"], 3)
    soak_memory: dict[str, Any] = {}
    soak_sqlite: dict[str, Any] = {}
    if soak:
        soak_memory = await _soak(BENCH_STORE_BYTES=str(SOAK_STORE_BYTES))
        with tempfile.TemporaryDirectory() as tmp:
            soak_sqlite = await _soak(BENCH_SQLITE=str(Path(tmp) / "threads.db"))
    flat = max(soak_memory.get("growth_second_half", 0.0), soak_sqlite.get("growth_second_half", 0.0))
    ratios = {
        "host.throughput_vs_pydantic_ai": ratio,
        "host.p99_vs_pydantic_ai": round(ours["p99_ms"] / theirs["p99_ms"], 3),
        "host.soak_rss_growth_second_half": flat,
    }
    targets = {"host.throughput_vs_pydantic_ai": 2.0, "host.soak_rss_growth_second_half": 0.05}
    return {
        "ratios": ratios,
        "targets": targets,
        "within_target": {
            "host.throughput_vs_pydantic_ai": ratio >= targets["host.throughput_vs_pydantic_ai"],
            "host.soak_rss_growth_second_half": flat <= targets["host.soak_rss_growth_second_half"],
        },
        "soak_memory_store": soak_memory,
        "soak_sqlite_store": soak_sqlite,
        "agentfootprint": ours,
        "pydantic_ai": theirs,
        "rounds": measured,
        "setup": {"clients": CLIENTS, "requests_per_round": REQUESTS, "warmup": WARMUP, "rounds": 2 * ROUNDS},
        "soak_setup": {
            "turns": SOAK_TURNS,
            "clients": CLIENTS,
            "memory_store_max_bytes": SOAK_STORE_BYTES,
            "growth": "max RSS over the second half / RSS at half - 1",
        },
        "notes": "Median-throughput round of each server (uvicorn, 1 worker, 127.0.0.1, same mock tool-call turn). "
        "Ours keeps every thread server-side (in-memory store: messages, conversation, the run's recording JSON); "
        "pydantic-ai's AGUIAdapter.dispatch_request keeps nothing (the page resends history). Client and servers "
        "share this machine's CPUs.",
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--serve", choices=SERVERS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--skip-soak", action="store_true", help="throughput only (no 10,000-turn soak)")
    options = parser.parse_args()
    if options.serve:
        serve(options.serve, options.port)
    elif options.skip_soak:
        quick = asyncio.run(main(soak=False))
        print(json.dumps({k: quick[k] for k in ("ratios", "agentfootprint", "pydantic_ai")}))
    else:
        result = asyncio.run(main())
        path = write_results("host", result)
        print(f"host: {result['ratios']} (targets {result['targets']}) -> {path}")
        for name in SERVERS:
            print(f"  {name}: {result[name]}")
