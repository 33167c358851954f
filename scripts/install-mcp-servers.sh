#!/usr/bin/env bash
# MCP servers and clients the test suite talks to (none of them written here), installed into .mcp-servers/
# (git-ignored): mcp-server-time and mcp-server-git from PyPI in their own venv, the reference server
# "everything" and the MCP Inspector from npm. Idempotent; prints each step. Usage: scripts/install-mcp-servers.sh
set -euo pipefail
DIR="${MCP_SERVERS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/.mcp-servers}"
PY="${PYTHON:-python3}"
mkdir -p "$DIR"
if [ ! -x "$DIR/py/bin/mcp-server-time" ] || [ ! -x "$DIR/py/bin/mcp-server-git" ]; then
  echo "[mcp 1/2] PyPI: mcp-server-time, mcp-server-git -> $DIR/py"
  "$PY" -m venv "$DIR/py"
  "$DIR/py/bin/python" -m pip install -q --upgrade pip
  "$DIR/py/bin/python" -m pip install -q mcp-server-time mcp-server-git
else
  echo "[mcp 1/2] PyPI servers already installed in $DIR/py"
fi
if command -v npm >/dev/null 2>&1; then
  if [ ! -d "$DIR/node/node_modules/@modelcontextprotocol/server-everything" ] \
     || [ ! -d "$DIR/node/node_modules/@modelcontextprotocol/inspector" ]; then
    echo "[mcp 2/2] npm: @modelcontextprotocol/server-everything, @modelcontextprotocol/inspector -> $DIR/node"
    mkdir -p "$DIR/node"
    npm install --prefix "$DIR/node" --no-audit --no-fund --loglevel=error \
      @modelcontextprotocol/server-everything @modelcontextprotocol/inspector
  else
    echo "[mcp 2/2] npm packages already installed in $DIR/node"
  fi
else
  echo "[mcp 2/2] npm not found: the npm server and the Inspector tests will be skipped"
fi
echo "[mcp] done: $DIR"
