"""Typed errors of the local model helpers (``local_llm``): missing extra, wrong model file, server start."""

from __future__ import annotations

from typing import ClassVar

from agentfootprint.providers.errors import ProviderConfigError, ProviderError

INSTALL_HINT = "pip install 'agentfootprint[local-llm]'"


class LocalLLMError(ProviderConfigError):
    """The local model could not be set up or started (a setup error: never retried or fallen back from)."""

    code: str = "ERR_LOCAL_LLM"


class LocalLLMMissingError(LocalLLMError, ImportError):
    """The llama.cpp runtime (the ``local-llm`` extra) or a model's package is not installed."""

    code: str = "ERR_LOCAL_LLM_MISSING"


class LocalModelFileError(LocalLLMError):
    """The GGUF model file is absent from the installed package, or unreadable."""

    code: str = "ERR_LOCAL_LLM_MODEL_FILE"


class ModelDigestError(LocalLLMError):
    """The GGUF model file's sha256 is not the pinned one (corrupt or substituted file)."""

    code: str = "ERR_LOCAL_LLM_DIGEST"

    def __init__(self, message: str, *, expected: str = "", actual: str = "", code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.expected = expected
        self.actual = actual


CPU_HINT = (
    "the prebuilt llama.cpp wheel may use CPU instructions this machine cannot run; build it here instead: "
    "pip install --force-reinstall --no-binary xllamacpp xllamacpp"
)
_SIGNAL_EXITS = {-4, -11, 132, 139}


def crash_hint(exit_code: int | None) -> str:
    """Advice for a server that died by SIGILL/SIGSEGV (usually a CPU-specific build), else nothing."""
    return f"; {CPU_HINT}" if exit_code in _SIGNAL_EXITS else ""


class LocalServerStartError(LocalLLMError):
    """The llama.cpp server exited or did not become ready; ``stderr_tail`` holds its last log lines."""

    code: str = "ERR_LOCAL_LLM_SERVER_START"

    def __init__(self, message: str, *, stderr_tail: str = "", code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.stderr_tail = stderr_tail


class LocalServerCrashedError(ProviderError):
    """The llama.cpp server died while answering (not retryable); ``exit_code`` and ``stderr_tail`` say how."""

    code: str = "ERR_LOCAL_LLM_SERVER_CRASHED"
    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        exit_code: int | None = None,
        stderr_tail: str = "",
        provider: str = "local_llm",
        code: str | None = None,
    ) -> None:
        super().__init__(message, provider=provider, code=code)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
