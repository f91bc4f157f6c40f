# polydeid — `make demo` and `make test` work on a fresh machine (Python 3.11).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-fast lint bench clean

SYSTEM := $(VENV)/.system-packages
# Debian packages the tests need: Chromium (the web page's browser test), a PostgreSQL
# server (the vault's concurrency test starts its own throw-away cluster), and a C compiler
# with the Python headers (scripts/compile.py builds the hot rule modules with mypyc).
SYSTEM_PACKAGES := chromium chromium-driver postgresql gcc python3-dev
PY_HEADER := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['include'])")/Python.h

$(SYSTEM):
	@mkdir -p $(VENV)
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null \
	    && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
	    && command -v gcc >/dev/null && [ -f "$(PY_HEADER)" ]; then \
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

# The rule modules compiled ahead of time (polydeid._compiled.MODULES), rebuilt when a source
# changes; a module whose build is older than its source runs from its source meanwhile.
COMPILED := src/polydeid/_compiled.json
$(COMPILED): $(STAMP) scripts/compile.py src/polydeid/_compiled.py \
    $(shell $(PYTHON) scripts/compile.py --sources)
	$(BIN)/python scripts/compile.py

# Bytecode of polydeid's own sources (an editable install writes none where
# PYTHONDONTWRITEBYTECODE is set, as in many containers: each command then compiles every
# module it imports, about 0.1 s); compileall skips what is current.
setup: $(SYSTEM) $(STAMP) $(COMPILED)
	$(BIN)/python -m compileall -q src/polydeid >/dev/null

demo: setup
	$(BIN)/python examples/demo.py
	@echo "--- the same through the CLI (JSONL in, JSONL out):"
	$(BIN)/polydeid redact examples/notes.jsonl --policy numbered

lint: setup
	$(BIN)/ruff check src tests benchmarks examples scripts/compile.py
	$(BIN)/ruff format --check src tests benchmarks examples scripts/compile.py
	$(BIN)/mypy

test: setup lint
	POLYDEID_REQUIRE_COMPILED=1 $(BIN)/pytest

# The quick loop (under two minutes on 2 cores): every test outside the slow tiers, the
# markers in pyproject.toml; `make test` runs them all.
test-fast: setup
	$(BIN)/pytest -m "not (corpora or torch or browser or postgres or spark or slow)"

bench: setup
	$(BIN)/python benchmarks/rules_speed.py

clean:
	$(PYTHON) scripts/compile.py --clean
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis
