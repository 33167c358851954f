"""The MiniLM ONNX embedder behind ``semantic()``: offline, pinned, deterministic, meaningful, redaction-safe."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.explain import (
    CharFrequencyEmbedder,
    Embedder,
    SemanticScorer,
    embedders,
    localize_context_bug,
    semantic,
)
from agentfootprint.explain.embedders import INSTALL_HINT, EmbedderUnavailableError, MiniLMEmbedder, minilm
from agentfootprint.explain.scoring import cosine
from agentfootprint.providers import mock


def _minilm_or_skip() -> MiniLMEmbedder:
    try:
        return minilm()
    except EmbedderUnavailableError as exc:
        pytest.skip(f"the 'embeddings' extra is not installed ({exc})")


@pytest.fixture
def real() -> MiniLMEmbedder:
    return _minilm_or_skip()


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    embedders._load.cache_clear()
    yield
    embedders._load.cache_clear()


def test_absent_extra_raises_typed_error_with_the_pip_command(
    monkeypatch: pytest.MonkeyPatch, fresh_cache: None
) -> None:
    def missing(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(EmbedderUnavailableError) as info:
        semantic()
    assert INSTALL_HINT in str(info.value) and isinstance(info.value, ImportError)


def test_vectors_are_deterministic_and_unit_length(real: MiniLMEmbedder) -> None:
    texts = ["Refunds only within 30 days of purchase.", "Style rule #12: two sentences max."]
    first, second = real.embed(texts), real.embed(texts)
    assert first == second
    assert [len(v) for v in first] == [embedders.DIMENSION] * 2
    assert all(abs(sum(x * x for x in v) - 1.0) < 1e-4 for v in first)
    assert real.embed(texts[:1])[0] == first[0]  # a vector does not depend on its batch


def test_similar_sentences_score_higher_than_unrelated(real: MiniLMEmbedder) -> None:
    a, b, c = real.embed(
        [
            "The customer was refunded because of VIP status.",
            "A VIP client got their money back.",
            "Limit replies to two sentences.",
        ]
    )
    assert cosine(a, b) > cosine(a, c) + 0.3


def test_model_file_digest_is_verified(real: MiniLMEmbedder, tmp_path: Path, fresh_cache: None) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the pinned model")
    with pytest.raises(EmbedderUnavailableError, match="sha256"):
        minilm(model_path=fake)


async def test_flagship_semantic_ranking(real: MiniLMEmbedder) -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    report = await localize_context_bug(agent, samples=0, scorer=semantic())
    ranks = {s.id: s.rank for s in report.suspects}
    assert report.scorer == "semantic" and report.mode == "correlational"
    assert ranks["vip-override-fact"] < ranks["style-fact"]
    assert report.suspects[0].id == "vip-override-fact"


class SpyEmbedder:
    """Records every text handed to the wrapped embedder."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return self.inner.embed(texts)


@pytest.mark.parametrize("which", ["minilm", "char-frequency"])
async def test_redacted_value_never_reaches_embed(which: str) -> None:
    inner: Embedder = _minilm_or_skip() if which == "minilm" else CharFrequencyEmbedder()
    secret = "SSN-987-65-4321"
    profile = define_tool(
        name="profile",
        description="Customer profile",
        input_schema={"type": "object"},
        execute=lambda args, ctx: {"name": "Ann", "ssn": secret},
    )
    provider = mock(replies=[{"tool_calls": [{"id": "p1", "name": "profile", "args": {}}]}, "Done for Ann."])
    agent = (
        Agent.create(provider=provider, model="m")
        .tool(profile)
        .redact(keys=["ssn"])
        .fact(define_fact(id="f", data="Ann is a customer."))
        .build()
    )
    await agent.run("who is the customer?")
    spy = SpyEmbedder(inner)
    report = await localize_context_bug(agent, samples=0, scorer=SemanticScorer(spy))
    assert report.suspects and any('"ssn"' in text for text in spy.seen)  # the tool result was embedded, redacted
    assert not any(secret in text for text in spy.seen)
