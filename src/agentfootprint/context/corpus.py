"""Documents into retrievable chunks: loaders (text, Markdown, HTML, PDF), splitters, ``index_corpus`` into a vector
store, and hybrid (BM25 + vector) retrieval. Every chunk keeps its chunk id and its document id."""

from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentfootprint.context._html import html_text_parts
from agentfootprint.context.embedders import Embedder
from agentfootprint.context.injection import InvalidInjectionError
from agentfootprint.context.rag import Chunk
from agentfootprint.context.vectors import StoredItem, VectorStore, fuse
from agentfootprint.errors import AgentFootprintError

RetrievalMode = Literal["hybrid", "vector", "keyword"]
_HEADER = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_BREAKS = ("\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ")
_MAX_CHUNK = 100_000
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest file a loader reads (bytes); a larger one is ``DocumentTooLargeError``."""
MAX_DOCUMENT_CHARS = MAX_DOCUMENT_BYTES
"""Largest text ``html_to_text`` parses (characters)."""


class LoaderError(AgentFootprintError, ValueError):
    """A document that cannot be read (missing file, unknown type, unreadable PDF); names the file, not its text."""

    code = "ERR_DOCUMENT_LOAD"


class DocumentTooLargeError(LoaderError):
    """A document over the loaders' size cap (``MAX_DOCUMENT_BYTES`` on disk, ``MAX_DOCUMENT_CHARS`` as text)."""

    code = "ERR_DOCUMENT_TOO_LARGE"


@dataclass(frozen=True, slots=True)
class Document:
    """A loaded document: a stable id (what chunks name as their ``document_id``), its text, its metadata."""

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise DocumentTooLargeError(f"'{path.name}' is {size} bytes, over the {MAX_DOCUMENT_BYTES} limit")
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise LoaderError(f"cannot read '{path.name}': {type(exc).__name__}") from None


def load_text(path: str | Path, *, id: str | None = None) -> Document:
    """A plain-text file as one document (id: the file name unless given)."""
    p = Path(path)
    return Document(id=id or p.name, text=_read(p), metadata={"source": str(p), "type": "text"})


def load_markdown(path: str | Path, *, id: str | None = None) -> Document:
    """A Markdown file as one document; its first heading is the title."""
    p = Path(path)
    text = _read(p)
    title = next((m.group(2) for line in text.splitlines() if (m := _HEADER.match(line))), p.stem)
    return Document(id=id or p.name, text=text, metadata={"source": str(p), "type": "markdown", "title": title})


def html_to_text(html: str) -> tuple[str, str]:
    """(readable text with headings as Markdown ``#`` lines, title) of an HTML page; scripts and styles dropped.
    Linear in the input; one over ``MAX_DOCUMENT_CHARS`` is refused (``DocumentTooLargeError``)."""
    if len(html) > MAX_DOCUMENT_CHARS:
        raise DocumentTooLargeError(f"HTML of {len(html)} characters is over the {MAX_DOCUMENT_CHARS} limit")
    parts, title = html_text_parts(html)
    text = re.sub(r"[ \t\r\f\v]+", " ", parts)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip(), title.strip()


def load_html(path: str | Path, *, id: str | None = None) -> Document:
    """An HTML file's readable text as one document (headings become Markdown headings)."""
    p = Path(path)
    text, title = html_to_text(_read(p))
    return Document(id=id or p.name, text=text, metadata={"source": str(p), "type": "html", "title": title or p.stem})


def load_pdf(path: str | Path, *, id: str | None = None) -> Document:
    """A PDF's text, page by page (``pypdf``, the ``rag`` extra); each page starts on a new paragraph."""
    try:
        pypdf: Any = importlib.import_module("pypdf")
    except ImportError:
        raise LoaderError("reading PDF needs pypdf: pip install 'agentfootprint[rag]'") from None
    p = Path(path)
    try:
        reader = pypdf.PdfReader(str(p))
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except Exception as exc:
        raise LoaderError(f"cannot read PDF '{p.name}': {type(exc).__name__}") from None
    return Document(
        id=id or p.name, text="\n\n".join(pages), metadata={"source": str(p), "type": "pdf", "pages": len(pages)}
    )


LOADERS: dict[str, Callable[..., Document]] = {
    ".txt": load_text,
    ".text": load_text,
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
}


def load_directory(path: str | Path, *, pattern: str = "**/*") -> list[Document]:
    """Every file under ``path`` with a known suffix (text, Markdown, HTML, PDF), ids relative to ``path``."""
    root = Path(path)
    if not root.is_dir():
        raise LoaderError(f"'{root.name}' is not a directory")
    docs: list[Document] = []
    for file in sorted(root.glob(pattern)):
        loader = LOADERS.get(file.suffix.lower())
        if loader is not None and file.is_file():
            docs.append(loader(file, id=file.relative_to(root).as_posix()))
    return docs


# -- splitters ------------------------------------------------------------------------------------------------------


