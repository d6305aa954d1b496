# Every target that runs code makes .venv itself: a fresh clone needs only `make run` / `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench screenshots clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/pi-companion simulate

test: $(STAMP)
	$(BIN)/python -m pytest

screenshots: $(STAMP)
	$(BIN)/python -m pi_companion.gallery docs/screens

clean:
	rm -rf $(VENV) build *.egg-info
