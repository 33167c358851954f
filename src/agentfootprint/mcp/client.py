"""MCP servers as tool providers: ``mcp_stdio(command, args=[...])`` and ``mcp_http(url, headers=None)``.

The server's tools are offered under their own names (mapped when a provider would refuse them, see ``_names``)
and input schemas; a call is recorded like any tool call.
A result reaches the model as its text parts joined by newlines (structured content as JSON when there is no
text); a server error is the tool's error result; a server that dies mid-run fails the run with
``MCPServerGoneError`` naming the server. Tools are listed once per run, and again after the server says its list
changed (``subscriptions/listen`` on mcp 2.x servers, the classic ``notifications/tools/list_changed`` on
earlier ones). The connection lives in one task of its own and closes when the run ends (never on a pause). At most
``max_tools`` tools are taken, each with a description of at most ``max_description_chars`` and an input schema of
at most ``max_schema_bytes``; ``provider.dropped`` names the others and why.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentfootprint.mcp._client_limits import (
    DEFAULT_MAX_DESCRIPTION_CHARS,
    DEFAULT_MAX_SCHEMA_BYTES,
    DEFAULT_MAX_TOOLS,
    DroppedTool,
    check_limits,
    keep_tools,
)
from agentfootprint.mcp._sdk import sdk
from agentfootprint.mcp.errors import MCPConnectError, MCPServerGoneError, MCPToolError
from agentfootprint.tools import ProviderContext, Tool, ToolContext

__all__ = ["DEFAULT_TIMEOUT_S", "MCPToolProvider", "mcp_http", "mcp_stdio", "result_text"]

DEFAULT_TIMEOUT_S = 60.0
_LIST_CHANGED = "notifications/tools/list_changed"
_LISTEN_ACK_S = 10.0
_GONE = ("ClosedResourceError", "BrokenResourceError", "EndOfStream", "BrokenPipeError", "ConnectionResetError")


def result_text(result: Any) -> str:
    """What the model reads from a ``CallToolResult``: text parts joined by newlines, else structured JSON."""
    texts: list[str] = []
    for part in getattr(result, "content", None) or ():
        kind = getattr(part, "type", None)
        if kind == "text":
            texts.append(str(part.text))
        elif kind == "resource" and hasattr(getattr(part, "resource", None), "text"):
            texts.append(str(part.resource.text))
        elif kind in ("image", "audio"):
            texts.append(f"[{kind}: {getattr(part, 'mime_type', '') or 'binary'}]")
        elif kind == "resource_link":
            texts.append(f"[resource: {getattr(part, 'uri', '')}]")
    structured = getattr(result, "structured_content", None)
    if not texts and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(texts)


class MCPToolProvider:
    """One MCP server as a ``ToolProvider`` (``id`` is its name in the record)."""

    def __init__(
        self,
        name: str,
        server: Callable[[], Any],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_tools: int = DEFAULT_MAX_TOOLS,
        max_description_chars: int = DEFAULT_MAX_DESCRIPTION_CHARS,
        max_schema_bytes: int = DEFAULT_MAX_SCHEMA_BYTES,
    ) -> None:
        check_limits(max_tools, max_description_chars, max_schema_bytes)
        self.id = name
        self.max_tools = max_tools
        self.max_description_chars = max_description_chars
        self.max_schema_bytes = max_schema_bytes
        self.dropped: tuple[DroppedTool, ...] = ()
        """The tools the last listing left out, each with its reason (name, over a limit, duplicate)."""
        self.name = name
        self._server = server
        self._timeout = timeout_s
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._listed: tuple[str, list[Tool]] | None = None
        self._dirty = False
        self._mode = "auto"  # how the SDK's client negotiates the protocol version ("legacy": the handshake)
        self.server_names: dict[str, str] = {}
        """The last listing's tools: the name the model sees → the server's own name."""
        self.list_calls = 0
        """How many times the server was asked for its tools (once per run unless its list changed)."""

    # -- the connection, owned by one task ----------------------------------------------------------------------
    async def _connect(self) -> Any:
        if self._client is not None and self._task is not None and not self._task.done():
            return self._client
        mcp = sdk()
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()

        async def on_message(message: Any) -> None:
            root = getattr(message, "root", message)
            if getattr(root, "method", None) == _LIST_CHANGED:
                self._dirty = True

        async def hold() -> None:
            try:
                client = mcp.Client(
                    self._server(),
                    message_handler=on_message,
                    read_timeout_seconds=self._timeout,
                    cache=None,
                    mode=self._mode,
                )
                async with client:
                    listening = asyncio.Event()
                    watcher = asyncio.get_running_loop().create_task(self._watch(client, listening))
                    try:
                        with contextlib.suppress(TimeoutError):  # a server slow to acknowledge still connects
                            await asyncio.wait_for(listening.wait(), min(self._timeout / 2, _LISTEN_ACK_S))
                        if not ready.done():
                            ready.set_result(client)
                        await stop.wait()
                    finally:
                        watcher.cancel()
                        with contextlib.suppress(BaseException):
                            await watcher
            except BaseException as exc:  # reported to whoever waits for the connection
                if not ready.done():
                    ready.set_exception(exc)
            finally:
                self._client = None

        self._stop = stop
        self._task = asyncio.get_running_loop().create_task(hold(), name=f"mcp:{self.name}")
        try:
            self._client = await asyncio.wait_for(ready, self._timeout)
        except Exception as exc:
            await self.aclose()
            raise MCPConnectError(self.name, f"{type(exc).__name__}: {exc}") from None
        return self._client

    async def _watch(self, client: Any, listening: asyncio.Event) -> None:
        """Mark the list stale on each ``subscriptions/listen`` change event; a server that predates it or refuses
        it is left to the classic notification. ``listening`` is set once the server acknowledged (or refused)."""
        try:
            async with client.listen(tools_list_changed=True) as events:
                listening.set()
                async for _ in events:
                    self._dirty = True
        except Exception:
            self._dirty = self._dirty or listening.is_set()  # a stream lost mid-run may have missed a change
        finally:
            listening.set()

    async def aclose(self) -> None:
        """Close the connection (the agent calls this when a run ends); the next use reconnects."""
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._client = None
        self._listed = None
        if stop is not None:
            stop.set()
        if task is not None and not task.done():
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 10)

    # -- ToolProvider ---------------------------------------------------------------------------------------------
    async def list(self, ctx: ProviderContext) -> Sequence[Tool]:
        """The server's tools; listed once per run (and again after a list-changed notification)."""
        cached = self._listed
        if cached is not None:
            await asyncio.sleep(0)  # let a change event that arrived with the last result mark the list first
        if cached is not None and cached[0] == ctx.run_id and not self._dirty:
            return cached[1]
        tools = await self.list_tools()
        self._listed = (ctx.run_id, tools)
        return tools

    async def list_tools(self) -> builtins.list[Tool]:
        """Ask the server for its tools now (all pages)."""
        client = await self._connect()
        self._dirty = False
        self.list_calls += 1
        listed: builtins.list[Any] = []
        cursor: str | None = None
        for _ in range(100):
            try:
                page = await client.list_tools(cursor=cursor)
            except Exception as exc:
                raise self._gone_or(exc, None) from None
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor or len(listed) > 4 * self.max_tools:  # enough to fill the cap past bad entries
                break
        kept, dropped = keep_tools(
            self.name,
            listed,
            max_tools=self.max_tools,
            max_description_chars=self.max_description_chars,
            max_schema_bytes=self.max_schema_bytes,
        )
        self.dropped = tuple(dropped)
        self.server_names = {model_name: spec.name for model_name, spec in kept}
        return [self._tool(model_name, spec) for model_name, spec in kept]

    def _tool(self, model_name: str, spec: Any) -> Tool:
        schema = dict(spec.input_schema or {})
        if schema.get("type") != "object":
            schema = {"type": "object", "properties": {}}
        name = spec.name

        async def execute(args: dict[str, Any], ctx: ToolContext) -> str:
            return await self.call(name, args)

        return Tool(name=model_name, description=str(spec.description or ""), input_schema=schema, execute=execute)

    async def call(self, name: str, args: Mapping[str, Any]) -> str:
        """Call tool ``name``: its text for the model; ``MCPToolError`` for a server error result."""
        client = await self._connect()
        try:
            result = await client.call_tool(name, dict(args))
        except Exception as exc:
            raise self._gone_or(exc, name) from None
        text = result_text(result)
        if getattr(result, "is_error", False):
            raise MCPToolError(self.name, text)
        return text

    def _gone_or(self, exc: BaseException, tool: str | None) -> Exception:
        """A dead connection → ``MCPServerGoneError``; anything the server said → ``MCPToolError``."""
        task_dead = self._task is None or self._task.done()
        code = getattr(exc, "code", None)
        if task_dead or type(exc).__name__ in _GONE or code == -32000:
            return MCPServerGoneError(self.name, tool)
        message = getattr(exc, "message", None) or str(exc)
        return MCPToolError(self.name, f"{type(exc).__name__}: {message}")

    def __repr__(self) -> str:
        return f"<MCPToolProvider {self.name!r}>"


