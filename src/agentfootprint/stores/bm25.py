"""Okapi BM25 over a fixed list of texts (pure Python): the keyword ranking of the in-memory vector store and of
the context package's RAG index."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN_RE = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (the BM25 analyzer)."""
    return [t.lower() for t in _TOKEN_RE.findall(text)]


class BM25Scores:
    """BM25 scores of ``texts`` (in order) for a query; ``k1`` and ``b`` are Okapi's parameters."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._tfs: list[Counter[str]] = [Counter(tokenize(t)) for t in texts]
        self._lens = [sum(tf.values()) for tf in self._tfs]
        self._avg = (sum(self._lens) / len(self._lens)) if self._lens else 0.0
        df: Counter[str] = Counter()
        for tf in self._tfs:
            df.update(tf.keys())
        n = len(self._tfs)
        self._idf = {term: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}

    def score(self, query: str) -> list[float]:
        """BM25 score of every text for ``query``, in order."""
        terms = tokenize(query)
        out: list[float] = []
        for tf, length in zip(self._tfs, self._lens, strict=True):
            s = 0.0
            norm = self.k1 * (1.0 - self.b + self.b * (length / self._avg if self._avg else 0.0))
            for term in terms:
                f = tf.get(term, 0)
                if f:
                    s += self._idf[term] * f * (self.k1 + 1.0) / (f + norm)
            out.append(s)
        return out

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """The indexes and scores of the ``k`` best texts with a positive score (ties keep the order)."""
        scores = self.score(query)
        ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
        return [(i, scores[i]) for i in ranked[:k]]


__all__ = ["BM25Scores", "tokenize"]
