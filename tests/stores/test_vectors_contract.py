"""One contract for vector stores on every backend (through ``open_store``): upsert, nearest, keyword, get, drop."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.context.embedders import HashingEmbedder
from agentfootprint.stores import StoredItem, StoreFamily, VectorStore

EMBED = HashingEmbedder(384)
TEXTS = {"tea": "green tea leaves steeped briefly", "rust": "iron oxide forms on wet steel", "sky": "blue sky"}


@pytest.fixture
def vectors(family: StoreFamily, request: pytest.FixtureRequest) -> VectorStore:
    if family.kind == "postgresql" and not request.getfixturevalue("postgres_server")[1]:
        pytest.skip("this PostgreSQL has no pgvector (make test-setup installs it)")
    if family.kind == "sqlite":
        pytest.importorskip("sqlite_vec", reason="sqlite-vec is not installed")
    return family.vectors


def stored() -> list[StoredItem]:
    vecs = EMBED.embed(list(TEXTS.values()))
    return [StoredItem(k, t, tuple(v), {"n": i}) for i, ((k, t), v) in enumerate(zip(TEXTS.items(), vecs, strict=True))]


def test_items_are_found_by_vector_by_word_and_by_id(vectors: VectorStore, reopen: Any) -> None:
    assert isinstance(vectors, VectorStore)
    vectors.upsert("ns", stored())
    vectors.upsert("other", stored()[:1])
    query = EMBED.embed([TEXTS["rust"]])[0]
    top, score = vectors.nearest("ns", query, 1)[0]
    assert top.id == "rust" and score == pytest.approx(1.0, abs=1e-4)
    assert [i.id for i, _ in vectors.keyword("ns", "steel; DROP TABLE x", 3)] == ["rust"]
    assert [(i.id, dict(i.metadata)) for i in vectors.get("ns", ["sky", "nope", "tea"])] == [
        ("sky", {"n": 2}),
        ("tea", {"n": 0}),
    ]
    vectors.upsert("ns", [StoredItem("sky", "grey sky", None, {})])
    assert vectors.get("ns", ["sky"])[0].text == "grey sky" and vectors.count("ns") == 3
    assert vectors.drop("ns") == 3 and vectors.count("ns") == 0 and vectors.count("other") == 1


def test_a_vector_of_the_wrong_size_or_not_finite_is_refused(vectors: VectorStore) -> None:
    vectors.upsert("ns", stored())
    for bad in ([1.0, 2.0], [float("nan")] * 384):
        with pytest.raises(ValueError):
            vectors.nearest("ns", bad, 1)
