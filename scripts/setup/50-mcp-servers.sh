# MCP servers and clients the MCP tests talk to (none of them written here), into the git-ignored .mcp-servers/
# (or $MCP_SERVERS_DIR): mcp-server-time and mcp-server-git from PyPI in their own venv, the reference server
# "everything" and the MCP Inspector from npm.
dir="${MCP_SERVERS_DIR:-$PWD/.mcp-servers}"
step "MCP servers: mcp-server-time, mcp-server-git (PyPI), server-everything and the Inspector (npm) into $dir"
mkdir -p "$dir"
missing=0
if [ ! -x "$dir/py/bin/mcp-server-time" ] || [ ! -x "$dir/py/bin/mcp-server-git" ]; then
  echo "    PyPI: mcp-server-time, mcp-server-git -> $dir/py"
  base=$("$PY" -c 'import sys; print(sys._base_executable)')
  if "$base" -m venv "$dir/py" \
    && PY="$dir/py/bin/python" pip_install mcp-server-time mcp-server-git; then :; else
    echo "    could not install the PyPI servers"; missing=1
  fi
fi
node_dir="$dir/node/node_modules/@modelcontextprotocol"
if [ ! -d "$node_dir/server-everything" ] || [ ! -d "$node_dir/inspector" ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "    npm: @modelcontextprotocol/server-everything, @modelcontextprotocol/inspector -> $dir/node"
    mkdir -p "$dir/node"
    npm install --prefix "$dir/node" --no-audit --no-fund --loglevel=error \
      @modelcontextprotocol/server-everything @modelcontextprotocol/inspector 2>&1 | sed 's/^/    /'
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "    npm install failed"; missing=1; }
  else
    echo "    npm not found: the npm server and the Inspector tests will skip"; missing=1
  fi
fi
if [ "$missing" -ne 0 ]; then step_done "partly installed"; return 1; fi
step_done "ready"
