"""The maker's generators under hardware/ (not a package): loaded by file, as `make diagram` runs them."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"


def load(name: str) -> ModuleType:
    """hardware/NAME.py as module NAME (hardware/ on sys.path: the generators import each other)."""
    if str(HARDWARE) not in sys.path:
        sys.path.insert(0, str(HARDWARE))
    spec = importlib.util.spec_from_file_location(name, HARDWARE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module
