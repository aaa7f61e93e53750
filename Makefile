# langchain-atma: the two commands a newcomer needs are `make demo` and `make test`.
# Each creates .venv (torch 2.13.0 CPU first, then the package with its dev extras and
# the training package in training/, which the tests and `atma judge train` use).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-unit lint typecheck venv clean

$(STAMP): pyproject.toml training/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[dev]" -e training
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/atma demo

test: $(STAMP)
	bash scripts/test.sh

test-unit: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check langchain_atma tests examples graphs training scripts
	$(BIN)/ruff format --check langchain_atma tests examples graphs training scripts

typecheck: $(STAMP)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .atma .pytest_cache .mypy_cache .ruff_cache
