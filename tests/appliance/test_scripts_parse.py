"""Every shell script of the repository parses, and so do the system test's Python files.

The VM's scripts run only under `make system-test` (20 minutes), the image's only under `make
image-test`: a quote left open in one of them (a Python snippet inside a bash single-quoted
string, say) would otherwise first show as a failed boot in CI.
"""
from __future__ import annotations

import py_compile
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted({*ROOT.glob("systemd/**/*.sh"), *ROOT.glob("tests/**/*.sh"), ROOT / ".ci" / "run"})
GUEST_PY = sorted(ROOT.glob("tests/system/**/*.py")) + sorted(ROOT.glob("tests/image/**/*.py"))


def test_the_scripts_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in SCRIPTS}
    assert {"tests/system/guest/stages.sh", "tests/system/run.sh", ".ci/run",
            "systemd/install.sh"} <= names
    assert ROOT / "tests" / "system" / "guest" / "drive.py" in GUEST_PY


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_shell_script_parses(script):
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr.strip()


@pytest.mark.parametrize("source", GUEST_PY, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_system_test_python_file_compiles(source, tmp_path):
    py_compile.compile(str(source), cfile=str(tmp_path / "c.pyc"), doraise=True)
