# Every target that runs code makes .venv itself: a fresh clone needs only `make run` / `make test`.
PYTHON ?= python3
PREFIX ?= /opt/pi-companion
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: FORCE release run test test-py313 system-test system-test-breakages torture browser-test bench screenshots diagram install uninstall firmware-sync firmware-deploy image image-test clean

# `python --version` is 3.11 or newer (awk, so that no code runs on an interpreter too old for it).
version_ok = $(1) --version 2>&1 | awk '/^Python /{split($$2, v, "."); ok = v[1] > 3 || (v[1] == 3 && v[2] >= 11)} END {exit !ok}'
# A .venv that has the stamp but whose interpreter is gone or too old is rebuilt from scratch;
# one without the stamp (an install that did not finish) is rebuilt too, in the recipe.
VENV_BROKEN := $(if $(wildcard $(STAMP)),$(shell $(call version_ok,$(BIN)/python) || echo broken))

# __init__.py holds the version: the editable install's metadata (importlib.metadata) follows it.
$(STAMP): pyproject.toml $(wildcard pi_companion/__init__.py) $(if $(VENV_BROKEN),FORCE)
	@$(call version_ok,$(PYTHON)) || { echo "pi-companion needs Python 3.11 or newer: '$(PYTHON) --version' says '$$($(PYTHON) --version 2>&1 | head -1)'; run make with PYTHON=python3.11 (or newer)" >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { echo "pi-companion: '$(PYTHON)' has no working venv module (Debian/Ubuntu: apt install python3-venv)" >&2; exit 1; }
	@if [ ! -f $(STAMP) ] || [ -n "$(VENV_BROKEN)" ]; then rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

WEB_PORT ?= 8080
run: $(STAMP)
	$(BIN)/pi-companion simulate --web --web-port $(WEB_PORT)

# One pytest worker per CPU (pytest-xdist); TEST_WORKERS=0 runs the tests in one process. The
# tests that share the session's wheel stay on one worker (--dist loadgroup: xdist_group).
TEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# `make test` once more on Debian 13 trixie's Python 3.13, in a cached trixie root (root only;
# tests/system/py313.sh): with `make test` on the host's Python both ends of requires-python run.
test-py313:
	TEST_WORKERS=$(TEST_WORKERS) bash tests/system/py313.sh

# The appliance on a real Debian system in a VM (QEMU): make install, boot, play through a
# kernel GPIO simulator, crashes, hangs, power cuts, power-off. Root only; see systemd/README.md.
system-test: $(STAMP)
	BREAK='$(BREAK)' bash tests/system/run.sh

# Each deliberate breakage in tests/system/breakages/, applied alone, must make the system test
# fail at the check it names (one short VM run each; see systemd/README.md).
system-test-breakages: $(STAMP)
	bash tests/system/breakages/run-all.sh $(BREAKS)

# The long torture loops (minutes); `make test` runs a short version of each.
torture: $(STAMP)
	$(BIN)/python -m pytest -m torture -s
	PI_COMPANION_BITFLIP_TRIES=3000 PI_COMPANION_LOG_FUZZ_EXAMPLES=5000 \
		$(BIN)/python -m pytest tests/gamelog/test_log_integrity.py -k "flipped or never_a_crash" -s
	# The LAN attacker's list (docs/reliability.md): the torture siege and fuzz ran above
	# (marker), here the rest of the list once more, each with its figures (-s).
	$(BIN)/python -m pytest -s tests/web/test_attacks.py tests/hub/test_roles.py tests/core/test_names.py \
		tests/appliance/test_systemd_unit.py \
		tests/gamelog/test_durable_log.py::test_history_is_ordered_and_pruned_by_the_box_s_number_not_the_clock \
		tests/gamelog/test_write_faults.py::test_the_oled_says_saving_again_without_waiting_for_an_input

# The big screen's pages in headless chromium (Debian's chromium + chromium-driver; no download).
browser-test: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider tests_browser

# Not part of `make test`: prints the table and writes bench-latest/results.json (untracked);
# `make bench RECORD=1` writes the figures into benchmarks/results.json and docs/performance.md.
# The instruction counts need valgrind (Debian: apt-get install valgrind); without it they are skipped.
bench: $(STAMP)
	$(BIN)/python benchmarks/run.py $(if $(RECORD),--record)

screenshots: $(STAMP)
	$(BIN)/python -m pi_companion.gallery docs/screens

# hardware/: wiring table and diagram, parts list, drilling templates, puck and turntable drawings.
diagram: $(STAMP)
	$(BIN)/python hardware/gen_docs.py

# The wind puck (see firmware/README.md; not run in CI). PUCK_MODE=dev leaves the watchdog off.
PUCK_PORT ?= auto
PUCK_MODE ?= production
PUCK_FILES := main.py puck.py protocol.py quadrature.py
PUCK_FLAG_production := open('production', 'w').close()
PUCK_FLAG_dev := None

# mpremote from PATH (pipx install mpremote), else a venv of its own with nothing else in it.
FIRMWARE_VENV := .venv-firmware
MPREMOTE ?= $(or $(shell command -v mpremote 2>/dev/null),$(FIRMWARE_VENV)/bin/mpremote)

firmware-sync:
	$(PYTHON) firmware/sync.py

$(FIRMWARE_VENV)/bin/mpremote:
	$(PYTHON) -m venv $(FIRMWARE_VENV)
	$(FIRMWARE_VENV)/bin/pip install --quiet 'mpremote>=1.22'

firmware-deploy: firmware-sync $(filter $(FIRMWARE_VENV)/%,$(MPREMOTE))
	$(MPREMOTE) connect $(PUCK_PORT) exec "import os; 'production' in os.listdir() and os.remove('production')" + reset
	sleep 3
	$(MPREMOTE) connect $(PUCK_PORT) $(foreach f,$(PUCK_FILES),cp firmware/$(f) :$(f) +) exec "$(PUCK_FLAG_$(PUCK_MODE))" + reset

# On the Pi: `sudo make install` (idempotent; also updates), `sudo make uninstall` (keeps state + config).
install:
	PYTHON=$(PYTHON) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash systemd/install.sh

uninstall:
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash systemd/install.sh --uninstall

# The SD-card image (Debian 13 trixie arm64, backports kernel, root; see systemd/image/README.md). Not in .ci/run:
# it takes tens of minutes. Downloads are cached in IMAGE_CACHE, outside the repository.
IMAGE_DIR ?= build/image
IMAGE_CACHE ?= /var/cache/pi-companion-image
VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' pi_companion/__init__.py)
IMAGE := $(IMAGE_DIR)/pi-companion-$(VERSION)-arm64.img.xz
IMAGE_NICE ?= nice -n 10
IMAGE_EPOCH = $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct))

