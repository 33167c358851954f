"""Seed conformance is complete: every rule of SEED-RULES.md has a test quoting its id (scripts/seed_coverage.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "scripts" / "seed_coverage.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("seed_coverage", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_seed_rule_is_quoted_by_a_test() -> None:
    coverage = _script()
    assert coverage.RULES.is_file(), "the shared SEED-RULES.md is where the rules are listed"
    ids = coverage.rule_ids(coverage.RULES)
    assert len(ids) == 214 and len(set(ids)) == 214
    assert coverage.missing() == []


def test_the_script_reads_both_spellings_and_exact_ids(tmp_path: Path) -> None:
    rules = tmp_path / "RULES.md"
    rules.write_text("| id | rule | status |\n|---|---|---|\n| R004-1 | a | PASS |\n| R004-10 | b | PASS |\n"
                     "| R001-27 | c | PASS |\n| R000-05 | d | PASS |\n")  # fmt: skip
    tests = tmp_path / "tests"
    tests.mkdir()
    quoting = 'def test_R004_10_x():\n    """R001-27: quoted."""\n# R000-050 and R004-100 are other ids\n'
    (tests / "test_a.py").write_text(quoting)
    coverage = _script()
    assert coverage.rule_ids(rules) == ["R004-1", "R004-10", "R001-27", "R000-05"]
    assert coverage.missing(rules, tests) == ["R004-1", "R000-05"]


def test_the_script_exits_nonzero_and_lists_what_is_missing(tmp_path: Path) -> None:
    rules = tmp_path / "RULES.md"
    rules.write_text("| R003-02 | a | PASS |\n| R003-03 | b | PASS |\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_b.py").write_text("# R003-02\n")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rules", str(rules), "--tests", str(tests)], capture_output=True, text=True
    )
    assert done.returncode == 1 and done.stdout.splitlines() == ["1/2 seed rules quoted by a test", "missing: R003-03"]
