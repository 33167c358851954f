"""An agent whose clock is the reference MCP server ``mcp-server-time`` (PyPI), reached through ``mcp_stdio``.

The scripted model asks the server to convert a time and answers from the result; ``backtrack`` then shows the
MCP tool's result as a source of the answer (kind ``tool``, id = the server's tool name).

Run: ``python examples/mcp_time.py [path to mcp-server-time]`` (``make test-setup`` installs it into .mcp-servers/).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from agentfootprint import Agent
from agentfootprint.explain import backtrack
from agentfootprint.mcp import mcp_stdio
from agentfootprint.providers import LLMRequest, mock


def find_server() -> str:
    if len(sys.argv) > 1:
        return sys.argv[1]
    local = Path(__file__).parents[1] / ".mcp-servers" / "py" / "bin" / "mcp-server-time"
    found = str(local) if local.exists() else shutil.which("mcp-server-time")
    if found is None:
        raise SystemExit("mcp-server-time is not installed: run make test-setup")
    return found


def model(request: LLMRequest) -> Any:
    """A scripted model: ask the clock, then answer from what it said."""
    last = request.messages[-1]
    if last.role == "user":
        args = {"source_timezone": "Europe/London", "time": "16:00", "target_timezone": "Asia/Tokyo"}
        return {"tool_calls": [{"id": "t1", "name": "convert_time", "args": args}]}
    target = json.loads(last.content)["target"]
    return f"4 pm in London is {target['datetime'][11:16]} in Tokyo ({target['day_of_week']})."


def main() -> None:
    clock = mcp_stdio(find_server(), ["--local-timezone", "UTC"], name="time")
    agent = (
        Agent.create(provider=mock(respond=model), model="scripted", name="travel_desk")
        .system("You answer travel questions.")
        .tool_provider(clock)
        .build()
    )
    result = agent.run_sync("When my London meeting starts at 4 pm, what time is it in Tokyo?")
    print("answer:", result.answer)
    bt = backtrack(agent)
    for source in bt.sources:
        if source.kind == "tool":
            print(f"source: {source.kind} {source.id} <- {' '.join(source.text.split())[:70]}")
    print("offered:", agent.last_snapshot().state["tools_offered"][0])  # type: ignore[union-attr]


if __name__ == "__main__":
    main()
