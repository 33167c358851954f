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
    "hosting": 7,
    "audit": 7,
    "cli": 8,
}
# same-level packages that must not know each other either
APART = {("explain", "compose"), ("compose", "explain"), ("explain", "scale"), ("honesty", "scale")}
HEAVY = ("explain", "honesty", "hosting", "scale", "audit", "mcp")
EXTRAS = (
    "starlette",
    "sse_starlette",
    "uvicorn",
    "ag_ui",
    "anyio",
    "cryptography",
    "opentelemetry",
    "psycopg",
    "ray",
    "llama_cpp",
    "onnxruntime",
    "tokenizers",
    "numpy",
    "langgraph",
    "pydantic_ai",
    "mcp",
)


def _package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _runtime_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Absolute ``agentfootprint.<package>`` imports outside ``if TYPE_CHECKING:`` blocks."""
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
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "agentfootprint":
                names += [f"agentfootprint.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "agentfootprint" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        pkg = _package(path)
        for _, target in _runtime_imports(ast.parse(path.read_text())):
            if target != pkg:
                edges.setdefault(pkg, set()).add(target)
    return edges


def test_no_runtime_import_runs_up_the_layers() -> None:
    upward: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        pkg = _package(path)
        if pkg not in LEVEL:
            continue  # the composition root (__init__, _wiring) and entry points sit on top
        for line, target in _runtime_imports(ast.parse(path.read_text())):
            if target in LEVEL and (LEVEL[target] > LEVEL[pkg] or (pkg, target) in APART):
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
    assert heavy == [] and extras == []


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
