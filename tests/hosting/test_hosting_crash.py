"""A host killed mid-turn (SIGKILL) and restarted: the thread takes a new turn within 15 s, earlier turns intact.

Real ``agentfootprint serve`` processes under uvicorn on 127.0.0.1, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agui_http import text_of
from agui_live import stream
from tests._live import free_port, stop, wait_healthy

HERE = Path(__file__).parent
ALICE = {"x-test-user": "alice"}
RECOVERY_SECONDS = 15.0


@contextmanager
def served(db: str, *flags: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``agentfootprint serve agui_served:make --db DB [flags]`` on a free loopback port; stopped on exit."""
    port = free_port()
    command = [sys.executable, "-m", "agentfootprint", "serve", "agui_served:make", "--db", db]
    command += ["--host", "127.0.0.1", "--port", str(port), *flags]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(command, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        yield proc, base
    finally:
        if proc.poll() is None:
            stop(proc)


def _turn(thread: str, run: str, *texts: str) -> dict[str, Any]:
    messages = [{"id": f"u{i + 1}", "role": "user", "content": text} for i, text in enumerate(texts)]
    return {"threadId": thread, "runId": run, "messages": messages}


async def _hang(http: httpx2.AsyncClient, url: str, payload: dict[str, Any], started: asyncio.Event) -> None:
    """Stream a turn that never finishes; ``started`` is set once its RUN_STARTED arrived."""
    async with http.stream("POST", url, json=payload, headers=ALICE) as response:
        assert response.status_code == 200
        async for text in response.aiter_text():
            if "RUN_STARTED" in text:
                started.set()


async def _accepted_after_kill(db: str, flags: tuple[str, ...], busy_for: float = 0.0) -> tuple[float, Any]:
    """Run a turn, start one that hangs, SIGKILL the host, restart it, and time until the thread takes a turn."""
    thread = f"crash-{uuid.uuid4().hex[:8]}"
    async with httpx2.AsyncClient(timeout=30) as http:
        with served(db, *flags) as (proc, base):
            first = await stream(http, f"{base}/agui", _turn(thread, "r1", "hi"), headers=ALICE)
            assert text_of(first) == "Hello from uvicorn, streamed word by word."
            started = asyncio.Event()
            hanging = asyncio.create_task(_hang(http, f"{base}/agui", _turn(thread, "r2", "hi", "hang"), started))
            await asyncio.wait_for(started.wait(), 30)
            deadline = time.monotonic() + busy_for
            while True:  # the heartbeat keeps the running turn's thread busy past its lease
                busy = await http.post(f"{base}/agui", json=_turn(thread, "r3", "hi", "hang", "x"), headers=ALICE)
                assert busy.status_code == 409 and busy.json()["error"]["reason"] == "ERR_AGUI_THREAD_BUSY"
                if time.monotonic() >= deadline:
                    break
                await asyncio.sleep(0.5)
            os.kill(proc.pid, signal.SIGKILL)
            killed = time.monotonic()
            proc.wait(timeout=10)
            hanging.cancel()
            await asyncio.gather(hanging, return_exceptions=True)
        with served(db, *flags) as (_, base):
            while True:
                response = await http.post(
                    f"{base}/agui", json=_turn(thread, "r4", "hi", "hang", "hello again"), headers=ALICE
                )
                if response.status_code == 200:
                    elapsed = time.monotonic() - killed
                    break
                assert response.status_code == 409, response.text
                assert time.monotonic() - killed < RECOVERY_SECONDS + 5, "the thread stayed busy"
                await asyncio.sleep(0.25)
            transcript = (await http.get(f"{base}/agui/threads/{thread}", headers=ALICE)).json()
    return elapsed, transcript


async def test_sqlite_host_killed_mid_turn_takes_a_new_turn_within_15_s_with_the_default_lease(
    tmp_path: Path,
) -> None:
    elapsed, transcript = await _accepted_after_kill(str(tmp_path / "threads.db"), ())
    assert elapsed < RECOVERY_SECONDS
    contents = [(m["role"], m.get("content")) for m in transcript["messages"]]
    assert contents[0] == ("user", "hi"), "the turn saved before the crash is intact"
    assert contents[1] == ("assistant", "Hello from uvicorn, streamed word by word.")
    assert contents[-2:] == [("user", "hello again"), ("assistant", "Hello from uvicorn, streamed word by word.")]
    assert all(content != "hang" for _, content in contents), "the killed turn left nothing half-written"


@pytest.mark.integration
async def test_postgres_host_killed_mid_turn_recovers_after_its_lease_and_the_heartbeat_held_it(
    postgres_dsn: str,
) -> None:
    import psycopg

    name = f"af_crash_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    dsn = postgres_dsn.rsplit("/", 1)[0] + f"/{name}"
    try:
        elapsed, transcript = await _accepted_after_kill(dsn, ("--lease-seconds", "2"), busy_for=3.0)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    assert elapsed < RECOVERY_SECONDS
    assert [m["role"] for m in transcript["messages"]] == ["user", "assistant", "user", "assistant"]
    assert transcript["busy"] is False and transcript["paused"] is False