# The card installs the box's own arm64 package, the one a release ships (systemd/debian/build.sh).
image: $(STAMP)
	rm -rf $(IMAGE_DIR)/wheel $(IMAGE_DIR)/deb
	SOURCE_DATE_EPOCH=$(IMAGE_EPOCH) $(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation -w $(IMAGE_DIR)/wheel .
	$(DEB_ENV) STAGE=$(abspath $(IMAGE_DIR))/stage bash systemd/debian/build.sh arm64 $(IMAGE_DIR)/wheel/pi_companion-$(VERSION)-py3-none-any.whl $(IMAGE_DIR)/deb
	$(call build_image,$(IMAGE_DIR)/deb/pi-companion_$(VERSION)_arm64.deb,$(IMAGE))

build_image = SOURCE_DATE_EPOCH=$(IMAGE_EPOCH) IMAGE_CACHE=$(IMAGE_CACHE) KEEP_RAW=$(KEEP_RAW) $(IMAGE_NICE) bash systemd/image/build.sh $(1) $(2)
DEB_ENV = SOURCE_DATE_EPOCH=$(IMAGE_EPOCH) PY_VERSION=$(PY_VERSION) PIP='$(abspath $(BIN))/python -m pip' \
	CONFIG_DEFAULT='$(abspath $(BIN))/pi-companion config default'

# A release under dist/: the wheel, the sdist, the Debian packages (systemd/debian/build.sh:
# a venv of the target's wheels, CPython PY_VERSION, for each of RELEASE_ARCHES), the SD image
# made from the arm64 package (root, tens of minutes; RELEASE_IMAGE=0 leaves it out) and
# SHA256SUMS. Reproducible: every timestamp is the last commit's (SOURCE_DATE_EPOCH), the sdist
# is packed again in name order, the wheels the packages hold are pinned.
RELEASE_ARCHES ?= arm64 amd64
RELEASE_IMAGE ?= 1
PY_VERSION ?= 3.13
release: $(STAMP)
	rm -rf dist build/lib build/bdist.* build/release
	SOURCE_DATE_EPOCH=$(IMAGE_EPOCH) $(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation -w dist .
	SOURCE_DATE_EPOCH=$(IMAGE_EPOCH) $(BIN)/python -c 'from setuptools import build_meta; build_meta.build_sdist("build/release")' >/dev/null
	mkdir -p build/release/tree && tar -C build/release/tree -xzf build/release/pi_companion-$(VERSION).tar.gz
	tar -C build/release/tree --sort=name --mtime=@$(IMAGE_EPOCH) --owner=0 --group=0 --numeric-owner \
		--mode=go-w --format=gnu -cf - pi_companion-$(VERSION) | gzip -9n >dist/pi_companion-$(VERSION).tar.gz
	for arch in $(RELEASE_ARCHES); do \
		$(DEB_ENV) bash systemd/debian/build.sh $$arch dist/pi_companion-$(VERSION)-py3-none-any.whl dist || exit 1; \
	done
	$(if $(filter 1,$(RELEASE_IMAGE)),$(call build_image,dist/pi-companion_$(VERSION)_arm64.deb,dist/pi-companion-$(VERSION)-arm64.img.xz))
	cd dist && sha256sum -- * >SHA256SUMS && cat SHA256SUMS

# Reads the card file by file for the boards no emulator boots (Pi 5, 4, Zero 2 W), then boots
# it under qemu-system-aarch64 -M raspi3b and checks the box from its console, then under
# -M virt with simulated radios: the box's hotspot and a phone that joins it.
# The boot test drops the image's own package on the card (refused at boot: not newer).
IMAGE_PACKAGE ?= $(firstword $(wildcard $(dir $(IMAGE))pi-companion_$(VERSION)_arm64.deb) $(IMAGE_DIR)/deb/pi-companion_$(VERSION)_arm64.deb)
image-test:
	bash tests/image/card-check.sh $(IMAGE)
	IMAGE_TEST_PACKAGE=$(IMAGE_PACKAGE) $(IMAGE_NICE) bash tests/image/boot-test.sh $(IMAGE)
	$(IMAGE_NICE) bash tests/image/hotspot-test.sh $(IMAGE)

FORCE:

clean:
	rm -rf $(VENV) $(FIRMWARE_VENV) build dist *.egg-info
