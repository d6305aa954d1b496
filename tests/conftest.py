"""Shared fixtures: gpiozero's MockFactory (PWM-capable pins), a scenario runner."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import os
import time
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device
from hypothesis import settings

# A property holds or not whatever the machine's load: no example fails for being slow.
settings.register_profile("pi-companion", deadline=None)
settings.load_profile("pi-companion")
from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin
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


class Clock:
    """Virtual time for pins and factory: tests set `Clock.now` and edges are stamped with it."""
    now = 0.0


class VirtualPin(MockPin):
    """A gpiozero mock pin whose edges carry the virtual clock's time as their ticks."""

    def _change_state(self, value: bool) -> bool:
        if self._state == value:
            return False
        self._state = value
        self._last_change = Clock.now
        return True


class VirtualFactory(MockFactory):
    def ticks(self) -> float:  # type: ignore[override]
        return Clock.now


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


def scenario(game: str, players: list[str], events: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"game": game, "players": players, "events": events, **extra}


def tap(button: str, t: float, hold: float = 0.08) -> list[dict[str, Any]]:
    """A clean press and release."""
    return [{"t": round(t, 6), "press": button}, {"t": round(t + hold, 6), "release": button}]


def read_now(fd: int, size: int = 4096) -> bytes:
    """What a pty master holds now, without blocking: select() also reports a master readable
    when its slave was just closed, and if the serial link reopens the slave before the read,
    a blocking read would wait for ever. OSError (EIO: no slave open) goes to the caller."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, size)
    except BlockingIOError:
        return b""
    finally:
        os.set_blocking(fd, True)


def wait_for(predicate, timeout: float = 5.0) -> bool:
    """Poll `predicate` until it holds (the box's loop runs on its own thread)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if predicate():
                return True
        except LookupError:      # read mid-change (e.g. a list not filled yet): not yet
            pass
        time.sleep(0.002)
    return False


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_companion", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def replay(data: dict[str, Any]) -> dict[str, Any]:
    """Run a scenario in-process through the same code the CLI uses."""
    from pi_companion.replay import load_scenario, run_scenario
    return run_scenario(load_scenario(json.loads(json.dumps(data))))


def daemon_in_a_thread(monkeypatch, args):
    """`daemon.main(args)` as systemd runs it, on a thread of the test (its signal latch is not
    installed: that needs the main thread). A context manager giving (thread, result): `result`
    gets main's exit status. Its pin factory (the daemon makes one) is reset at the end and the
    one before put back."""
    import contextlib
    import threading

    from pi_companion import daemon

    @contextlib.contextmanager
    def running():
        monkeypatch.setattr(daemon.StopLatch, "install", lambda self: None)
        result: list[int] = []
        previous = Device.pin_factory
        thread = threading.Thread(target=lambda: result.append(daemon.main(args)))
        thread.start()
        try:
            yield thread, result
        finally:
            if Device.pin_factory is not None:
                Device.pin_factory.reset()
            Device.pin_factory = previous
    return running()
