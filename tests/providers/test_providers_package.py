"""The package surface: exported names, lazy HTTP client import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import agentfootprint.providers as providers

REQUIRED = [
    "mock",
    "MockProvider",
    "MockExhaustedError",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "StreamChunk",
    "ProviderAttempt",
    "Provider",
    "openai_compatible",
    "ollama",
    "anthropic",
    "with_retry",
    "with_fallback",
    "ProviderError",
    "ProviderConnectionError",
    "ProviderAuthError",
    "ModelNotFoundError",
    "RateLimitError",
    "ProviderServerError",
    "ProviderTimeoutError",
    "ProviderRequestError",
]


def test_contract_names_are_exported() -> None:
    missing = [name for name in REQUIRED if not hasattr(providers, name)]
    assert missing == []
    assert sorted(providers.__all__) == providers.__all__
    assert all(hasattr(providers, name) for name in providers.__all__)


def test_import_does_not_load_the_http_client() -> None:
    src = Path(providers.__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    code = "import sys, agentfootprint.providers; print('httpx2' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "False"
