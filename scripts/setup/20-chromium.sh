# Headless Chromium (Debian's chromium) renders the HTML report in the report tests.
step "Chromium (Debian package chromium) for the report rendering test"
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  step_done "already installed"; return 0
fi
apt_install chromium || { step_done "not installed"; return 1; }
step_done "installed"
