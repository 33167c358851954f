"""A live AG-UI server for tests: ``agui_served:build_app`` under uvicorn on 127.0.0.1, in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from agui_http import parse_sse
from tests._live import stop, wait_healthy

from conftest import free_port

HERE = Path(__file__).parent


@contextmanager
def live_server(db: Path | str | None, **options: str) -> Iterator[str]:
    """Serve ``agui_served:build_app`` (SQLite at ``db``, or a ``postgresql://`` DSN; None: in memory) on a free
    loopback port; ``options`` become ``AGUI_<NAME>`` variables the app reads. Yields the base URL."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "agui_served:build_app", "--factory"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--app-dir", str(HERE)]
    env = {**os.environ, **{f"AGUI_{name.upper()}": value for name, value in options.items()}}
    if db is not None:
        env["AGUI_DB"] = str(db)
    proc = subprocess.Popen(command, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        yield base
    finally:
        stop(proc)


async def stream(http: httpx2.AsyncClient, url: str, payload: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """POST a turn and read its SSE stream to the end (the status must be 200)."""
    chunks: list[str] = []
    async with http.stream("POST", url, json=payload, **kwargs) as response:
        assert response.status_code == 200, (await response.aread())[:500]
        assert response.headers["content-type"].startswith("text/event-stream")
        async for text in response.aiter_text():
            chunks.append(text)
    return parse_sse("".join(chunks))
