"""RAG a real app can use: loaders, splitters, index_corpus into a vector store, hybrid retrieval, chunk sources."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.agent import UnknownSourceError
from agentfootprint.context import InvalidInjectionError, define_rag
from agentfootprint.context.corpus import (
    Document,
    LoaderError,
    StoreRetriever,
    html_to_text,
    index_corpus,
    load_directory,
    load_html,
    load_markdown,
    load_pdf,
    split_markdown,
    split_text,
)
from agentfootprint.context.embedders import HashingEmbedder
from agentfootprint.context.sqlite_vectors import SQLiteVectorStore
from agentfootprint.context.vectors import InMemoryVectorStore
from agentfootprint.explain import backtrack
from agentfootprint.providers import LLMRequest, mock

EMBED = HashingEmbedder(128)
POLICY_MD = """# Refund policy

Refunds are accepted within 30 days of purchase.

## Electronics

Opened electronics carry a 15% restocking fee.

# Shipping

Orders ship in five business days.
"""


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF whose page shows ``text`` in Helvetica (hand-written objects, exact xref offsets)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "policies").mkdir(parents=True)
    (root / "policies" / "refunds.md").write_text(POLICY_MD)
    (root / "faq.html").write_text(
        "<html><head><title>FAQ</title><style>p{color:red}</style><script>alert('x')</script></head>"
        "<body><h1>Warranty</h1><p>The warranty covers defects for <b>two years</b>.</p></body></html>"
    )
    (root / "notes.txt").write_text("Gift cards cannot be exchanged for cash.")
    (root / "security.pdf").write_bytes(minimal_pdf("Passwords are stored with Argon2."))
    (root / "image.png").write_bytes(b"\x89PNG")
    return root


def test_loaders_read_text_markdown_html_and_pdf(docs_dir: Path) -> None:
    docs = load_directory(docs_dir)
    assert [d.id for d in docs] == ["faq.html", "notes.txt", "policies/refunds.md", "security.pdf"]
    md = load_markdown(docs_dir / "policies" / "refunds.md")
    assert md.metadata["title"] == "Refund policy" and md.metadata["type"] == "markdown"
    html = load_html(docs_dir / "faq.html")
    assert html.text == "# Warranty\n\nThe warranty covers defects for two years." and html.metadata["title"] == "FAQ"
    pdf = load_pdf(docs_dir / "security.pdf")
    assert pdf.text == "Passwords are stored with Argon2." and pdf.metadata["pages"] == 1


def test_loader_errors_name_the_file_not_its_content(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 secret-content garbage")
    with pytest.raises(LoaderError) as info:
        load_pdf(tmp_path / "broken.pdf")
    assert "broken.pdf" in str(info.value) and "secret-content" not in str(info.value)
    assert info.value.code == "ERR_DOCUMENT_LOAD"
    with pytest.raises(LoaderError, match=r"missing\.md"):
        load_markdown(tmp_path / "missing.md")
    with pytest.raises(LoaderError, match="not a directory"):
        load_directory(tmp_path / "nope")


def test_html_to_text_drops_scripts_and_keeps_headings() -> None:
    text, title = html_to_text("<title>T</title><script>var s='<p>'</script><h2>Head</h2><p>a &amp; b</p>")
    assert (text, title) == ("## Head\n\na & b", "T")


def test_split_text_respects_size_overlap_and_word_boundaries() -> None:
    doc = Document(id="d", text=" ".join(f"word{i}." for i in range(300)))
    chunks = split_text(doc, size=200, overlap=40)
    assert all(len(c.text) <= 200 for c in chunks) and len(chunks) > 5
    assert [c.id for c in chunks[:2]] == ["d#0", "d#1"] and chunks[1].metadata["document_id"] == "d"
    for a, b in itertools.pairwise(chunks):
        assert b.text.split()[0] in a.text  # consecutive chunks overlap
        assert b.metadata["start"] > a.metadata["start"]
    assert all(c.text.split()[0].startswith("word") for c in chunks)  # never starts mid-word


@settings(max_examples=80, deadline=None)
@given(text=st.text(min_size=0, max_size=3000), size=st.integers(20, 400), overlap=st.integers(0, 10))
def test_property_split_text_covers_every_word_and_bounds_chunks(text: str, size: int, overlap: int) -> None:
    chunks = split_text(Document(id="p", text=text), size=size, overlap=overlap)
    assert all(0 < len(c.text) <= size for c in chunks)
    joined = " ".join(c.text for c in chunks)
    for word in text.split():
        if len(word) < size:
            assert word in joined


def test_split_markdown_keeps_the_heading_path_on_every_chunk() -> None:
    chunks = split_markdown(Document(id="refunds.md", text=POLICY_MD, metadata={"type": "markdown"}), size=200)
    assert [c.metadata["headings"] for c in chunks] == [
        ["Refund policy"],
        ["Refund policy", "Electronics"],
        ["Shipping"],
    ]
    assert chunks[1].text == "Refund policy > Electronics\n\nOpened electronics carry a 15% restocking fee."
    assert chunks[2].id == "refunds.md#2"


def test_splitters_validate_sizes() -> None:
    with pytest.raises(InvalidInjectionError, match="chunk size"):
        split_text(Document(id="d", text="x"), size=5)
    with pytest.raises(InvalidInjectionError, match="overlap"):
        split_text(Document(id="d", text="x"), size=100, overlap=90)


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_index_corpus_and_hybrid_retrieval(docs_dir: Path, tmp_path: Path, backend: str) -> None:
    store = InMemoryVectorStore() if backend == "memory" else SQLiteVectorStore(tmp_path / "rag.db")
    report = index_corpus(load_directory(docs_dir), store=store, corpus="kb", embedder=EMBED)
    assert (report.documents, report.embedded, report.embedder) == (4, True, "hashing-128")
    assert report.chunks == len(report.chunk_ids) == 6
    hybrid = StoreRetriever(store, corpus="kb", embedder=EMBED, mode="hybrid", candidates=3)
    top = hybrid("restocking fee for opened electronics")[0]
    assert top.id == "policies/refunds.md#1" and top.metadata["document_id"] == "policies/refunds.md"
    keyword = StoreRetriever(store, corpus="kb", mode="keyword")
    assert keyword("Argon2")[0].id == "security.pdf#0"
    assert hybrid.without(["policies/refunds.md#1"])("restocking fee for opened electronics")[0].id != top.id
    again = index_corpus(load_directory(docs_dir), store=store, corpus="kb", embedder=EMBED)
    assert again.chunks == 6 and store.count("rag:kb") == 6  # re-indexing replaces, never duplicates
    with pytest.raises(InvalidInjectionError, match="embedder"):
        StoreRetriever(store, corpus="kb", mode="vector")
    with pytest.raises(InvalidInjectionError, match="corpus"):
        index_corpus([], store=store, corpus="bad corpus!")


def answer_from_context(request: LLMRequest) -> str:
    if "restocking fee" in request.system_prompt:
        return "Opened electronics carry a 15% restocking fee."
    return "I could not find that."


async def test_every_landed_chunk_is_a_source_with_chunk_and_document_ids_and_is_ablatable(
    docs_dir: Path, tmp_path: Path
) -> None:
    store = SQLiteVectorStore(tmp_path / "rag.db")
    index_corpus(load_directory(docs_dir), store=store, corpus="kb", embedder=EMBED)
    rag = define_rag(id="kb", store=store, corpus="kb", embedder=EMBED, k=2)
    agent = Agent.create(provider=mock(respond=answer_from_context), model="m").rag(rag).build()
    result = await agent.run("Is there a restocking fee for opened electronics?")
    assert result.answer == "Opened electronics carry a 15% restocking fee."
    bt = backtrack(agent)
    chunk = bt.source("policies/refunds.md#1")
    assert chunk is not None and chunk.kind == "rag" and chunk.ablatable
    assert (chunk.document_id, chunk.parent) == ("policies/refunds.md", "kb")
    assert [h.kind for h in chunk.hops] == ["answer", "read", "landed", "allowed", "born"]
    assert chunk.hops[-1].detail.startswith("chunk policies/refunds.md#1 of document policies/refunds.md")
    assert bt.source("kb") is not None  # the retrieval as a whole is still a source
    ablated = agent.without("policies/refunds.md#1")
    redo = await ablated.run("Is there a restocking fee for opened electronics?")
    assert redo.answer == "I could not find that."
    with pytest.raises(UnknownSourceError):
        agent.without("no-such-chunk")


def test_define_rag_takes_exactly_one_source() -> None:
    store = InMemoryVectorStore()
    with pytest.raises(InvalidInjectionError, match="exactly one"):
        define_rag(id="r", store=store, documents=["x"])
    with pytest.raises(InvalidInjectionError, match="needs an embedder"):
        define_rag(id="r", store=store)
    rag: Any = define_rag(id="r", store=store, mode="keyword")
    assert rag.retriever.mode == "keyword"
