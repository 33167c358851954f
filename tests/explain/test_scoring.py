"""Influence proxies, exactly: lexical coverage/precision, cosine, answer similarity and ranking confidence."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from agentfootprint.explain.scoring import (
    CharFrequencyEmbedder,
    Embedder,
    LexicalScorer,
    Scorer,
    SemanticScorer,
    answer_similarity,
    cosine,
    lexical,
    ranking_confidence,
    semantic,
)


def test_lexical_is_the_harmonic_mean_of_weighted_coverage_and_precision() -> None:
    s = lexical()
    assert isinstance(s, LexicalScorer) and isinstance(s, Scorer) and s.name == "lexical"
    assert s.score("alpha beta", "alpha beta") == 1.0
    assert s.score("alpha beta", "Alpha gamma") == 0.5
    assert s.score("alpha beta gamma delta", "alpha") == 0.4
    alpha, beta = 1 + math.log(6), 1 + math.log(5)
    coverage = alpha / (alpha + 2 * beta)
    assert s.score("alpha alpha", "alpha beta beta") == round(2 * coverage / (coverage + 1), 6) == 0.516878
    assert s.score("alpha", "gamma delta") == 0.0
    assert s.score("", "alpha") == 0.0 and s.score("alpha", "") == 0.0 and s.score("the of", "alpha") == 0.0


def test_char_frequency_embedder_and_cosine() -> None:
    (a, ab, empty) = CharFrequencyEmbedder().embed(["a", "ab?", ""])
    assert len(a) == 32 and a[1] == 1.0 and sum(a) == 1.0
    assert ab[1] == ab[2] == ab[31] == 1.0 and sum(ab) == 3.0
    assert empty == [0.0] * 32
    (counted,) = CharFrequencyEmbedder().embed(["aaA"])  # a repeated character counts each time; A shares a's bucket
    assert counted[1] == 3.0 and sum(counted) == 3.0
    assert cosine(a, a) == pytest.approx(1.0)
    assert cosine(a, ab) == pytest.approx(1 / math.sqrt(3))
    assert cosine(a, empty) == 0.0 and cosine(empty, a) == 0.0
    assert cosine([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert cosine([3.0, 4.0], [3.0, 4.0, 9.0]) == pytest.approx(25 / (5 * math.sqrt(106)))


class Fixed:
    def __init__(self, vectors: list[list[float]]) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.vectors


def test_semantic_scorer_clips_at_zero_and_skips_blank_text() -> None:
    opposite = Fixed([[1.0, 0.0], [-1.0, 0.0]])
    assert isinstance(opposite, Embedder)
    s = semantic(opposite)
    assert isinstance(s, SemanticScorer) and s.name == "semantic" and s.embedder is opposite
    assert s.score("source", "answer") == 0.0 and opposite.calls == [["source", "answer"]]
    assert s.score("  ", "answer") == 0.0 and s.score("source", "\n") == 0.0 and len(opposite.calls) == 1
    assert SemanticScorer(Fixed([[1.0, 1.0], [1.0, 0.0]])).score("a", "b") == round(1 / math.sqrt(2), 6)


def test_answer_similarity() -> None:
    assert answer_similarity("abc", "abc") == 1.0
    assert answer_similarity("ab", "cd") == 0.0
    assert answer_similarity("abcd", "abxy") == 0.5
    assert answer_similarity("", "") == 1.0


def test_ranking_confidence_levels_and_boundary() -> None:
    single = ranking_confidence([0.3])
    assert (single.level, single.margin, single.note) == ("single", 1.0, "only one suspect; nothing to separate")
    assert ranking_confidence([]).level == "single"
    tied = ranking_confidence([0.48, 0.1, 0.5])
    assert (tied.level, tied.margin) == ("tied", 0.02)
    assert tied.note == "top-2 margin 0.020: proxy scores alone cannot separate them; the ablation test can"
    apart = ranking_confidence([0.1, 0.9, 0.5])
    assert (apart.level, apart.margin) == ("separated", 0.4)
    assert apart.note == "top-2 margin 0.400: the proxy ranks them apart (still not causal)"
    assert ranking_confidence([0.55, 0.5]).level == "separated"  # exactly the margin separates
    assert ranking_confidence([0.55, 0.5], tie_margin=0.06).level == "tied"


def test_the_ranking_margin_is_rounded_to_six_places() -> None:
    assert ranking_confidence([0.9, 0.1234567]).margin == 0.776543
