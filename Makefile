# polydeid — `make demo` and `make test` work on a fresh machine (Python 3.11).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,presidio,hf,tagger]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/python examples/demo.py
	@echo "--- the same through the CLI (JSONL in, JSONL out):"
	$(BIN)/polydeid redact examples/notes.jsonl --policy numbered

lint: setup
	$(BIN)/ruff check src tests benchmarks examples

test: setup lint
	$(BIN)/pytest

bench: setup
	$(BIN)/python benchmarks/rules_speed.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .hypothesis
