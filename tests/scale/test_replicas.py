"""Host replicas: two uvicorn processes serving one PostgreSQL store share threads, pauses and the busy mark."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests._live import free_port, parse_sse, stop, wait_healthy

pytestmark = pytest.mark.integration
HERE = Path(__file__).parent


def _text(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


@pytest.fixture
def replica_db(postgres_dsn: str) -> Iterator[str]:
    """A fresh database on the throwaway server, so the replicas' default table is theirs alone."""
    import psycopg

    name = f"af_replicas_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield postgres_dsn.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _start(name: str, dsn: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    code = (
        "from agentfootprint.hosting import serve; "
        f"serve('replica_agent:make', host='127.0.0.1', port={port}, db={dsn!r}, log_level='warning')"
    )
    env = {**os.environ, "AF_REPLICA": name}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return proc, f"http://127.0.0.1:{port}"


@pytest.fixture
def replicas(replica_db: str) -> Iterator[tuple[str, str]]:
    """Replica A and replica B, both on ``replica_db``; stopped after the test."""
    started = [_start("A", replica_db), _start("B", replica_db)]
    try:
        for proc, base in started:
            wait_healthy(base, proc, what="replica")
        yield started[0][1], started[1][1]
    finally:
        for proc, _ in started:
            stop(proc)


async def _post(http: httpx2.AsyncClient, base: str, payload: dict[str, Any]) -> tuple[int, Any]:
    response = await http.post(f"{base}/agui", json=payload)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return response.status_code, parse_sse(response.text)
    return response.status_code, response.json()


def _turn(thread: str, run: str, *contents: str, **fields: Any) -> dict[str, Any]:
    messages = [{"id": f"u{i + 1}", "role": "user", "content": c} for i, c in enumerate(contents)]
    return {"threadId": thread, "runId": run, "messages": messages, **fields}


async def test_a_pause_taken_on_replica_a_resumes_on_replica_b(replicas: tuple[str, str]) -> None:
    a, b = replicas
    async with httpx2.AsyncClient(timeout=30) as http:
        status, events = await _post(http, a, _turn("trip", "r1", "ask me"))
        assert status == 200
        (interrupt,) = events[-1]["outcome"]["interrupts"]
        assert interrupt["message"] == "Tea or coffee?"
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "tea"}]
        status, events = await _post(http, b, _turn("trip", "r2", "ask me", resume=resume))
        assert status == 200 and _text(events) == "Replica B: you chose tea."
        status, events = await _post(http, a, _turn("trip", "r3", "ask me", "thanks"))
        assert status == 200 and _text(events) == "Replica A: thanks done."


async def test_concurrent_turns_on_one_thread_across_replicas_get_exactly_one_409(replicas: tuple[str, str]) -> None:
    a, b = replicas
    async with httpx2.AsyncClient(timeout=30) as http:
        for run, contents in (("r1", ("slow",)), ("r2", ("slow", "slow"))):
            results = await asyncio.gather(
                _post(http, a, _turn("race", f"{run}a", *contents)),
                _post(http, b, _turn("race", f"{run}b", *contents)),
            )
            statuses = sorted(status for status, _ in results)
            assert statuses == [200, 409], results
            (busy,) = [payload for status, payload in results if status == 409]
            assert busy["error"]["reason"] == "ERR_AGUI_THREAD_BUSY"
            (won,) = [payload for status, payload in results if status == 200]
            assert _text(won).endswith(": slow done.")
        status, events = await _post(http, b, _turn("race", "r3", "slow", "slow", "after"))
        assert status == 200 and _text(events) == "Replica B: after done."
