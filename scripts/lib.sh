# Helpers shared by the set-up steps (sourced, not run).
# A step prints what it does and how long it took; it is idempotent: a quick check first, the install only if needed.

STEP_START=0

step() {  # step "what this does"
  STEP_START=$(date +%s)
  printf '\n==> %s\n' "$*"
}

step_done() {  # step_done "result"
  printf '    %s (%ss)\n' "$*" "$(( $(date +%s) - STEP_START ))"
}

is_root() { [ "$(id -u)" -eq 0 ]; }

APT_UPDATED=0
apt_install() {  # apt_install PACKAGE... : Debian packages, with apt's own progress lines; needs root
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "    apt-get is not available here: install $* yourself"; return 1
  fi
  if ! is_root; then
    echo "    not root: install $* yourself (sudo apt-get install $*)"; return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ "$APT_UPDATED" -eq 0 ]; then
    echo "    apt-get update"
    apt-get update -o Dpkg::Use-Pty=0 | sed 's/^/    /' || return 1
    APT_UPDATED=1
  fi
  echo "    apt-get install $*"
  apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 "$@" | sed 's/^/    /'
  return "${PIPESTATUS[0]}"
}

pip_install() {  # pip_install ARG... : into the project's venv, with pip's progress shown
  "$PY" -m pip install --progress-bar on "$@" 2>&1 | grep -v "^WARNING: Location 'file:" | sed 's/^/    /'
  return "${PIPESTATUS[0]}"
}