def mcp_stdio(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    cwd: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_tools: int = DEFAULT_MAX_TOOLS,
    max_description_chars: int = DEFAULT_MAX_DESCRIPTION_CHARS,
    max_schema_bytes: int = DEFAULT_MAX_SCHEMA_BYTES,
) -> MCPToolProvider:
    """An MCP server started as a subprocess (``command`` a name on PATH or a path; ``env=None``: the SDK's default
    environment)."""
    if isinstance(command, os.PathLike):
        command = os.fspath(command)
    if not isinstance(command, str) or not command.strip():
        raise ValueError("mcp_stdio() needs the server's command")
    argv = [str(a) for a in args]
    extra = {str(k): str(v) for k, v in env.items()} if env is not None else None

    def server() -> Any:
        return sdk().StdioServerParameters(command=command, args=argv, env=extra, cwd=cwd)

    return MCPToolProvider(
        name or _stdio_name(command, argv),
        server,
        timeout_s=timeout_s,
        max_tools=max_tools,
        max_description_chars=max_description_chars,
        max_schema_bytes=max_schema_bytes,
    )


def mcp_http(
    url: str,
    headers: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_tools: int = DEFAULT_MAX_TOOLS,
    max_description_chars: int = DEFAULT_MAX_DESCRIPTION_CHARS,
    max_schema_bytes: int = DEFAULT_MAX_SCHEMA_BYTES,
) -> MCPToolProvider:
    """An MCP server over streamable HTTP at ``url`` (``headers`` go with every request)."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError("mcp_http() needs an http:// or https:// URL")
    sent = {str(k): str(v) for k, v in (headers or {}).items()}

    def server() -> Any:
        sdk()
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        return streamable_http_client(url, http_client=create_mcp_http_client(headers=sent or None))

    host = url.split("//", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
    return MCPToolProvider(
        name or host,
        server,
        timeout_s=timeout_s,
        max_tools=max_tools,
        max_description_chars=max_description_chars,
        max_schema_bytes=max_schema_bytes,
    )


def _stdio_name(command: str, args: list[str]) -> str:
    base = command.replace("\\", "/").rsplit("/", 1)[-1]
    if base in ("python", "python3", "uvx", "npx", "node", "uv") and args:
        base = next((a for a in args if not a.startswith("-") and a not in ("-m", "run")), base)
    return base.replace("\\", "/").rsplit("/", 1)[-1][:64]
