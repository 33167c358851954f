#!/usr/bin/env bash
# Creates the project's venv with a Python >= 3.11, or fails with one line (and leaves no half-made venv behind).
set -euo pipefail
PY=${1:-python3}
VENV=${2:-.venv}
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "error: '$PY' not found; agentfootprint needs Python >= 3.11: make PY=python3.11 (or another path)" >&2
  exit 1
fi
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  found=$("$PY" -c 'import platform; print(platform.python_version())' 2>/dev/null || echo "unknown")
  echo "error: agentfootprint needs Python >= 3.11, and '$PY' is Python $found: make PY=python3.11 (or another path)" >&2
  exit 1
fi
tmp="$VENV.partial"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
echo "==> creating $VENV with $("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
"$PY" -m venv "$tmp"
mv "$tmp" "$VENV"
trap - EXIT
"$VENV/bin/python" -m pip install --progress-bar on --upgrade pip 2>&1 | grep -v "^WARNING: Location 'file:"
