"""Which seed rules no test quotes: every ``R00x-nn`` id of SEED-RULES.md must appear in a test file, spelled
``R004-15`` or ``R004_15`` (a test name), so each rule's behaviour probe can be found from its id.

Usage: python scripts/seed_coverage.py [--rules PATH] [--tests DIR] [--json]; exits 1 when an id has no test."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT.parent / "shared" / "SEED-RULES.md"
_ID = re.compile(r"^\|\s*(R\d{3}-\d+)\s*\|", re.M)
_QUOTED = re.compile(r"(?<![A-Za-z0-9])R(\d{3})[-_](\d+)(?!\d)")


def rule_ids(rules: Path) -> list[str]:
    """Every rule id the rules file lists, in order."""
    return _ID.findall(rules.read_text(encoding="utf-8"))


def quoted_ids(tests: Path) -> set[str]:
    """Every rule id a test file quotes (either spelling), as ``R004-15``."""
    found: set[str] = set()
    for path in sorted(tests.rglob("*.py")):
        for seed, n in _QUOTED.findall(path.read_text(encoding="utf-8", errors="replace")):
            found.add(f"R{seed}-{int(n):02d}")
    return found


def missing(rules: Path = RULES, tests: Path = ROOT / "tests") -> list[str]:
    """The rule ids no test quotes, in the rules file's order."""
    quoted = quoted_ids(tests)
    return [rule for rule in rule_ids(rules) if rule not in quoted]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=Path, default=RULES)
    parser.add_argument("--tests", type=Path, default=ROOT / "tests")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    ids = rule_ids(args.rules)
    gaps = missing(args.rules, args.tests)
    if args.json:
        print(json.dumps({"rules": len(ids), "quoted": len(ids) - len(gaps), "missing": gaps}))
    else:
        print(f"{len(ids) - len(gaps)}/{len(ids)} seed rules quoted by a test")
        for rule in gaps:
            print(f"missing: {rule}")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
