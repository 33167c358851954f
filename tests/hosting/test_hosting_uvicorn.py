"""One real server: ``serve("agui_served:make")`` under uvicorn on 127.0.0.1, a real HTTP client, SSE over TCP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
from agui_http import parse_sse, text_of, types
from tests._live import wait_healthy

from conftest import free_port

HERE = Path(__file__).parent


async def _stream(http: httpx2.AsyncClient, url: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    chunks: list[str] = []
    async with http.stream("POST", url, json=payload) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for text in response.aiter_text():
            chunks.append(text)
    return parse_sse("".join(chunks))


async def test_a_real_uvicorn_server_streams_turns_and_resumes_a_pause(tmp_path: Path) -> None:
    port = free_port()
    code = (
        "from agentfootprint.hosting import serve; "
        f"serve('agui_served:make', host='127.0.0.1', port={port}, db={str(tmp_path / 'threads.db')!r}, "
        "log_level='warning')"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        async with httpx2.AsyncClient(timeout=30) as http:
            hello = {"threadId": "live-1", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "hi"}]}
            events = await _stream(http, f"{base}/agui", hello)
            assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"
            assert text_of(events) == "Hello from uvicorn, streamed word by word."

            ask = {"threadId": "live-2", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "ask me"}]}
            events = await _stream(http, f"{base}/agui", ask)
            (interrupt,) = events[-1]["outcome"]["interrupts"]
            assert interrupt["message"] == "Tea or coffee?"
            resume = {
                **ask,
                "runId": "r2",
                "resume": [{"interruptId": interrupt["id"], "status": "resolved", "payload": "tea"}],
            }
            events = await _stream(http, f"{base}/agui", resume)
            assert text_of(events) == "You chose tea." and types(events)[-1] == "RUN_FINISHED"

            refused = await http.post(f"{base}/agui", content=b"not json", headers={"content-type": "application/json"})
            assert refused.status_code == 400 and refused.json()["error"]["reason"] == "ERR_AGUI_NOT_JSON"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    assert proc.returncode is not None
