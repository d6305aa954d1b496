"""Set-up: the Makefile's interpreter guard and venv repair, the package's licence metadata.

The Makefile runs in a throwaway copy with stand-in interpreters (shell scripts that report a
version and record what they were asked), so no network and no real install is needed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/bin/sh
# A stand-in interpreter reporting Python {version}: `-m venv DIR` makes a venv of stand-ins.
echo "python $*" >> "{log}"
case "$1" in
  --version) echo "Python {version}" ;;
  -c) exit 0 ;;
  -m) [ "$2" = venv ] || exit 1
      mkdir -p "$3/bin"
      cp "$0" "$3/bin/python"
      printf '#!/bin/sh\\necho "pip $*" >> "{log}"\\n' > "$3/bin/pip"
      chmod +x "$3/bin/pip" ;;
esac
"""


def fake_python(directory: Path, name: str, version: str, log: Path) -> Path:
    path = directory / name
    path.write_text(FAKE_PYTHON.format(version=version, log=log))
    path.chmod(0o755)
    return path


@pytest.fixture
def clone(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "shims").mkdir()
    return tmp_path


def make(clone: Path, python: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", ".venv/.installed", f"PYTHON={python}"], cwd=clone,
                          capture_output=True, text=True, timeout=60)


def test_too_old_python_fails_first_and_leaves_no_venv(clone):
    log = clone / "calls.log"
    old = fake_python(clone / "shims", "python3.10", "3.10.12", log)
    result = make(clone, old)
    assert result.returncode != 0
    assert "needs Python 3.11 or newer" in result.stderr and "3.10.12" in result.stderr
    assert not (clone / ".venv").exists()
    assert log.read_text().splitlines() == ["python --version", "python --version"]


def test_unfinished_or_wrong_venv_is_rebuilt(clone):
    log = clone / "calls.log"
    good = fake_python(clone / "shims", "python3.11", "3.11.9", log)
    venv = clone / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "leftover").write_text("an install that stopped half way (no stamp)")
    result = make(clone, good)
    assert result.returncode == 0, result.stderr
    assert not (venv / "leftover").exists() and (venv / ".installed").exists()
    assert "pip install --quiet -e .[dev]" in log.read_text()
    # A finished venv whose interpreter is too old (made before the guard): rebuilt as well.
    fake_python(venv / "bin", "python", "3.10.12", clone / "other.log")
    (venv / "leftover").write_text("the old venv")
    os.utime(venv / ".installed")
    assert make(clone, good).returncode == 0
    assert not (venv / "leftover").exists()
    # A good, finished venv is left alone.
    log.write_text("")
    result = make(clone, good)
    assert result.returncode == 0 and "is up to date" in result.stdout
    assert "venv" not in log.read_text() and "pip" not in log.read_text()


def test_licence_is_an_spdx_expression_with_the_file(tmp_path):
    """Build the real wheel metadata with warnings as errors: no setuptools deprecation."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "pi_companion").mkdir()
    shutil.copy(ROOT / "pi_companion" / "__init__.py", tmp_path / "pi_companion" / "__init__.py")
    (tmp_path / "out").mkdir()
    code = ("import sys; from setuptools import build_meta as b; "
            "print(b.prepare_metadata_for_build_wheel(sys.argv[1]))")
    result = subprocess.run([sys.executable, "-W", "error", "-c", code, str(tmp_path / "out")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    meta = (tmp_path / "out" / result.stdout.split()[-1] / "METADATA").read_text()
    assert "License-Expression: MIT" in meta and "License-File: LICENSE" in meta
    assert "Permission is hereby granted" in (ROOT / "LICENSE").read_text()
