"""`make firmware-deploy` needs mpremote and nothing else: the one on PATH when there is one
(here a fake that records its arguments), else a venv holding mpremote alone; never the
project's dev tool set."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not shutil.which("make"), reason="make is not installed")


def make(*args, path: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=path)
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_deploy_runs_the_mpremote_on_path_and_installs_nothing(tmp_path):
    log = tmp_path / "calls"
    fake = tmp_path / "bin" / "mpremote"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n')
    fake.chmod(0o755)
    done = make("firmware-deploy", "PUCK_PORT=/dev/ttyFAKE", "PUCK_MODE=dev",
                path=f"{fake.parent}:{os.environ['PATH']}")
    assert done.returncode == 0, done.stderr
    assert "pip" not in done.stdout and ".venv" not in done.stdout
    first, second = log.read_text().splitlines()
    assert first.startswith("connect /dev/ttyFAKE exec") and first.endswith("+ reset")
    for name in ("main.py", "puck.py", "protocol.py", "quadrature.py"):
        assert f"cp firmware/{name} :{name}" in second
    assert second.startswith("connect /dev/ttyFAKE") and 'exec None + reset' in second


def test_without_mpremote_it_makes_a_venv_of_mpremote_alone():
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not (Path(p) / "mpremote").exists())
    done = make("-n", "firmware-deploy", path=path)
    assert done.returncode == 0, done.stderr
    installs = [line for line in done.stdout.splitlines() if "pip install" in line]
    assert installs == [".venv-firmware/bin/pip install --quiet 'mpremote>=1.22'"]
    assert "[dev" not in done.stdout and ".venv/" not in done.stdout
    assert ".venv-firmware/bin/mpremote connect auto" in done.stdout
