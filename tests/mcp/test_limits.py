"""What an agent served over MCP accepts: bounded message reads, a cap on concurrent turns, no internal text out."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.mcp import mcp_app, mcp_server, serve_stdio
from agentfootprint.mcp._limits import (
    BUSY,
    CHUNK_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    TOO_LARGE,
    TURN_FAILED,
    Oversized,
    bounded_lines,
    request_id,
    run_bounded_stdio,
)
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import Tool, ToolContext
from tests.mcp.conftest import ROOT
from tests.mcp.served_agent import make

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def chunks(parts: list[bytes]) -> Callable[[], Awaitable[bytes]]:
    queue = list(parts)

    async def read() -> bytes:
        return queue.pop(0) if queue else b""

    return read


async def collect(read: Callable[[], Awaitable[bytes]], limit: int) -> list[bytes | Oversized]:
    return [line async for line in bounded_lines(read, limit)]


# -- the bounded reader -------------------------------------------------------------------------------------------
async def test_lines_split_across_chunks_are_joined_and_an_oversized_one_is_dropped_whole() -> None:
    got = await collect(chunks([b'{"a"', b":1}\n" + b"x" * 30, b"y" * 30 + b"\n{}", b"\n"]), limit=50)
    assert got == [b'{"a":1}', Oversized(60, b"x" * 30 + b"y" * 30), b"{}"]


async def test_a_last_line_without_newline_is_delivered_and_blank_lines_are_skipped() -> None:
    assert await collect(chunks([b"\n\n  \nabc"]), limit=10) == [b"abc"]
    assert await collect(chunks([b"abcdefghijklm"]), limit=10) == [Oversized(13, b"abcdefghijklm")]


async def test_a_100_mb_line_is_never_held_whole() -> None:
    block = b"A" * CHUNK_BYTES
    total = 100 * 1024 * 1024
    sent, tail = [0], [b'\n{"id":2}\n']

    async def read() -> bytes:
        if sent[0] >= total:
            return tail.pop() if tail else b""
        sent[0] += len(block)
        return block

    tracemalloc.start()
    try:
        got = await collect(read, DEFAULT_MAX_MESSAGE_BYTES)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == [Oversized(total, b"A" * 256), b'{"id":2}']
    assert peak < DEFAULT_MAX_MESSAGE_BYTES * 3  # the limit plus a chunk, not the 100 MB line


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").strip() or b"z"), max_size=12),
    cuts=st.lists(st.integers(min_value=1, max_value=17), min_size=1, max_size=8),
    limit=st.integers(min_value=1, max_value=30),
)
def test_any_chunking_gives_the_same_lines(lines: list[bytes], cuts: list[int], limit: int) -> None:
    data = b"\n".join(lines) + b"\n"
    parts, at, i = [], 0, 0
    while at < len(data):
        parts.append(data[at : at + cuts[i % len(cuts)]])
        at += cuts[i % len(cuts)]
        i += 1
    got = anyio.run(collect, chunks(parts), limit)
    assert got == [line if len(line) <= limit else Oversized(len(line), line[:256]) for line in lines]


def test_the_request_id_is_read_from_the_head_only_before_params() -> None:
    assert request_id(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":9') == 7
    assert request_id(b'{"jsonrpc":"2.0","id":"abc","method":"x"') == "abc"
    assert request_id(b'{"jsonrpc":"2.0","method":"x","params":{"id":9}') is None
    assert request_id(b"AAAA") is None


# -- the stdio server ---------------------------------------------------------------------------------------------
async def serve(messages: list[bytes], until_id: int, **limits: Any) -> list[dict[str, Any]]:
    """Run the bounded stdio server in-process on ``messages``; end input once ``until_id`` has an answer."""
    out: list[dict[str, Any]] = []
    answered = anyio.Event()
    queue = [m + b"\n" for m in messages]

    async def read() -> bytes:
        if queue:
            return queue.pop(0)
        await answered.wait()
        return b""

    async def write(data: bytes) -> None:
        message = json.loads(data)
        out.append(message)
        if message.get("id") == until_id:
            answered.set()

    await run_bounded_stdio(mcp_server(make), read=read, write=write, **limits)
    return out


def dumps(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


async def test_an_oversized_call_is_answered_with_a_typed_error_and_the_next_message_is_served() -> None:
    huge = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "concierge"}}
    huge["params"]["arguments"] = {"message": "x" * 5000}
    ask = {"jsonrpc": "2.0", "id": 8, "method": "tools/call"}
    ask["params"] = {"name": "concierge", "arguments": {"message": "hi"}}
    out = await serve([dumps(INIT), dumps(INITIALIZED), dumps(huge), dumps(ask)], until_id=8, max_message_bytes=4096)
    by_id = {m["id"]: m for m in out}
    assert by_id[7] == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32600,
            "message": f"{TOO_LARGE}: a message may be at most 4096 bytes",
            "data": {"code": TOO_LARGE, "limit": 4096},
        },
    }
    assert by_id[8]["result"]["content"] == [{"type": "text", "text": "You said: hi"}]
    assert "x" * 100 not in json.dumps(out)


async def test_a_message_under_the_limit_is_served_as_before() -> None:
    ask = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    ask["params"] = {"name": "concierge", "arguments": {"message": "y" * 3000}}
    out = await serve([dumps(INIT), dumps(INITIALIZED), dumps(ask)], until_id=2, max_message_bytes=4096)
    assert out[-1]["result"]["content"][0]["text"] == "You said: " + "y" * 3000


def test_the_served_command_refuses_a_5_mb_line_and_keeps_serving() -> None:
    ask = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    huge = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"x":"' + b"B" * (5 * 1024 * 1024) + b'"}}'
    stdin = b"\n".join([dumps(INIT), dumps(INITIALIZED), huge, dumps(ask)]) + b"\n"
    cmd = [sys.executable, "-m", "agentfootprint", "mcp", "tests.mcp.served_agent:make"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin)
    proc.stdin.flush()
    answers = sorted((json.loads(proc.stdout.readline()) for _ in range(3)), key=lambda a: a["id"])
    proc.stdin.close()
    proc.wait(timeout=60)
    proc.stdout.close()
    assert proc.stderr is not None
    proc.stderr.close()
    assert [a.get("id") for a in answers] == [1, 2, 3]
    assert answers[1]["error"]["data"] == {"code": TOO_LARGE, "limit": DEFAULT_MAX_MESSAGE_BYTES}
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["concierge"]


def test_limits_below_the_floor_are_refused() -> None:
    with pytest.raises(ValueError):
        mcp_app(make, max_message_bytes=10)
    with pytest.raises(ValueError):
        anyio.run(lambda: serve_stdio(make, max_message_bytes=0))
    with pytest.raises(ValueError):
        mcp_server(make, max_concurrent_turns=0)


# -- concurrent turns and error text ------------------------------------------------------------------------------
def waiting_agent(gate: asyncio.Event, started: list[int]) -> Callable[[], Agent]:
    async def wait(args: dict[str, Any], ctx: ToolContext) -> str:
        started.append(1)
        await gate.wait()
        return "done"

    slow = Tool(name="slow", description="Waits.", input_schema={"type": "object", "properties": {}}, execute=wait)

    def factory() -> Agent:
        replies = [{"tool_calls": [{"id": "c", "name": "slow", "args": {}}]}, "finished"]
        return Agent.create(provider=mock(replies=replies), name="worker").tool(slow).build()

    return factory


async def test_a_turn_over_the_cap_is_refused_with_a_typed_error_and_the_others_finish() -> None:
    from mcp import Client

    gate, started = asyncio.Event(), []
    async with Client(mcp_server(waiting_agent(gate, started), max_concurrent_turns=2)) as client:
        first = [asyncio.create_task(client.call_tool("worker", {"message": str(i)})) for i in range(2)]
        while len(started) < 2:
            await asyncio.sleep(0)
        refused = await client.call_tool("worker", {"message": "third"})
        gate.set()
        done = await asyncio.gather(*first)
        again = await client.call_tool("worker", {"message": "after"})
    assert refused.is_error is True
    assert (
        refused.content[0].text == f"Error executing tool worker: {BUSY}: 2 turns are already running; try again later"
    )  # type: ignore[union-attr]
    assert [r.content[0].text for r in done] == ["finished", "finished"]  # type: ignore[union-attr]
    assert again.is_error is False


async def test_a_failing_turn_sends_a_stable_code_and_logs_the_detail(caplog: pytest.LogCaptureFixture) -> None:
    from mcp import Client

    def boom(request: LLMRequest) -> str:
        raise RuntimeError("db at 10.0.0.5 refused user admin password hunter2")

    def factory() -> Agent:
        return Agent.create(provider=mock(respond=boom), name="fragile").build()

    with caplog.at_level(logging.WARNING, logger="agentfootprint.mcp"):
        async with Client(mcp_server(factory)) as client:
            result = await client.call_tool("fragile", {"message": "hello"})
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error is True
    assert "hunter2" not in text and "10.0.0.5" not in text
    assert text.endswith(": the turn failed; the server's log has the detail")
    assert text.startswith("Error executing tool fragile: ERR_")
    assert "hunter2" in caplog.text


async def test_a_plain_exception_gets_the_generic_turn_failed_code(caplog: pytest.LogCaptureFixture) -> None:
    from mcp import Client

    def factory() -> Agent:
        if factory.calls:  # type: ignore[attr-defined]
            raise KeyError("internal table t_users")
        factory.calls = 1  # type: ignore[attr-defined]
        return make()

    factory.calls = 0  # type: ignore[attr-defined]
    with caplog.at_level(logging.WARNING, logger="agentfootprint.mcp"):
        async with Client(mcp_server(factory)) as client:
            result = await client.call_tool("concierge", {"message": "hello"})
    assert (
        result.content[0].text
        == f"Error executing tool concierge: {TURN_FAILED}: the turn failed; the server's log has the detail"
    )  # type: ignore[union-attr]
    assert "t_users" in caplog.text


def test_the_command_takes_its_message_limit_from_the_flag() -> None:
    huge = b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"x":"' + b"C" * 3000 + b'"}}'
    small = dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    stdin = b"\n".join([dumps(INIT), dumps(INITIALIZED), huge, small]) + b"\n"
    cmd = [sys.executable, "-m", "agentfootprint", "mcp", "tests.mcp.served_agent:make", "--max-message-bytes", "2048"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin)
    proc.stdin.flush()
    answers = sorted((json.loads(proc.stdout.readline()) for _ in range(3)), key=lambda a: a["id"])
    proc.stdin.close()
    proc.wait(timeout=60)
    proc.stdout.close()
    assert answers[1] == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {
            "code": -32600,
            "message": f"{TOO_LARGE}: a message may be at most 2048 bytes",
            "data": {"code": TOO_LARGE, "limit": 2048},
        },
    }
    assert answers[2]["id"] == 3 and "result" in answers[2]


def test_over_http_a_body_over_the_limit_is_refused_with_413_and_a_small_one_is_served() -> None:
    from starlette.testclient import TestClient

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    big = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"' + b"A" * 3000 + b'"}}'
    with TestClient(mcp_app(make, max_message_bytes=2048), base_url="http://127.0.0.1:8000") as client:
        refused = client.post("/mcp", content=big, headers=headers)
        served = client.post("/mcp", content=dumps(INIT), headers=headers)
    assert refused.status_code == 413
    assert "A" * 50 not in refused.text
    assert served.status_code == 200


def noisy() -> Agent:
    """An agent whose model prints to stdout mid-turn (served by the next test as a subprocess)."""

    def respond(request: LLMRequest) -> str:
        print("stray output from a handler")
        return "quiet answer"

    return Agent.create(provider=mock(respond=respond), name="noisy").build()


def test_a_handler_printing_to_stdout_does_not_corrupt_the_wire() -> None:
    ask = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    ask["params"] = {"name": "noisy", "arguments": {"message": "hi"}}
    stdin = b"\n".join([dumps(INIT), dumps(INITIALIZED), dumps(ask)]) + b"\n"
    cmd = [sys.executable, "-m", "agentfootprint", "mcp", "tests.mcp.test_limits:noisy"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin)
    proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
    proc.stdin.close()
    proc.wait(timeout=60)
    rest = proc.stdout.read()
    proc.stdout.close()
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "quiet answer"}]
    assert b"stray output" not in rest
