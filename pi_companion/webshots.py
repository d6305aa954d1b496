"""`make screenshots`, the big screen's part: the scoreboard, host page and history during a real
game, in headless chromium (pi_companion.web.headless).

A box on mock pins runs its real loop thread and hub in this process; `pi-companion web` is the
real second process; the game is played by driving the mock pins with real time, so the pictures
show what a family would see (scores, a buzz with its +N ms margins, the wind dial)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .core.events import HostCommand
from .web import headless

PLAYERS = ("Ada", "Ben", "Cy")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def live_box(game: str, state: Path, options: dict[str, Any] | None = None) -> Iterator[tuple[Any, Any, Any, str]]:
    """(box, hub, mock pin factory, base URL) of a running box and its `pi-companion web`."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from .app import Box
    from .config import Config
    from .hub import Hub
    from .hw.display import Display
    from .store import GameLog
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    box = Box(Config(players=PLAYERS, game=game, seed=1, sound=False, games={game: options or {}}), factory, Display(None),
              store=GameLog(state))
    hub = Hub(box, state / "hub.sock", state)
    hub.attach()
    hub.start()
    box.start()
    port = _free_port()
    web = subprocess.Popen([sys.executable, "-m", "pi_companion", "web", "--config", os.devnull,
                            "--state-dir", str(state), "--socket", str(state / "hub.sock"),
                            "--bind", "127.0.0.1", "--port", str(port)],
                           stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/api/snapshot", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("pi-companion web did not start")
        yield box, hub, factory, base
    finally:
        web.terminate()
        web.wait(timeout=10)
        box.close()
        hub.close()
        factory.reset()


def _pin(factory: Any, name: str) -> Any:
    from .hw.pinmap import load_pinmap
    return factory.pin(load_pinmap()[name])


def _tap(factory: Any, name: str, hold: float = 0.06) -> None:
    pin = _pin(factory, name)
    pin.drive_low()
    time.sleep(hold)
    pin.drive_high()
    time.sleep(0.05)


def _until(predicate: Any, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise RuntimeError("the box did not get there")
        time.sleep(0.01)


def _buzz(box: Any, factory: Any, order: list[str], gap_s: float = 0.004) -> None:
    """Presses in `order`, `gap_s` apart, inside the settle window: one decided buzz."""
    pins = [_pin(factory, name) for name in order]
    for pin in pins:
        pin.drive_low()
        time.sleep(gap_s)
    _until(lambda: box.engine.report()["last_buzz"] is not None and box.engine.table.judging)
    time.sleep(0.08)
    for pin in pins:
        pin.drive_high()
    time.sleep(0.05)


def _viewport(driver: Any, width: int, height: int) -> None:
    """Exactly `width` x `height` CSS pixels of page (a window size would include the frame)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800})


def _open(driver: Any, base: str, path: str, size: tuple[int, int]) -> None:
    _viewport(driver, *size)
    driver.get(base + path)
    if path.split("#")[0] in ("/", "/host"):
        headless.wait(driver, lambda d: d.find_element("id", "status").text == "live")
    if path.startswith("/host"):
        headless.wait(driver, lambda d: d.find_elements("css selector", "#names input"))


def _snap(driver: Any, base: str, out: Path, size: tuple[int, int]) -> Path:
    """The page as it is now, once it has drawn the box's latest snapshot; the whole page
    (taller than the screen where it must), so nothing is cut off in the picture."""
    if driver.find_elements("id", "status"):
        seq = str(json.loads(urllib.request.urlopen(base + "/api/snapshot", timeout=2).read())["seq"])
        headless.wait(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-seq") == seq)
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    _viewport(driver, size[0], max(size[1], height))
    time.sleep(0.2)
    driver.save_screenshot(str(out))
    _viewport(driver, *size)
    return out


def grab_bag(out: Path, state: Path) -> list[Path]:
    """A short game played to the end (for /history), then a new one: three judged buzzes and a
    fourth left on screen with its margins."""
    written = []
    with live_box("grab-bag", state, {"cards": 4}) as (box, hub, factory, base):
        while not box.engine.rules.is_over(box.engine.game):
            seekers = sorted(box.engine.rules.buzzers(box.engine.game))
            _buzz(box, factory, [f"P{seekers[0] + 1}"])
            _tap(factory, "YES")
            _until(lambda: not box.engine.table.judging)
        box.put_host_command(HostCommand(0.0, "new"))
        _until(lambda: not box.engine.rules.is_over(box.engine.game))
        for first in (1, 2, 1):                              # Ben scores, Cy scores, Ben again
            seekers = sorted(box.engine.rules.buzzers(box.engine.game))
            order = sorted(seekers, key=lambda s: s != first)
            _buzz(box, factory, [f"P{s + 1}" for s in order])
            _tap(factory, "YES")
            _until(lambda: not box.engine.table.judging)
        seekers = sorted(box.engine.rules.buzzers(box.engine.game))
        _buzz(box, factory, [f"P{s + 1}" for s in reversed(seekers)], gap_s=0.012)   # left on screen
        phone, tv = headless.SIZES["phone"], headless.SIZES["tv"]
        with headless.chromium(*phone) as driver:
            for path, name in (("/", "web-scoreboard-phone"), (f"/host#t={hub.token}", "web-host-phone"),
                               ("/history", "web-history-phone")):
                _open(driver, base, path, phone)
                written.append(_snap(driver, base, out / f"{name}.png", phone))
            _open(driver, base, "/", tv)
            written.append(_snap(driver, base, out / "web-scoreboard-tv.png", tv))
    return written


def _quadrature(pin_a: Any, pin_b: Any, states: list[tuple[int, int]], pause: float) -> None:
    for a, b in states:
        (pin_a.drive_high if a else pin_a.drive_low)()
        (pin_b.drive_high if b else pin_b.drive_low)()
        time.sleep(pause)


def all_wound_up(out: Path, state: Path) -> list[Path]:
    """A wind check part way: target 3 turns, 2 1/4 wound (the page is open first: a check
    left still for long ends)."""
    tv = headless.SIZES["tv"]
    with live_box("all-wound-up", state) as (box, hub, factory, base), headless.chromium(*tv) as driver:
        _open(driver, base, "/", tv)
        _tap(factory, "P1")
        _until(lambda: box.engine.report()["check"] is not None)
        _quadrature(_pin(factory, "ENC_A"), _pin(factory, "ENC_B"),      # the target: 1 -> 3
                    [(0, 1), (0, 0), (1, 0), (1, 1)] * 2, 0.03)
        _until(lambda: box.engine.report()["check"]["target"] == 3)
        _quadrature(_pin(factory, "HALL_A"), _pin(factory, "HALL_B"),
                    [(1, 0), (1, 1), (0, 1), (0, 0)] * 2 + [(1, 0)], 0.05)
        _until(lambda: box.engine.report()["check"]["steps"] == 9)
        return [_snap(driver, base, out / "web-wind-tv.png", tv)]


def save(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        written += grab_bag(out, Path(a))
        written += all_wound_up(out, Path(b))
    return written
