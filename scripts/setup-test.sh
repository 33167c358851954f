#!/usr/bin/env bash
# Installs what the test suite uses beyond the Python packages: every step in scripts/setup/ runs in order.
# Usage: scripts/setup-test.sh [STEP...]   (no STEP: all of them; STEP is a name such as pgvector or mcp-servers)
# Add a step by adding a file there (NN-name.sh); it gets PY (the venv's python) and VENV, and the helpers of lib.sh.
# A step that cannot install its thing says so and moves on: the tests that need it skip with a reason.
set -uo pipefail
cd "$(dirname "$0")/.."
export PY=${PY:-.venv/bin/python}
export VENV=${VENV:-.venv}
source scripts/lib.sh
started=$(date +%s)
steps=()
for script in scripts/setup/[0-9]*.sh; do
  name=$(basename "$script" .sh)
  steps+=("${name#*-}")
done
for wanted in "$@"; do
  if [[ ! " ${steps[*]} " == *" $wanted "* ]]; then
    echo "error: no set-up step named '$wanted' (the steps: ${steps[*]})" >&2
    exit 2
  fi
done
failed=()
for script in scripts/setup/[0-9]*.sh; do
  name=$(basename "$script" .sh)
  name=${name#*-}
  if [ "$#" -gt 0 ] && [[ ! " $* " == *" $name "* ]]; then continue; fi
  if ! ( source "$script" ); then failed+=("$name"); fi
done
printf '\n==> set-up done in %ss' "$(( $(date +%s) - started ))"
if [ "${#failed[@]}" -gt 0 ]; then printf '; not installed: %s (their tests will skip)' "${failed[*]}"; fi
printf '\n\n'
