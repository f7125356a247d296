PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= ./trawl-data

.PHONY: run test lint bench clean

$(BIN)/trawl: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

run: $(BIN)/trawl
	$(BIN)/trawl serve --data $(DATA) --host 127.0.0.1 --port 8080

lint: $(BIN)/trawl
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

bench: $(BIN)/trawl
	$(BIN)/pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
