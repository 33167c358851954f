"""MCP limits under hostile input:

- server: the served agent's peak RSS after one N MB line (N = 5, 10, 100 and a generated size between; the limit
  is 4 MiB), next to the same process answering only small messages; each oversized line must be refused with
  ERR_MCP_MESSAGE_TOO_LARGE and the next message served;
- client: listing a server offering 5,001 tools (two with 5 MB descriptions) through ``MCPToolProvider``: tools kept,
  tools dropped, and the time, next to a clean server of 100 tools.

Writes bench/results/mcp_limits.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from _common import write_results

ROOT = Path(__file__).parents[1]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def served_rss(line_mb: int) -> dict[str, Any]:
    """Peak RSS (KiB) of ``agentfootprint mcp`` after a ``line_mb`` MB line (0: small messages only)."""
    cmd = [sys.executable, "-m", "agentfootprint", "mcp", "tests.mcp.served_agent:make"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INIT).encode() + b"\n" + json.dumps(INITIALIZED).encode() + b"\n")
    if line_mb:
        proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"x":"')
        block = b"A" * (1024 * 1024)
        for _ in range(line_mb):
            proc.stdin.write(block)
        proc.stdin.write(b'"}}\n')
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).encode() + b"\n")
    proc.stdin.flush()
    answers = {}
    for _ in range(3 if line_mb else 2):
        answer = json.loads(proc.stdout.readline())
        answers[answer["id"]] = answer
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    refused = line_mb == 0 or answers[2]["error"]["data"]["code"] == "ERR_MCP_MESSAGE_TOO_LARGE"
    return {"line_mb": line_mb, "peak_rss_kib": usage.ru_maxrss, "refused": refused, "served_next": 3 in answers}


async def client_listing(n_tools: int, huge: int) -> dict[str, Any]:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from agentfootprint.mcp import MCPToolProvider

    tools = [
        types.Tool(name=f"h{i}", description="x" * (5 * 1024 * 1024), input_schema={"type": "object"})
        for i in range(huge)
    ]
    tools += [types.Tool(name=f"t{i}", description="d", input_schema={"type": "object"}) for i in range(n_tools)]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + 500
        return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    server = Server("fake", on_list_tools=list_tools)
    provider = MCPToolProvider("fake", lambda: server)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = await provider.list_tools()
    elapsed = time.perf_counter() - started
    await provider.aclose()
    return {"offered": len(tools), "kept": len(kept), "dropped": len(provider.dropped), "seconds": round(elapsed, 3)}


def main() -> None:
    generated = random.Random(39).randint(5, 60)
    sizes = [0, 5, 10, generated, 100]
    server = [served_rss(mb) for mb in sizes]
    base = server[0]["peak_rss_kib"]
    for row in server:
        row["rss_ratio_to_idle"] = round(row["peak_rss_kib"] / base, 3)
    client = {
        "hostile_5001_tools_2_huge": asyncio.run(client_listing(5001, 2)),
        "clean_100_tools": asyncio.run(client_listing(100, 0)),
    }
    path = write_results("mcp_limits", {"server": server, "client": client, "generated_line_mb": generated})
    print(json.dumps({"server": server, "client": client}, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
