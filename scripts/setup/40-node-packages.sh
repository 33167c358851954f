# Node packages for the AG-UI JavaScript client test, installed from the lock file into $VENV/js (outside git's view).
step "Node packages (@ag-ui/client) into $VENV/js for the JavaScript client test"
src=tests/hosting/js
dest="$VENV/js"
if ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm || { step_done "node/npm not installed"; return 1; }
fi
if [ -d "$dest/node_modules" ] && cmp -s "$src/package-lock.json" "$dest/package-lock.json"; then
  step_done "already installed"; return 0
fi
mkdir -p "$dest" && cp "$src/package.json" "$src/package-lock.json" "$dest/"
( cd "$dest" && npm ci --no-audit --no-fund 2>&1 | sed 's/^/    /'; exit "${PIPESTATUS[0]}" ) \
  || { rm -rf "$dest/node_modules"; step_done "npm ci failed"; return 1; }
step_done "installed"
