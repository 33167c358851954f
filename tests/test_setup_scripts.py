"""The set-up scripts: a wrong Python fails with one clear line and leaves no venv; every step is listed and guarded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
MAKE_VENV = ROOT / "scripts" / "make-venv.sh"


def fake_python(tmp_path: Path, version: str) -> Path:
    """A stand-in interpreter that reports ``version`` (and fails the >= 3.11 check when it is older)."""
    major, minor = (int(p) for p in version.split(".")[:2])
    ok = 0 if (major, minor) >= (3, 11) else 1
    script = tmp_path / f"python{version}"
    script.write_text(
        "#!/bin/sh\n"
        f'case "$2" in *version_info*) exit {ok};; *platform*) echo {version}; exit 0;; esac\n'
        "echo 'this stand-in cannot make a venv' >&2; exit 1\n"
    )
    script.chmod(0o755)
    return script


def make_venv(py: str, venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(MAKE_VENV), py, str(venv)], capture_output=True, text=True, timeout=60)


def test_an_old_python_fails_with_one_line_and_no_venv(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    done = make_venv(str(fake_python(tmp_path, "3.9.2")), venv)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "needs Python >= 3.11" in done.stderr and "is Python 3.9.2" in done.stderr
    assert "make PY=python3.11" in done.stderr
    assert not venv.exists() and not (tmp_path / ".venv.partial").exists()


def test_a_missing_python_fails_with_one_line(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    done = make_venv("python3.99-not-here", venv)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "'python3.99-not-here' not found" in done.stderr
    assert not venv.exists()


def test_a_failed_venv_creation_leaves_nothing_behind(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    done = make_venv(str(fake_python(tmp_path, "3.12.1")), venv)
    assert done.returncode != 0 and not venv.exists() and not (tmp_path / ".venv.partial").exists()


@pytest.mark.parametrize("step", sorted((ROOT / "scripts" / "setup").glob("[0-9]*.sh")), ids=lambda p: p.name)
def test_every_setup_step_announces_itself_and_is_valid_bash(step: Path) -> None:
    text = step.read_text()
    assert text.startswith("# ") and "\nstep " in text and "step_done" in text
    assert subprocess.run(["bash", "-n", str(step)], capture_output=True, timeout=30).returncode == 0
    assert " -q " not in text and "--quiet" not in text, "set-up steps show their progress"


def test_an_unknown_setup_step_is_refused_with_the_step_names() -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup-test.sh"), "pgvector", "no-such-step"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    names = " ".join(p.stem.split("-", 1)[1] for p in sorted((ROOT / "scripts" / "setup").glob("[0-9]*.sh")))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"error: no set-up step named 'no-such-step' (the steps: {names})\n"
    assert names == "local-llm chromium postgresql pgvector node-packages mcp-servers"
