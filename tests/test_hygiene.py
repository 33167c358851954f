"""Test hygiene, checked over the test sources: no test installs packages or runs a package manager, and every
``pytest.raises`` names an exact class (never ``Exception``)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
MANAGERS = {"apt-get", "apt", "npm", "npx", "yarn", "pnpm", "pip", "pip3", "uv", "conda", "brew"}
RUNNERS = {
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
    "system",
    "create_subprocess_exec",
    "create_subprocess_shell",
}


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts)


def _words(node: ast.AST) -> list[str]:
    """The literal words of a command: a list/tuple of strings, or a shell string split on spaces."""
    if isinstance(node, ast.List | ast.Tuple):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split()
    return []


def _installs(words: list[str]) -> bool:
    names = [Path(w).name for w in words]
    if "pip" in names and "install" in names:  # python -m pip install
        return True
    return bool(names) and names[0] in MANAGERS and any(w in {"install", "ci", "add", "i"} for w in names[1:])


def _offences(tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = ast.unparse(node.func)
        if func in {"pytest.raises", "raises"} and node.args:
            first = node.args[0]
            caught = first.elts if isinstance(first, ast.Tuple) else [first]
            if any(ast.unparse(c) in {"Exception", "BaseException"} for c in caught):
                found.append(f"{node.lineno}: pytest.raises({ast.unparse(first)})")
        elif func.split(".")[-1] in RUNNERS and node.args and _installs(_words(node.args[0])):
            found.append(f"{node.lineno}: {func} installs packages")
    return found


def test_no_test_installs_packages_or_catches_any_exception() -> None:
    offences = [f"{p.relative_to(TESTS)}:{o}" for p in _sources() for o in _offences(ast.parse(p.read_text()))]
    assert offences == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("with pytest.raises(Exception):\n    f()", ["1: pytest.raises(Exception)"]),
        ("with pytest.raises((KeyError, BaseException)):\n    f()", ["1: pytest.raises((KeyError, BaseException))"]),
        ("subprocess.run(['apt-get', 'install', '-y', 'chromium'])", ["1: subprocess.run installs packages"]),
        ("subprocess.run(['npm', 'ci'], cwd=js)", ["1: subprocess.run installs packages"]),
        ("subprocess.run([sys.executable, '-m', 'pip', 'install', 'x'])", ["1: subprocess.run installs packages"]),
        ("os.system('npm install left-pad')", ["1: os.system installs packages"]),
        ("with pytest.raises(ValueError):\n    f()", []),
        ("subprocess.run(['node', 'check.mjs'])", []),
        ("assert msg == 'pip install x'", []),
    ],
)
def test_the_hygiene_scan_sees_what_it_should(code: str, expected: list[str]) -> None:
    assert _offences(ast.parse(code)) == expected


def test_the_working_tree_guard_sees_a_new_file_and_not_an_ignored_one(tmp_path: Path) -> None:
    from tests.conftest import untracked_files

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    (tmp_path / ".gitignore").write_text("ignored.txt\n")
    before = untracked_files(tmp_path)
    (tmp_path / "ignored.txt").write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "shot.png").write_bytes(b"png")
    after = untracked_files(tmp_path)
    assert before is not None and after is not None
    assert sorted(after - before) == ["sub/shot.png"]


def test_the_working_tree_guard_is_quiet_outside_a_checkout(tmp_path: Path) -> None:
    from tests.conftest import untracked_files

    assert untracked_files(tmp_path / "absent") is None
