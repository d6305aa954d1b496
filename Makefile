# Every target that runs code makes .venv itself: a fresh clone needs only `make run` / `make test`.
PYTHON ?= python3
PREFIX ?= /opt/pi-companion
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench screenshots diagram install uninstall clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/pi-companion simulate

test: $(STAMP)
	$(BIN)/python -m pytest

screenshots: $(STAMP)
	$(BIN)/python -m pi_companion.gallery docs/screens

diagram: $(STAMP)
	$(BIN)/python hardware/gen_docs.py

# On the Pi: `sudo make install` (idempotent; also updates), `sudo make uninstall` (keeps state + config).
install:
	PYTHON=$(PYTHON) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash systemd/install.sh

uninstall:
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash systemd/install.sh --uninstall

clean:
	rm -rf $(VENV) build *.egg-info
