# polydeid — `make demo` and `make test` work on a fresh machine (Python 3.11).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-fast lint bench clean

SYSTEM := $(VENV)/.system-packages
# Debian packages the tests need: Chromium (the web page's browser test) and a PostgreSQL
# server (the vault's concurrency test starts its own throw-away cluster).
SYSTEM_PACKAGES := chromium chromium-driver postgresql

$(SYSTEM):
	@mkdir -p $(VENV)
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null \
	    && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  echo "system packages present: $(SYSTEM_PACKAGES)"; \
	else \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	    $(SYSTEM_PACKAGES); \
	fi
	touch $(SYSTEM)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check \
	  -e '.[dev,presidio,hf,tagger,serve,batch,postgres,spark,onnx]'
	touch $(STAMP)

setup: $(SYSTEM) $(STAMP)

demo: setup
	$(BIN)/python examples/demo.py
	@echo "--- the same through the CLI (JSONL in, JSONL out):"
	$(BIN)/polydeid redact examples/notes.jsonl --policy numbered

lint: setup
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy

test: setup lint
	$(BIN)/pytest

# The quick loop (under two minutes on 2 cores): every test outside the slow tiers, the
# markers in pyproject.toml; `make test` runs them all.
test-fast: setup
	$(BIN)/pytest -m "not (corpora or torch or browser or postgres or spark or slow)"

bench: setup
	$(BIN)/python benchmarks/rules_speed.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis
