"""Influence scorers: proxies for how much a source's text shaped the answer (never a causal claim)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from agentfootprint._text import content_tokens


@runtime_checkable
class Scorer(Protocol):
    """Scores how strongly ``source`` is reflected in ``answer``, in [0, 1]."""

    name: str

    def score(self, source: str, answer: str) -> float: ...


class LexicalScorer:
    """Share of the answer's content words (weighted by rarity inside the source) that the source also contains."""

    name = "lexical"

    def score(self, source: str, answer: str) -> float:
        answer_tokens = content_tokens(answer)
        source_tokens = set(content_tokens(source))
        if not answer_tokens or not source_tokens:
            return 0.0
        weights = [1.0 + math.log(1 + len(t)) for t in answer_tokens]
        covered = sum(w for t, w in zip(answer_tokens, weights, strict=True) if t in source_tokens)
        coverage = covered / sum(weights)
        precision = len(source_tokens & set(answer_tokens)) / len(source_tokens)
        if coverage == 0:
            return 0.0
        return round(2 * coverage * precision / (coverage + precision), 6)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors (any dimension)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class CharFrequencyEmbedder:
    """A deterministic toy embedder: 32 buckets of character counts (no dependencies; for tests and demos)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * 32
            for ch in text:
                vec[ord(ch) % 32] += 1.0
            out.append(vec)
        return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0 or nb == 0 else dot / (na * nb)


class SemanticScorer:
    """Cosine similarity between embeddings of the source and the answer."""

    name = "semantic"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def score(self, source: str, answer: str) -> float:
        if not source.strip() or not answer.strip():
            return 0.0
        a, b = self.embedder.embed([source, answer])
        return round(max(0.0, cosine(a, b)), 6)


def lexical() -> LexicalScorer:
    return LexicalScorer()


def semantic(embedder: Embedder | None = None) -> SemanticScorer:
    """A semantic scorer; with no embedder, the MiniLM ONNX one (``embeddings`` extra) if installed."""
    if embedder is None:
        from agentfootprint.explain.embedders import minilm

        embedder = minilm()
    return SemanticScorer(embedder)


def answer_similarity(a: str, b: str) -> float:
    """How alike two answers read (character sequence ratio, 0..1)."""
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


class RankingConfidence(BaseModel):
    """Whether the top suspects' proxy scores can be told apart at all."""

    level: str
    margin: float
    note: str


def ranking_confidence(scores: Sequence[float], *, tie_margin: float = 0.05) -> RankingConfidence:
    if len(scores) < 2:
        return RankingConfidence(level="single", margin=1.0, note="only one suspect; nothing to separate")
    top = sorted(scores, reverse=True)
    margin = round(top[0] - top[1], 6)
    if margin < tie_margin:
        return RankingConfidence(
            level="tied",
            margin=margin,
            note=f"top-2 margin {margin:.3f}: proxy scores alone cannot separate them; the ablation test can",
        )
    return RankingConfidence(
        level="separated",
        margin=margin,
        note=f"top-2 margin {margin:.3f}: the proxy ranks them apart (still not causal)",
    )
