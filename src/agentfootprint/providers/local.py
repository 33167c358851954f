"""A real model offline: a small GGUF shipped by a PyPI package, on llama.cpp from the prebuilt ``xllamacpp`` wheel.

``local_llm()`` locates and verifies the model, then serves it from a child process on 127.0.0.1 (``openai_compatible``
talks to it) or runs it in this process. Tools become constrained JSON replies (``json_tool_calling``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Literal

from agentfootprint.providers._llama import LlamaInProcessProvider, default_threads, require_runtime
from agentfootprint.providers._local_errors import (
    LocalLLMError,
    LocalLLMMissingError,
    LocalModelFileError,
    LocalServerCrashedError,
    LocalServerStartError,
    ModelDigestError,
    crash_hint,
)
from agentfootprint.providers._local_models import (
    GEMMA3,
    MODELS,
    SMOLLM2,
    LocalModel,
    lookup_model,
    model_file,
    smollm2_gguf,
    verify_sha256,
)
from agentfootprint.providers._local_server import LocalLLMServer
from agentfootprint.providers._models import LLMRequest, LLMResponse, StreamChunk
from agentfootprint.providers.base import BaseProvider, Provider
from agentfootprint.providers.errors import ProviderConfigError, ProviderConnectionError, ProviderError
from agentfootprint.providers.json_tools import JsonToolCallingProvider, json_tool_calling
from agentfootprint.providers.openai_compat import openai_compatible

__all__ = [
    "DEFAULT_MODEL_ALIAS",
    "GEMMA3",
    "MODELS",
    "SMOLLM2",
    "SMOLLM2_FILENAME",
    "SMOLLM2_SHA256",
    "JsonToolCallingProvider",
    "LlamaInProcessProvider",
    "LocalLLMError",
    "LocalLLMMissingError",
    "LocalLLMProvider",
    "LocalLLMServer",
    "LocalModel",
    "LocalModelFileError",
    "LocalServerCrashedError",
    "LocalServerStartError",
    "ModelDigestError",
    "json_tool_calling",
    "local_llm",
    "lookup_model",
    "model_file",
    "smollm2_gguf",
    "verify_sha256",
]

SMOLLM2_FILENAME = SMOLLM2.filename
SMOLLM2_SHA256 = SMOLLM2.sha256
DEFAULT_MODEL_ALIAS = SMOLLM2.alias


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
    model: str = SMOLLM2.key,
    mode: Literal["server", "in-process"] = "server",
    temperature: float = 0.0,
    seed: int = 0,
    max_tokens: int | None = 256,
    json_tools: bool = True,
    max_tool_rounds: int | None = None,
    answer_pattern: str | None = None,
    model_path: str | Path | None = None,
    expected_sha256: str | None = None,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    startup_timeout: float = 120.0,
    timeout: float = 120.0,
) -> LocalLLMProvider:
    """A small model on llama.cpp, offline (default SmolLM2-135M-Instruct); close it (or use ``with``).

    ``model`` picks a catalog model (``MODELS``); ``model_path`` runs any other GGUF (verified only if
    ``expected_sha256`` is given). ``json_tools`` maps tools to constrained JSON replies, which small models need;
    ``answer_pattern`` constrains the final answer. ``n_threads`` defaults to every CPU this process may use.
    """
    if mode not in ("server", "in-process"):
        raise ProviderConfigError("local_llm(): mode must be 'server' or 'in-process'")
    require_runtime()
    n_threads = n_threads if n_threads is not None else default_threads()
    if model_path is None:
        entry = lookup_model(model)
        path = (
            model_file(entry.key)
            if expected_sha256 is None
            else verify_sha256(model_file(entry.key, verify=False), expected_sha256)
        )
        alias = entry.alias
    else:
        path = Path(model_path)
        if not path.is_file():
            raise LocalModelFileError(f"model file not found: {path.name}")
        if expected_sha256 is not None:
            verify_sha256(path, expected_sha256)
        alias = path.stem
    server: LocalLLMServer | None = None
    backend: LlamaInProcessProvider | None = None
    inner: Provider
    if mode == "server":
        server = LocalLLMServer(
            path, n_ctx=n_ctx, n_threads=n_threads, seed=seed, model_alias=alias, startup_timeout=startup_timeout
        )
        base_url = server.start()
        inner = openai_compatible(base_url=base_url, api_key="", model=alias, timeout=timeout)
    else:
        backend = LlamaInProcessProvider(path, n_ctx=n_ctx, n_threads=n_threads, seed=seed, model_alias=alias)
        inner = backend
    if json_tools:
        inner = json_tool_calling(inner, max_tool_rounds=max_tool_rounds, answer_pattern=answer_pattern)
    return LocalLLMProvider(
        inner,
        model=alias,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        mode=mode,
        server=server,
        backend=backend,
    )
