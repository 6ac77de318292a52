# ldp: the two commands a newcomer needs are `make figures` and `make test`.
# Every target creates .venv on first use; nothing has to be installed by hand. `make`
# alone creates it and lists the targets.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.DEFAULT_GOAL := venv
.PHONY: help venv test test-fast lint format docs figures figures-quick bench audit-peers notebooks clean clean-results

help:  ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk -F':.*?## ' '{printf "  %-15s %s\n", $$1, $$2}'

# uv installs the same packages as pip in about half the time, bytecode compiled up front
# as pip does (where PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile
# every module it imports); pip takes over wherever uv cannot be had or cannot install
# (e.g. an index only pip's own configuration names)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	( $(PY) -m pip install --quiet uv \
	  && $(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(PY) -e '.[dev]' ) \
	  || ( $(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -e '.[dev]' )
	@touch $(STAMP)

venv: $(STAMP)  ## create .venv and install the project with its test extras (what `make` alone does)
	@$(MAKE) --no-print-directory help

# pytest-xdist: one worker per core (TEST_WORKERS=1 for a serial run); --dist loadfile keeps
# a file's tests on one worker, so a module's shared fixture (e.g. figures --quick) runs once
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --dist loadfile

test: $(STAMP)  ## run the whole test suite (statistical tests included), on every core
	$(PY) -m ruff check ldp experiments tests benchmarks
	$(PY) -m pytest -q $(XDIST)

test-fast: $(STAMP)  ## the suite without the slow statistical tests
	$(PY) -m pytest -q $(XDIST) -m "not slow"

lint: $(STAMP)  ## ruff lint and format check
	$(PY) -m ruff check ldp experiments tests benchmarks
	$(PY) -m ruff format --check ldp experiments tests benchmarks

format: $(STAMP)  ## apply ruff's formatter and import sorting
	$(PY) -m ruff check --fix ldp experiments tests benchmarks
	$(PY) -m ruff format ldp experiments tests benchmarks

docs: $(STAMP)  ## the API reference from the docstrings (pdoc), in .cache/api/index.html
	$(PY) -m experiments.apidocs .cache/api

figures: $(STAMP)  ## run missing experiments at paper scale, draw every figure, gallery and report
	$(PY) -m experiments.figures

figures-quick: $(STAMP)  ## every figure with few runs (minutes), into results/quick/
	$(PY) -m experiments.figures --quick

notebooks: $(STAMP)  ## execute every notebook in place (installs the notebooks extra: jupyter, nbconvert)
	$(PY) -m pip install --quiet -e '.[dev,notebooks]'
	$(PY) -m jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb

bench: $(STAMP)  ## time this project against its peers; prints the tables
	$(PY) -m benchmarks

audit-peers: $(STAMP)  ## ldp.audit on the peers' own clients (in their venvs): claimed ε vs our lower bound
	$(PY) -m benchmarks.audit_peers --figure results/figures/audit_peers.png

clean-results:  ## remove every raw result under results/ (keeps results/figures and REPRODUCTION.md)
	@test ! -d results || find results -mindepth 1 -maxdepth 1 ! -name figures ! -name REPRODUCTION.md -exec rm -rf {} +

clean: clean-results  ## clean-results, plus the venv and caches (.cache holds the data-set cache)
	rm -rf $(VENV) .bench-venv* .pytest_cache .ruff_cache outputs multirun .cache
