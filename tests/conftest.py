"""Suite-wide guard: a test run that leaves a new file in the working tree says so, and fails under ``make test``
(``AGENTFOOTPRINT_TREE_GUARD=strict``); tests write under ``tmp_path``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import configuration as hypothesis_configuration

ROOT = Path(__file__).parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentfootprint"

# hypothesis keeps its example database (and its unicode and constants caches) outside the checkout
hypothesis_configuration.set_hypothesis_home_dir(CACHE / "hypothesis")
_BEFORE = pytest.StashKey[frozenset[str] | None]()


def untracked_files(root: Path = ROOT) -> frozenset[str] | None:
    """Files git neither tracks nor ignores below ``root``; None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
            capture_output=True,
            check=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return frozenset(p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = untracked_files()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    after = untracked_files()
    if before is None or after is None:
        return
    written = sorted(after - before)
    if written:
        if os.environ.get("AGENTFOOTPRINT_TREE_GUARD") == "strict":
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            shown = ", ".join(written[:20]) + (f" (+{len(written) - 20} more)" if len(written) > 20 else "")
            reporter.write_line(f"the test run wrote into the working tree (write under tmp_path): {shown}", red=True)
