"""The pure core (games, arbitration, decoding, the puck's and the hub's protocols, screens) never
imports hardware libraries."""
from __future__ import annotations

import subprocess
import sys

BLOCKER = r"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'gpiozero', 'luma', 'serial', 'RPi', 'lgpio'}:
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import pkgutil, importlib
import pi_companion.core, pi_companion.games, pi_companion.ui
for pkg in (pi_companion.core, pi_companion.games, pi_companion.ui):
    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(pkg.__name__ + '.' + mod.name)
import pi_companion.replay, pi_companion.link.proto, pi_companion.hub.protocol
print('ok')
"""


def test_pure_packages_import_without_hardware_libraries():
    out = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_blocker_really_blocks():
    code = BLOCKER.replace("import pi_companion.replay", "import pi_companion.hw.inputs")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "blocked: gpiozero" in out.stderr


def test_pure_packages_pass_mypy_strict():
    import pytest
    api = pytest.importorskip("mypy.api")
    from pathlib import Path
    root = Path(__file__).parents[1] / "pi_companion"
    targets = [str(root / "core"), str(root / "games"), str(root / "ui"), str(root / "link" / "proto.py"),
               str(root / "hub" / "protocol.py")]
    out, err, status = api.run(["--strict", "--no-error-summary", "--cache-dir", "/tmp/pi-companion-mypy",
                                *targets])
    assert status == 0, out + err