def _cut(text: str, limit: int) -> int:
    """Where to end a piece of at most ``limit`` characters: the last paragraph, line, sentence or word break."""
    if len(text) <= limit:
        return len(text)
    window = text[:limit]
    for mark in _BREAKS:
        at = window.rfind(mark)
        if at > limit // 3:
            return at + len(mark)
    space = max((i for i, ch in enumerate(window) if ch.isspace()), default=-1)
    return space + 1 if space > 0 else limit


def _pieces(text: str, size: int, overlap: int) -> list[tuple[int, str]]:
    """(start offset, piece) windows of at most ``size`` characters, each starting ``overlap`` before the last end."""
    out: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        end = start + _cut(text[start:], size)
        piece = text[start:end].strip()
        if piece:
            out.append((start, piece))
        if end >= len(text):
            break
        nxt = max(end - overlap, start + 1)
        while 0 < nxt < end and not text[nxt - 1].isspace():  # start the overlap on a word boundary
            nxt += 1
        start = nxt if nxt < end else end
    return out


def _sizes(size: int, overlap: int | None) -> int:
    """The overlap to use (default: a fifth of the size, at most 150), or a refusal naming the bad option."""
    if isinstance(size, bool) or not isinstance(size, int) or not 20 <= size <= _MAX_CHUNK:
        raise InvalidInjectionError(f"chunk size must be an int in 20..{_MAX_CHUNK}")
    if overlap is None:
        return min(150, size // 5)
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size // 2 + 1:
        raise InvalidInjectionError("overlap must be an int from 0 to half the chunk size")
    return overlap


def _chunk(doc: Document, n: int, text: str, **extra: Any) -> Chunk:
    return Chunk(id=f"{doc.id}#{n}", text=text, metadata={**doc.metadata, "document_id": doc.id, **extra})


def split_text(doc: Document, *, size: int = 1000, overlap: int | None = None) -> list[Chunk]:
    """Chunks of at most ``size`` characters, overlapping by about ``overlap``, cut at paragraph, sentence or word
    breaks (default overlap: a fifth of ``size``, at most 150); ids ``<document id>#<n>``, metadata
    ``document_id`` and ``start`` (character offset)."""
    overlap = _sizes(size, overlap)
    return [_chunk(doc, n, piece, start=start) for n, (start, piece) in enumerate(_pieces(doc.text, size, overlap))]


def split_markdown(doc: Document, *, size: int = 1000, overlap: int | None = None) -> list[Chunk]:
    """Chunks per Markdown section (a heading and its body), long sections split by size; each chunk carries its
    heading path (``headings``) and starts with it, so a chunk read alone still says where it is from."""
    overlap = _sizes(size, overlap)
    sections: list[tuple[list[str], int, str]] = []
    path: list[str] = []
    body: list[str] = []
    offset = begin = 0
    for line in doc.text.splitlines(keepends=True):
        heading = _HEADER.match(line.rstrip("\n"))
        if heading and not line.startswith("    "):
            sections.append((list(path), begin, "".join(body)))
            level = len(heading.group(1))
            path = [*path[: level - 1], heading.group(2).strip()]
            body, begin = [], offset + len(line)
        else:
            body.append(line)
        offset += len(line)
    sections.append((list(path), begin, "".join(body)))
    out: list[Chunk] = []
    for headings, start, text in sections:
        if not text.strip():
            continue
        lead = " > ".join(headings)
        room = max(20, size - len(lead) - 2) if lead else size
        for at, piece in _pieces(text, room, min(overlap, room // 2)):
            shown = f"{lead}\n\n{piece}" if lead else piece
            out.append(_chunk(doc, len(out), shown, start=start + at, headings=headings))
    return out


# -- indexing and retrieval -----------------------------------------------------------------------------------------


def corpus_namespace(corpus: str) -> str:
    """The vector-store namespace a corpus lives in."""
    return f"rag:{corpus}"


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What ``index_corpus`` wrote: chunk and document counts, whether vectors were stored, the embedder used."""

    corpus: str
    chunks: int
    documents: int
    embedded: bool
    embedder: str | None
    chunk_ids: tuple[str, ...]


def index_corpus(
    sources: Iterable[Document | Chunk],
    *,
    store: VectorStore,
    corpus: str = "default",
    embedder: Embedder | None = None,
    splitter: Callable[[Document], list[Chunk]] | None = None,
    batch: int = 256,
) -> IndexReport:
    """Split documents (Markdown by headings, others by size) and write every chunk into ``store`` under the
    corpus, with its vector when an ``embedder`` is given. Chunks with an id already indexed are replaced."""
    if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,100}", corpus or ""):
        raise InvalidInjectionError("corpus must be 1-100 letters, digits or _ . : -")
    chunks: list[Chunk] = []
    for source in sources:
        if isinstance(source, Chunk):
            chunks.append(source)
        elif isinstance(source, Document):
            split = splitter or (split_markdown if source.metadata.get("type") == "markdown" else split_text)
            chunks.extend(split(source))
        else:
            raise InvalidInjectionError(f"index_corpus takes Documents or Chunks, got {type(source).__name__}")
    namespace = corpus_namespace(corpus)
    for start in range(0, len(chunks), max(1, batch)):
        part = chunks[start : start + max(1, batch)]
        vectors = embedder.embed([c.text for c in part]) if embedder is not None else [None] * len(part)
        store.upsert(
            namespace,
            [
                StoredItem(
                    id=c.id,
                    text=c.text,
                    vector=tuple(v) if v is not None else None,
                    metadata={**c.metadata, "document_id": c.metadata.get("document_id", c.id)},
                )
                for c, v in zip(part, vectors, strict=True)
            ],
        )
    return IndexReport(
        corpus=corpus,
        chunks=len(chunks),
        documents=len({c.metadata.get("document_id", c.id) for c in chunks}),
        embedded=embedder is not None,
        embedder=getattr(embedder, "name", None) if embedder is not None else None,
        chunk_ids=tuple(c.id for c in chunks),
    )


class StoreRetriever:
    """Retrieval from an indexed corpus: ``vector`` (nearest by embedding), ``keyword`` (BM25 / full-text) or
    ``hybrid`` (both, fused by reciprocal rank). A callable ``retriever(query) -> chunks`` for ``define_rag``."""

    def __init__(
        self,
        store: VectorStore,
        *,
        corpus: str = "default",
        embedder: Embedder | None = None,
        mode: RetrievalMode = "hybrid",
        candidates: int = 20,
        exclude: frozenset[str] = frozenset(),
    ) -> None:
        if mode not in ("hybrid", "vector", "keyword"):
            raise InvalidInjectionError("mode must be 'hybrid', 'vector' or 'keyword'")
        if mode != "keyword" and embedder is None:
            raise InvalidInjectionError(f"{mode} retrieval needs an embedder (or mode='keyword')")
        self.store = store
        self.corpus = corpus
        self.embedder = embedder
        self.mode = mode
        self.candidates = candidates
        self.exclude = exclude
        self.namespace = corpus_namespace(corpus)

    def without(self, chunk_ids: Iterable[str]) -> StoreRetriever:
        """The same retriever that never returns these chunks (the ablation seam)."""
        return StoreRetriever(
            self.store,
            corpus=self.corpus,
            embedder=self.embedder,
            mode=self.mode,
            candidates=self.candidates,
            exclude=self.exclude | frozenset(chunk_ids),
        )

    def knows(self, chunk_id: str) -> bool:
        """Whether the corpus holds a chunk with this id."""
        return bool(self.store.get(self.namespace, [chunk_id]))

    def __call__(self, query: str) -> list[Chunk]:
        want = self.candidates + len(self.exclude)
        rankings: list[list[tuple[StoredItem, float]]] = []
        if self.mode in ("hybrid", "vector"):
            assert self.embedder is not None
            rankings.append(self.store.nearest(self.namespace, self.embedder.embed([query])[0], want))
        if self.mode in ("hybrid", "keyword"):
            rankings.append(self.store.keyword(self.namespace, query, want))
        rankings = [[(i, s) for i, s in r if i.id not in self.exclude] for r in rankings]
        ranked = fuse(rankings, self.candidates) if len(rankings) > 1 else rankings[0][: self.candidates]
        return [Chunk(id=i.id, text=i.text, score=s, metadata=dict(i.metadata)) for i, s in ranked]


def content_id(text: str) -> str:
    """A short stable id for a text without one (content hash)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def as_documents(values: Sequence[Document | str | Mapping[str, Any]]) -> list[Document]:
    """Documents from ``Document``s, strings (id: content hash) or ``{"id", "text"}`` dicts."""
    out: list[Document] = []
    for value in values:
        if isinstance(value, Document):
            out.append(value)
        elif isinstance(value, str):
            out.append(Document(id=content_id(value), text=value))
        elif isinstance(value, Mapping) and isinstance(value.get("text"), str):
            out.append(Document(id=str(value.get("id") or content_id(value["text"])), text=value["text"]))
        else:
            raise InvalidInjectionError(
                f"a document must be a Document, a str or a {{'id', 'text'}} dict, got {type(value).__name__}"
            )
    return out


__all__ = [
    "LOADERS",
    "MAX_DOCUMENT_BYTES",
    "MAX_DOCUMENT_CHARS",
    "Document",
    "DocumentTooLargeError",
    "IndexReport",
    "LoaderError",
    "RetrievalMode",
    "StoreRetriever",
    "as_documents",
    "content_id",
    "corpus_namespace",
    "html_to_text",
    "index_corpus",
    "load_directory",
    "load_html",
    "load_markdown",
    "load_pdf",
    "load_text",
    "split_markdown",
    "split_text",
]
