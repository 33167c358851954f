"""Retrieval as an injection: a retriever callable or a built-in BM25 index; chunks land with their ids."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentfootprint.context.cache import check_cache_policy
from agentfootprint.context.factories import _slot
from agentfootprint.context.injection import (
    CachePolicy,
    Injection,
    InjectionContext,
    InvalidInjectionError,
    Trigger,
    check_injection_id,
)
from agentfootprint.stores.bm25 import BM25Scores, tokenize

DEFAULT_RAG_HEADER = "Retrieved context:"
_MAX_K = 100


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable piece of text with a stable id (what backtrack names) and its retrieval score."""

    id: str
    text: str
    score: float = 0.0
    metadata: Mapping[str, Any] = field(default_factory=dict)


def as_chunk(value: Any, index: int) -> Chunk:
    """Coerce a ``Chunk``, ``{"id", "text"}`` dict or plain string (id ``doc-<index>``) into a Chunk."""
    if isinstance(value, Chunk):
        return value
    if isinstance(value, str):
        return Chunk(id=f"doc-{index}", text=value)
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        cid = value.get("id", f"doc-{index}")
        score = value.get("score", 0.0)
        return Chunk(
            id=str(cid),
            text=value["text"],
            score=float(score) if isinstance(score, int | float) else 0.0,
            metadata=dict(value.get("metadata") or {}),
        )
    raise InvalidInjectionError(
        f"a RAG chunk must be a Chunk, a str or a {{'id', 'text'}} dict, got {type(value).__name__}"
    )


class BM25Index:
    """A small in-process Okapi BM25 index (pure Python) over a fixed list of chunks."""

    def __init__(self, documents: Iterable[Chunk | str | Mapping[str, Any]], *, k1: float = 1.5, b: float = 0.75):
        self.chunks: list[Chunk] = [as_chunk(d, i) for i, d in enumerate(documents)]
        ids = [c.id for c in self.chunks]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise InvalidInjectionError(f"RAG document ids must be unique; repeated: {', '.join(dupes)[:200]}")
        self.k1 = k1
        self.b = b
        self._scores = BM25Scores([c.text for c in self.chunks], k1=k1, b=b)

    def score(self, query: str) -> list[float]:
        """BM25 score of every chunk for ``query``, in document order."""
        return self._scores.score(query)

    def search(self, query: str, k: int = 3) -> list[Chunk]:
        """The ``k`` best-scoring chunks with a positive score (ties keep document order)."""
        return [
            Chunk(
                id=self.chunks[i].id,
                text=self.chunks[i].text,
                score=round(score, 6),
                metadata=self.chunks[i].metadata,
            )
            for i, score in self._scores.top(query, k)
        ]

    def __call__(self, query: str) -> list[Chunk]:
        return self.search(query, k=len(self.chunks))


Retriever = Callable[[str], Sequence[Any]]
QueryFn = Callable[[InjectionContext], str]


def _default_query(ctx: InjectionContext) -> str:
    return ctx.user_message


