"""llama.cpp in this process, from the prebuilt ``xllamacpp`` wheel: its native server, called without HTTP."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

from agentfootprint.providers._local_errors import INSTALL_HINT, LocalLLMMissingError
from agentfootprint.providers._models import LLMRequest, LLMResponse, StreamChunk
from agentfootprint.providers._wire import WireFormatError
from agentfootprint.providers.base import BaseProvider
from agentfootprint.providers.errors import ProviderConfigError, ProviderRequestError, ProviderResponseError
from agentfootprint.providers.openai_compat import _StreamState, parse_response, to_wire_messages, tools_to_wire

RUNTIME_MODULE = "xllamacpp"


class NativeServer(Protocol):
    """What this package uses of ``xllamacpp.Server`` (the wheel ships no type information)."""

    @property
    def listening_address(self) -> str:
        """``host:port`` of its HTTP listener."""
        ...

    def handle_chat_completions(self, body: dict[str, Any], on_chunk: Callable[[Any], bool] | None = None, /) -> Any:
        """One Chat Completions request; with ``on_chunk``, each stream chunk (return True to stop)."""
        ...


def require_runtime() -> Any:
    """The ``xllamacpp`` module, or ``LocalLLMMissingError`` saying how to install it."""
    if importlib.util.find_spec(RUNTIME_MODULE) is None:
        raise LocalLLMMissingError(
            f"the llama.cpp runtime is not installed (module {RUNTIME_MODULE!r} not found); run: {INSTALL_HINT}"
        )
    # OpenMP threads that spin while waiting starve everything else on a busy machine; let them sleep instead.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return importlib.import_module(RUNTIME_MODULE)


def default_threads() -> int:
    """All CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def start_native_server(
    model_path: str | Path,
    *,
    n_ctx: int,
    n_threads: int | None,
    seed: int,
    model_alias: str,
    host: str = "127.0.0.1",
    port: int = 0,
) -> NativeServer:
    """An ``xllamacpp.Server`` for one GGUF: one slot, no prompt cache, quiet logs, listening on loopback."""
    xlc = require_runtime()
    threads = n_threads or default_threads()
    params = xlc.CommonParams()
    params.model.path = str(model_path)
    params.model_alias = {model_alias}
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cache_prompt = False
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.seed = seed
    params.verbosity = -1
    params.warmup = False
    params.hostnames = [host]
    params.port = port
    server: NativeServer = xlc.Server(params)
    return server


class LlamaInProcessProvider(BaseProvider):
    """llama.cpp's own server code in this process (thread-safe), fed Chat Completions requests as dicts.

    Prompt caching is off, so at temperature 0 an answer depends only on its own request.
    """

    carries_forced_tool_choice = False
    carries_native_output = True

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        model_alias: str = "local",
        name: str = "llama_cpp",
    ) -> None:
        self.name = name
        self.model_alias = model_alias
        self._lock = threading.Lock()
        self._server: NativeServer | None = start_native_server(
            model_path, n_ctx=n_ctx, n_threads=n_threads, seed=seed, model_alias=model_alias
        )

    def __repr__(self) -> str:
        return f"LlamaInProcessProvider(name={self.name!r}, model={self.model_alias!r})"

    def body(self, request: LLMRequest) -> dict[str, Any]:
        """The Chat Completions body llama.cpp receives for ``request``."""
        body: dict[str, Any] = {
            "model": self.model_alias,
            "messages": to_wire_messages(request.system_prompt, request.messages),
            "cache_prompt": False,
        }
        if request.tools:
            body["tools"] = tools_to_wire(request.tools)
        for key in ("seed", "temperature", "max_tokens", "response_format"):
            value = getattr(request, key)
            if value is not None:
                body[key] = value
        return body

    def _native(self) -> NativeServer:
        if self._server is None:
            raise ProviderConfigError(f"{self.name}: the model was closed")
        return self._server

    def _refused(self, exc: ValueError) -> ProviderRequestError:
        return ProviderRequestError(f"{self.name}: llama.cpp refused the request: {exc}", provider=self.name)

    def _call(self, body: dict[str, Any]) -> Any:
        server = self._native()
        try:
            return server.handle_chat_completions(body)
        except ValueError as exc:
            raise self._refused(exc) from None

    def _response(self, data: Any) -> LLMResponse:
        try:
            response = parse_response(data)
        except WireFormatError as exc:
            raise ProviderResponseError(
                f"{self.name}: unreadable llama.cpp answer: {exc}", provider=self.name
            ) from None
        return response.model_copy(update={"model": self.model_alias})

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One chat completion, computed in a worker thread."""
        return self._response(await asyncio.to_thread(self._call, self.body(request)))

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Token chunks from a worker thread as they are produced, then ``done`` with the full response."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        cancel = threading.Event()
        body = {**self.body(request), "stream": True, "stream_options": {"include_usage": True}}

        def on_chunk(chunk: Any) -> bool:
            loop.call_soon_threadsafe(queue.put_nowait, ("chunk", chunk))
            return cancel.is_set()

        def produce() -> None:
            try:
                self._native().handle_chat_completions(body, on_chunk)
                loop.call_soon_threadsafe(queue.put_nowait, ("end", None))
            except ValueError as exc:
                loop.call_soon_threadsafe(queue.put_nowait, ("error", self._refused(exc)))
            except Exception as exc:
                loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))

        worker = loop.run_in_executor(None, produce)
        state = _StreamState()
        try:
            while True:
                kind, item = await queue.get()
                if kind == "error":
                    raise item
                if kind == "end":
                    break
                try:
                    pieces = state.feed(item)
                except WireFormatError as exc:
                    raise ProviderResponseError(
                        f"{self.name}: unreadable stream chunk: {exc}", provider=self.name
                    ) from None
                for piece_kind, piece in pieces:
                    yield StreamChunk(kind="text" if piece_kind == "text" else "reasoning", text=piece)
        finally:
            cancel.set()
            await worker
        for piece_kind, piece in state.finish():
            yield StreamChunk(kind="text" if piece_kind == "text" else "reasoning", text=piece)
        calls = state.tool_calls()
        for chunk in state.closing_chunks(calls, self.model_alias):
            yield chunk

    def close(self) -> None:
        """Free the model's memory; later calls raise."""
        with self._lock:
            server, self._server = self._server, None
        del server
