"""The offline MiniLM embedder, as the semantic influence scorer uses it (it lives in ``agentfootprint.context``)."""

from agentfootprint.context.embedders import (
    DIMENSION,
    INSTALL_HINT,
    MAX_TOKENS,
    MODEL_ID,
    EmbedderUnavailableError,
    MiniLMEmbedder,
    _load,
    minilm,
    sha256_file,
)

__all__ = [
    "DIMENSION",
    "INSTALL_HINT",
    "MAX_TOKENS",
    "MODEL_ID",
    "EmbedderUnavailableError",
    "MiniLMEmbedder",
    "_load",
    "minilm",
    "sha256_file",
]
