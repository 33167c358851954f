"""Shared plumbing for tests that start real servers on loopback: ports, health polling, stopping, SSE."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from typing import Any

import httpx2


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_healthy(base: str, proc: subprocess.Popen[bytes], seconds: float = 30.0, what: str = "server") -> None:
    """Poll ``/healthz`` until it answers 200; fail with the process's stderr if it exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited early: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        try:
            if httpx2.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{what} did not become healthy in time")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a process the test started (kill it if it does not stop)."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The ``data:`` payloads of an SSE body, as JSON, in order (comments and blank lines skipped)."""
    events: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events