@dataclass(frozen=True, slots=True)
class RagInjection(Injection):
    """An Injection whose text is the chunks retrieved for this iteration's query."""

    retriever: Retriever | None = None
    k: int = 3
    query: QueryFn = _default_query
    header: str = DEFAULT_RAG_HEADER
    excluded: frozenset[str] = frozenset()
    """Chunk ids never landed (``agent.without(chunk_id)``: the ablation seam for one chunk)."""

    def knows(self, chunk_id: str) -> bool:
        """Whether this retrieval can return a chunk with this id (its index or store holds it)."""
        if isinstance(self.retriever, BM25Index):
            return any(c.id == chunk_id for c in self.retriever.chunks)
        knows = getattr(self.retriever, "knows", None)
        return bool(knows(chunk_id)) if callable(knows) else False

    def retrieve(self, ctx: InjectionContext) -> list[Chunk]:
        """Run the retriever on the query and keep the top ``k`` chunks (never an excluded one)."""
        assert self.retriever is not None
        query = self.query(ctx)
        if not isinstance(query, str) or not query.strip():
            return []
        found = self.retriever(query)
        if inspect.isawaitable(found):
            close = getattr(found, "close", None)
            if callable(close):
                close()
            raise TypeError("RAG retriever must be synchronous (it returned an awaitable)")
        chunks = [as_chunk(c, i) for i, c in enumerate(found)]
        return [c for c in chunks if c.id not in self.excluded][: self.k]

    def render(self, ctx: InjectionContext) -> str:
        """The retrieved text ("" when nothing was found)."""
        rendered = self.render_record(ctx)
        return rendered[0] if rendered is not None else ""

    def render_record(self, ctx: InjectionContext) -> tuple[str, dict[str, Any]] | None:
        """Retrieved chunks as text plus their ids and scores, or None when nothing was found."""
        chunks = self.retrieve(ctx)
        if not chunks:
            return None
        lines = [self.header] if self.header else []
        lines.extend(f"[{c.id}] {c.text}" for c in chunks)
        extras = {
            "chunk_ids": [c.id for c in chunks],
            "chunk_scores": [c.score for c in chunks],
            "chunks": [
                {"id": c.id, "document_id": str(c.metadata.get("document_id", c.id)), "score": c.score, "text": c.text}
                for c in chunks
            ],
        }
        return "\n".join(lines), extras


def define_rag(
    *,
    id: str,
    retriever: Retriever | None = None,
    documents: Iterable[Chunk | str | Mapping[str, Any]] | None = None,
    store: Any = None,
    corpus: str = "default",
    embedder: Any = None,
    mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
    k: int = 3,
    slot: Literal["system_prompt", "messages"] = "system_prompt",
    query: QueryFn | None = None,
    role: Literal["user", "assistant"] = "user",
    header: str = DEFAULT_RAG_HEADER,
    cache: CachePolicy = "while-active",
    description: str = "",
) -> RagInjection:
    """Retrieval augmentation: a synchronous ``retriever(query) -> chunks``, a BM25 index over ``documents``, or a
    corpus ``index_corpus`` wrote into a vector ``store`` (``mode``: hybrid BM25 + vector, vector or keyword, with
    ``embedder``); the top ``k`` chunks for ``query(ctx)`` (default: the user message) land in ``slot``, each with
    its chunk id and document id."""
    check_injection_id(id)
    if sum(x is not None for x in (retriever, documents, store)) != 1:
        raise InvalidInjectionError(f"rag '{id}' takes exactly one of retriever=, documents= or store=")
    if store is not None:
        from agentfootprint.context.corpus import StoreRetriever

        retriever = StoreRetriever(store, corpus=corpus, embedder=embedder, mode=mode, candidates=max(20, 2 * k))
    if retriever is not None and not callable(retriever):
        raise InvalidInjectionError(f"rag '{id}' retriever must be a callable(query) -> list of chunks")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= _MAX_K:
        raise InvalidInjectionError(f"rag '{id}' k must be an int in 1..{_MAX_K}")
    if query is not None and not callable(query):
        raise InvalidInjectionError(f"rag '{id}' query must be a callable(ctx) -> str")
    if not isinstance(header, str):
        raise InvalidInjectionError(f"rag '{id}' header must be a string")
    check_cache_policy(cache, id)
    source: Retriever = retriever if retriever is not None else BM25Index(documents or ())
    return RagInjection(
        id=id,
        flavor="rag",
        trigger=Trigger(kind="always"),
        slot=_slot(slot),
        content="",
        cache=cache,
        role=role,
        description=description,
        retriever=source,
        k=k,
        query=query or _default_query,
        header=header,
    )


__all__ = ["DEFAULT_RAG_HEADER", "BM25Index", "Chunk", "RagInjection", "as_chunk", "define_rag", "tokenize"]
