"""One contract for the three vector stores: in memory, SQLite + sqlite-vec, PostgreSQL + pgvector."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.context.embedders import HashingEmbedder
from agentfootprint.context.postgres_vectors import PostgresVectorStore, ts_query
from agentfootprint.context.sqlite_vectors import SQLiteVectorStore, fts_query
from agentfootprint.context.vectors import InMemoryVectorStore, StoredItem, VectorStore, fuse

EMBED = HashingEmbedder(64)
TEXTS = {
    "refunds": "Refunds are accepted within 30 days of purchase with a receipt.",
    "shipping": "Standard shipping takes five business days across the country.",
    "warranty": "The warranty covers manufacturing defects for two years.",
    "returns": "Returns of opened electronics carry a restocking fee.",
}


def items(texts: dict[str, str] = TEXTS) -> list[StoredItem]:
    vectors = EMBED.embed(list(texts.values()))
    return [
        StoredItem(id=k, text=t, vector=tuple(v), metadata={"document_id": f"{k}.md"})
        for (k, t), v in zip(texts.items(), vectors, strict=True)
    ]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], VectorStore]]:
    if request.param == "memory":
        yield InMemoryVectorStore
    elif request.param == "sqlite":
        yield lambda: SQLiteVectorStore(tmp_path / f"v-{uuid.uuid4().hex[:6]}.db")
    else:
        dsn = request.getfixturevalue("pgvector_dsn")
        yield lambda: PostgresVectorStore(dsn, dimension=64, table=f"t_{uuid.uuid4().hex[:8]}")


def test_nearest_keyword_get_count_and_drop(make_store: Callable[[], VectorStore]) -> None:
    store = make_store()
    store.upsert("docs", items())
    store.upsert("other", items({"refunds": "Refunds are never accepted."}))
    query = EMBED.embed(["within how many days are refunds accepted"])[0]
    nearest = store.nearest("docs", query, 2)
    assert nearest[0][0].id == "refunds" and nearest[0][0].metadata == {"document_id": "refunds.md"}
    assert nearest[0][1] > nearest[1][1] and len(nearest) == 2
    keyword = store.keyword("docs", "restocking fee?", 3)
    assert [i.id for i, _ in keyword] == ["returns"] and keyword[0][1] > 0
    assert [i.id for i in store.get("docs", ["warranty", "missing", "refunds"])] == ["warranty", "refunds"]
    assert store.count("docs") == 4 and store.count("other") == 1 and store.count("none") == 0
    assert [i.text for i, _ in store.nearest("other", query, 5)] == ["Refunds are never accepted."]
    assert store.drop("docs") == 4 and store.count("docs") == 0 and store.nearest("docs", query, 3) == []
    assert store.count("other") == 1


def test_upsert_replaces_an_item_by_id_text_vector_and_all(make_store: Callable[[], VectorStore]) -> None:
    store = make_store()
    store.upsert("docs", items())
    replacement = items({"refunds": "Gift cards cannot be exchanged for cash."})
    store.upsert("docs", replacement)
    assert store.count("docs") == 4
    assert store.keyword("docs", "refunds", 5) == []
    hit = store.nearest("docs", EMBED.embed(["gift cards cash"])[0], 1)[0][0]
    assert (hit.id, hit.text) == ("refunds", "Gift cards cannot be exchanged for cash.")


def test_items_without_vectors_are_found_by_keyword_only(make_store: Callable[[], VectorStore]) -> None:
    store = make_store()
    store.upsert("docs", [StoredItem(id="plain", text="A note about invoices.")])
    store.upsert("docs", items({"refunds": TEXTS["refunds"]}))
    assert [i.id for i, _ in store.keyword("docs", "invoices", 5)] == ["plain"]
    assert [i.id for i, _ in store.nearest("docs", EMBED.embed(["invoices"])[0], 5)] == ["refunds"]


def test_hostile_queries_and_vectors_are_refused_or_harmless(make_store: Callable[[], VectorStore]) -> None:
    store = make_store()
    store.upsert("docs", items())
    for query in ['" OR 1=1 --', "NEAR(a b)", "*", "refunds' ; DROP TABLE x; --", "a & b | !c", ""]:
        assert isinstance(store.keyword("docs", query, 5), list)
    assert store.count("docs") == 4
    with pytest.raises(ValueError, match="dimensions"):
        store.nearest("docs", [1.0, 0.0], 2)
    with pytest.raises(ValueError, match="finite"):
        store.upsert("docs", [StoredItem(id="bad", text="t", vector=tuple([float("nan")] * 64))])
    assert store.count("docs") == 4


def test_query_builders_keep_only_word_tokens() -> None:
    assert fts_query('refunds" OR *') == '"refunds" OR "or"'
    assert fts_query("!!!") is None
    assert ts_query("a & b | !c:*") == "a | b | c"


def test_fuse_is_reciprocal_rank_fusion() -> None:
    a, b, c = (StoredItem(id=x, text=x) for x in "abc")
    fused = fuse([[(a, 0.9), (b, 0.5)], [(b, 3.0), (c, 1.0)]], 3)
    assert [i.id for i, _ in fused] == ["b", "a", "c"]
    assert fused[0][1] == round(1 / 62 + 1 / 61, 6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["tenant-a", "tenant-b", "tenant-c"]), min_size=1, max_size=8))
def test_property_namespaces_never_leak_in_sqlite(tmp_path: Path, owners: list[str]) -> None:
    store = SQLiteVectorStore(tmp_path / f"p-{uuid.uuid4().hex[:6]}.db")
    for n, owner in enumerate(owners):
        store.upsert(owner, items({f"{owner}-{n}": f"secret number {n} of {owner}"}))
    query = EMBED.embed(["secret number"])[0]
    for owner in set(owners):
        found = store.nearest(owner, query, 50) + store.keyword(owner, "secret number", 50)
        assert {i.id.split("-")[0] + "-" + i.id.split("-")[1] for i, _ in found} == {owner}
