"""What an MCP server accepts from a client: a bounded stdio read, a cap on concurrent turns, generic refusals.

A line longer than ``max_message_bytes`` is never held whole: it is read in chunks, dropped up to its newline and
answered with a JSON-RPC error whose ``data.code`` is ``ERR_MCP_MESSAGE_TOO_LARGE``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BUSY",
    "DEFAULT_MAX_CONCURRENT_TURNS",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "TOO_LARGE",
    "TURN_FAILED",
    "Oversized",
    "bounded_lines",
    "run_bounded_stdio",
    "turn_refusal",
]

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_CONCURRENT_TURNS = 8
CHUNK_BYTES = 64 * 1024
TOO_LARGE = "ERR_MCP_MESSAGE_TOO_LARGE"
BUSY = "ERR_MCP_TOO_MANY_TURNS"
TURN_FAILED = "ERR_MCP_TURN_FAILED"
_PREFIX_BYTES = 256
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,64}")')
log = logging.getLogger("agentfootprint.mcp")


@dataclass(frozen=True)
class Oversized:
    """A line over the limit, dropped; ``size`` is how many bytes it had, ``head`` its first bytes."""

    size: int
    head: bytes


async def bounded_lines(read: Callable[[], Awaitable[bytes]], limit: int) -> AsyncIterator[bytes | Oversized]:
    """Lines from ``read()`` chunks (``b""`` at end); a line over ``limit`` bytes is yielded as ``Oversized``.

    At most ``limit`` bytes plus one chunk are held at any time, whatever the input.
    """
    buffer = bytearray()
    dropping: tuple[int, bytes] | None = None  # (bytes seen so far, head) while skipping an oversized line
    while True:
        chunk = await read()
        if not chunk:
            if dropping is not None:
                yield Oversized(dropping[0], dropping[1])
            elif buffer.strip():
                yield bytes(buffer)
            return
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if dropping is not None:
                head = dropping[1]
                if len(head) < _PREFIX_BYTES:
                    head += piece[: _PREFIX_BYTES - len(head)]
                dropping = (dropping[0] + len(piece), head)
            elif len(buffer) + len(piece) > limit:
                head = bytes((buffer + piece[:_PREFIX_BYTES])[:_PREFIX_BYTES])
                dropping = (len(buffer) + len(piece), head)
                buffer.clear()
            else:
                buffer += piece
            if end < 0:
                break
            if dropping is not None:
                yield Oversized(dropping[0], dropping[1])
                dropping = None
            elif buffer.strip():
                yield bytes(buffer)
            buffer.clear()
            start = end + 1


def request_id(head: bytes) -> int | str | None:
    """The JSON-RPC id named in the first bytes of a message, if it is there (else ``None``)."""
    cut = head.find(b'"params"')
    found = _ID.search(head if cut < 0 else head[:cut])
    if found is None:
        return None
    value: int | str = json.loads(found.group(1))
    return value


def too_large_error(oversized: Oversized, limit: int) -> dict[str, Any]:
    """The JSON-RPC error answering an oversized message (its id when the first bytes name it)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id(oversized.head),
        "error": {
            "code": -32600,
            "message": f"{TOO_LARGE}: a message may be at most {limit} bytes",
            "data": {"code": TOO_LARGE, "limit": limit},
        },
    }


def turn_refusal(exc: BaseException) -> str:
    """The text a client reads for a failed turn: a stable code, never the exception's own text (that is logged)."""
    code = getattr(exc, "code", None)
    stable = code if isinstance(code, str) and code.startswith("ERR_") else TURN_FAILED
    log.warning("an MCP turn failed (%s)", stable, exc_info=exc)
    return f"{stable}: the turn failed; the server's log has the detail"


async def run_bounded_stdio(
    server: Any,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    read: Callable[[], Awaitable[bytes]] | None = None,
    write: Callable[[bytes], Awaitable[None]] | None = None,
) -> None:
    """Run an ``MCPServer`` over stdin/stdout (or ``read``/``write``), reading each message with a bounded buffer."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    restores: list[Callable[[], None]] = []
    if read is None or write is None:
        stdin, stdout = _claim_std(restores)

        async def read_stdin() -> bytes:
            return await anyio.to_thread.run_sync(stdin.read1, CHUNK_BYTES, abandon_on_cancel=True)

        async def write_stdout(data: bytes) -> None:
            def put() -> None:
                stdout.write(data)
                stdout.flush()

            await anyio.to_thread.run_sync(put)

        read, write = read or read_stdin, write or write_stdout
    reader, writer = read, write
    lock = anyio.Lock()
    in_send, in_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    out_send, out_recv = anyio.create_memory_object_stream[SessionMessage](0)

    async def put(line: bytes) -> None:
        async with lock:
            await writer(line + b"\n")

    async def pump_in() -> None:
        async with in_send:
            async for line in bounded_lines(reader, max_message_bytes):
                if isinstance(line, Oversized):
                    log.warning("refused an MCP message of %d bytes (limit %d)", line.size, max_message_bytes)
                    await put(json.dumps(too_large_error(line, max_message_bytes)).encode())
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:
                    await in_send.send(exc)
                    continue
                await in_send.send(SessionMessage(message))

    async def pump_out() -> None:
        async with out_recv:
            async for item in out_recv:
                await put(item.message.model_dump_json(by_alias=True, exclude_unset=True).encode())

    lowlevel = server._lowlevel_server
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            await lowlevel.run(in_recv, out_send, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        for restore in reversed(restores):
            restore()


def _claim_std(restores: list[Callable[[], None]]) -> tuple[Any, Any]:
    """stdin/stdout for the wire; fd 0 and 1 diverted while serving (as the SDK's own stdio server does), so a
    handler's stray print cannot corrupt a message. Falls back to the plain streams without that SDK helper."""
    try:
        from mcp.server.stdio import _claim_fd, _open_stdin_diversion, _open_stdout_diversion
    except ImportError:
        return sys.stdin.buffer, sys.stdout.buffer
    stdin, restore_in = _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)
    if restore_in is not None:
        restores.append(restore_in)
    stdout, restore_out = _claim_fd(1, sys.stdout, "wb", _open_stdout_diversion)
    if restore_out is not None:
        restores.append(restore_out)
    return stdin, stdout
