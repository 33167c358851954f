"""A knowledge base an agent answers from: Markdown, HTML and text files indexed into SQLite (sqlite-vec), hybrid
retrieval, and each retrieved chunk traced (and ablated) by its chunk id and document id. Runs offline."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from agentfootprint import Agent
from agentfootprint.context import define_rag
from agentfootprint.context.corpus import index_corpus, load_directory
from agentfootprint.context.embedders import HashingEmbedder
from agentfootprint.context.sqlite_vectors import SQLiteVectorStore
from agentfootprint.explain import backtrack
from agentfootprint.providers import LLMRequest, mock

DOCS = {
    "policies/refunds.md": "# Refunds\n\nRefunds are accepted within 30 days.\n\n## Electronics\n\n"
    "Opened electronics carry a 15% restocking fee.\n",
    "faq.html": "<h1>Warranty</h1><p>The warranty covers defects for two years.</p>",
    "notes.txt": "Gift cards cannot be exchanged for cash.",
}


def answer(request: LLMRequest) -> str:
    """A scripted model that answers only from what retrieval put in its prompt."""
    if "restocking fee" in request.system_prompt:
        return "Yes: opened electronics carry a 15% restocking fee."
    return "I could not find that in the knowledge base."


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        for name, text in DOCS.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        embedder = HashingEmbedder()
        store = SQLiteVectorStore(Path(tmp) / "kb.db")
        report = index_corpus(load_directory(root), store=store, corpus="kb", embedder=embedder)
        print(f"indexed {report.chunks} chunks from {report.documents} documents")
        rag = define_rag(id="kb", store=store, corpus="kb", embedder=embedder, k=2)
        agent = Agent.create(provider=mock(respond=answer), model="m").rag(rag).build()
        question = "Is there a restocking fee on opened electronics?"
        print("answer:", (await agent.run(question)).answer)
        for source in backtrack(agent).sources:
            if source.document_id is not None:
                print(f"chunk {source.id} of {source.document_id}")
        without = await agent.without("policies/refunds.md#1").run(question)
        print("without that chunk:", without.answer)
        store.close()


if __name__ == "__main__":
    asyncio.run(main())
