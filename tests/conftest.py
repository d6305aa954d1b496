"""Shared fixtures: gpiozero's MockFactory (PWM-capable pins), the session's wheel, text boxes.

The helpers a test imports (virtual clock and pins, scenarios, `run_cli`, `wait_for`, boxes)
are in tests/helpers/ (a package on sys.path: pyproject's `pythonpath`), not here."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gpiozero import Device
from hypothesis import settings

# A property holds or not whatever the machine's load: no example fails for being slow.
settings.register_profile("pi-companion", deadline=None)
settings.load_profile("pi-companion")
from gpiozero.pins.mock import MockFactory, MockPWMPin
from PIL import ImageDraw


@pytest.fixture
def mock_factory():
    factory = MockFactory(pin_class=MockPWMPin)
    previous = Device.pin_factory
    Device.pin_factory = factory
    yield factory
    factory.reset()
    Device.pin_factory = previous


REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """One wheel of this checkout for the session (`pip wheel`, as a user builds one for
    install.sh's PI_COMPANION_WHEEL), built from a copy so that the checkout gets no build/ or
    egg-info. The copy keeps symlinks as symlinks (data/pinmap.toml), as a clone has them.
    Tests that change the wheel copy it first."""
    src = tmp_path_factory.mktemp("wheel-src") / "pi-companion"
    shutil.copytree(REPO, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"))
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob("pi_companion-*.whl")
    return wheel


@pytest.fixture
def text_boxes(monkeypatch):
    """Record (text, ink box) of every piece of text drawn, to check nothing runs off the OLED.
    (Every string is drawn by Pillow itself meanwhile, not from the screens' cache of masks.)"""
    from pi_companion.ui import canvas
    monkeypatch.setattr(canvas, "TEXT_CACHE", False)
    boxes = []
    original = ImageDraw.ImageDraw.text

    def text(self, xy, text, fill=None, font=None, *args, **kwargs):
        # The ink box, with its bottom taken down to the line's descent: a line whose descender
        # room runs off the bottom edge cuts the 'g' or 'y' of the next name shown there.
        x0, y0, x1, y1 = self.textbbox(xy, text, font=font)
        ascent, descent = font.getmetrics()
        boxes.append((text, (x0, y0, x1, max(y1, int(xy[1]) + ascent + descent))))
        return original(self, xy, text, fill, font, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", text)
    return boxes
