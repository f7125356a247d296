PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= ./trawl-data
# What the test suite drives for real: every optional feature, and the test tools.
DEV_EXTRAS := test,render,postgres,eval,semantic

.PHONY: run test check lint bench clean

# One virtual environment; a stamp file per install, so `make run` installs the
# runtime only and `make test` adds the extras to the same environment.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[$(DEV_EXTRAS)]'
	touch $@

run: $(VENV)/.runtime
	$(BIN)/trawl serve --data $(DATA) --host 127.0.0.1 --port 8080

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

# The fast tier: no servers, browsers, PostgreSQL or child processes (tests/tiers.py).
check: lint
	$(BIN)/pytest -m "not slow"

bench: $(VENV)/.dev
	$(BIN)/pip install --quiet -e '.[$(DEV_EXTRAS),bench]'
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
