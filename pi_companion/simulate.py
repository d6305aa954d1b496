"""The emulated box in a terminal: keys drive gpiozero mock pins, the OLED is drawn in block characters.

The very same Box (inputs, engine, outputs, display code) runs as on the Pi; only the pin
factory (MockFactory), the display (luma's dummy device) and the fingers (keys) are stand-ins.
A terminal has no key-up events, so a key is a press followed by a release after HOLD_S.
"""
from __future__ import annotations

import os
import select
import shutil
import sys
import termios
import threading
import time
import tty
from typing import Any

from .core.events import Request

TAP_S = 0.08
LONG_S = 1.2
MENU_LONG_S = 3.2
PLAYER_HOLD_S = 2.2
SHIFTED_DIGITS = "!@#$%^&*"                        # shift+1..8: hold that player's button
STEP_GAP_S = 0.03
HELP = ("keys: 1-8 players (shift: hold 2 s)  y/n YES/NO  Y/N long YES/NO  m MENU  M hold MENU",
        "      [ ] or arrows: encoder   . , one turntable step fwd/back   w whole turn   q quit")
FORWARD = ((0, 0), (1, 0), (1, 1), (0, 1))        # hall (A, B) levels, clockwise order


def frame_lines(image: Any, width: int) -> list[str]:
    """A one-bit frame as text: half blocks (2 px per cell) when wide enough, else quadrants."""
    px = image.load()
    w, h = image.size
    if width >= w + 2:
        chars = " ▀▄█"
        return ["".join(chars[(1 if px[x, y] else 0) | (2 if px[x, y + 1] else 0)] for x in range(w))
                for y in range(0, h, 2)]
    quads = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"
    lines = []
    for y in range(0, h, 2):
        row = []
        for x in range(0, w, 2):
            bits = ((1 if px[x, y] else 0) | (2 if px[x + 1, y] else 0)
                    | (4 if px[x, y + 1] else 0) | (8 if px[x + 1, y + 1] else 0))
            row.append(quads[bits])
        lines.append("".join(row))
    return lines


class KeyPad:
    """Turns keys into timed mock-pin edges."""

    def __init__(self, factory: Any, pins: dict[str, int], n_players: int, puck: Any = None) -> None:
        self.factory = factory
        self.puck = puck                                 # a FakePuck: the turntable keys drive it
        self.pins = pins
        self.n = n_players
        self.due: list[tuple[float, str, bool]] = []    # (when, pin name, drive low?)
        self.hall = 0                                    # index into FORWARD
        self.lock = threading.Lock()

    def pin(self, name: str) -> Any:
        return self.factory.pin(self.pins[name])

    def press(self, name: str, hold: float) -> None:
        now = time.monotonic()
        self.at(now, name, True)
        self.at(now + hold, name, False)

    def at(self, when: float, name: str, low: bool) -> None:
        with self.lock:
            self.due.append((when, name, low))
            self.due.sort()

    def encoder(self, delta: int) -> None:
        seq = (("ENC_A", True), ("ENC_B", True), ("ENC_A", False), ("ENC_B", False))
        if delta < 0:
            seq = (("ENC_B", True), ("ENC_A", True), ("ENC_B", False), ("ENC_A", False))
        now = time.monotonic()
        for i, (name, low) in enumerate(seq):
            self.at(now + i * 0.004, name, low)

    def hall_steps(self, steps: int) -> None:
        if self.puck is not None:
            for _ in range(abs(steps)):
                self.puck.step(1 if steps > 0 else -1)
            return
        now = time.monotonic()
        for i in range(abs(steps)):
            old = FORWARD[self.hall]
            self.hall = (self.hall + (1 if steps > 0 else -1)) % 4
            new = FORWARD[self.hall]
            name = "HALL_A" if old[0] != new[0] else "HALL_B"
            level = new[0] if name == "HALL_A" else new[1]
            self.at(now + i * STEP_GAP_S, name, not level)   # drive_low = level 0

    def key(self, key: str) -> bool:
        """Act on one key; False for an unknown key."""
        if key.isdigit() and 1 <= int(key) <= self.n:
            self.press(f"P{key}", TAP_S)
        elif key in SHIFTED_DIGITS and SHIFTED_DIGITS.index(key) < self.n:
            self.press(f"P{SHIFTED_DIGITS.index(key) + 1}", PLAYER_HOLD_S)
        elif key in ("y", "n", "m"):
            self.press({"y": "YES", "n": "NO", "m": "MENU"}[key], TAP_S)
        elif key in ("Y", "N"):
            self.press("YES" if key == "Y" else "NO", LONG_S)
        elif key == "M":
            self.press("MENU", MENU_LONG_S)
        elif key in ("]", "\x1b[C", "\x1b[A"):
            self.encoder(+1)
        elif key in ("[", "\x1b[D", "\x1b[B"):
            self.encoder(-1)
        elif key in (".", ",", "w"):
            self.hall_steps({".": 1, ",": -1, "w": 4}[key])
        else:
            return False
        return True

    def run_due(self) -> None:
        now = time.monotonic()
        with self.lock:
            ready = [d for d in self.due if d[0] <= now]
            self.due = [d for d in self.due if d[0] > now]
        for _, name, low in ready:
            if name in self.pins:
                pin = self.pin(name)
                pin.drive_low() if low else pin.drive_high()


def read_key(fd: int, timeout: float) -> str | None:
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return None
    data = os.read(fd, 8).decode("utf-8", "replace")
    return data


def simulate(args: Any) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("pi-companion simulate: needs an interactive terminal (keys are the buttons); "
              "for scripted play use `pi-companion replay SCENARIO`", file=sys.stderr)
        return 2
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from .app import Box
    from .daemon import build_config
    from .hw.display import Display, open_device
    from .hw.pinmap import load_pinmap

    config = build_config(args)
    if config is None:
        return 78
    puck = None
    if getattr(args, "puck", None) == "fake":
        from dataclasses import replace

        from .link.fake_puck import FakePuck
        puck = FakePuck()
        config = replace(config, wind_source="puck", puck_port=puck.path)
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    requests: list[Request] = []
    changed = threading.Event()
    box = Box(config, factory, Display(lambda: open_device("dummy")),
              on_frame=lambda _f: changed.set(), on_request=requests.append)
    pad = KeyPad(factory, load_pinmap(overrides=config.pins), len(config.players), puck)
    for name in ("ENC_A", "ENC_B"):
        pad.pin(name).drive_high()                       # the encoder rests with both contacts open
    box.start()
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    sys.stdout.write("\x1b[?1049h\x1b[?25l")
    try:
        return _loop(box, pad, fd, changed, requests)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        sys.stdout.write("\x1b[?25h\x1b[?1049l")
        sys.stdout.flush()
        box.close()
        if puck is not None:
            puck.close()


def _loop(box: Any, pad: KeyPad, fd: int, changed: threading.Event, requests: list[Request]) -> int:
    message = ""
    last_draw = 0.0
    while True:
        key = read_key(fd, 0.02)
        if key in ("q", "\x03"):
            return 0
        if key is not None and not pad.key(key):
            message = f"unknown key {key!r}"
        pad.run_due()
        for req in requests[:]:
            requests.remove(req)
            if req.name == "shutdown":
                _draw(box, "Shutdown requested: on the box this powers off. Bye.")
                time.sleep(1.0)
                return 0
            message = f"now playing {box.engine.rules.title}" if req.name == "switch" else req.name
        if changed.is_set() or time.monotonic() - last_draw > 0.25 or key is not None:
            changed.clear()
            _draw(box, message)
            last_draw = time.monotonic()


def _draw(box: Any, message: str) -> None:
    cols = shutil.get_terminal_size((80, 24)).columns
    image = box.display.device.image if box.display.device is not None else None
    lines = frame_lines(image, cols) if image is not None else ["(no display)"]
    width = len(lines[0])
    leds = " ".join(f"{name[:6]}{'●' if i in box.leds.lit else '○'}"
                    for i, name in enumerate(box.config.players))
    sounds = box.piezo.played[-1] if box.piezo.played else ""
    out = ["\x1b[H", "┌" + "─" * width + "┐"]
    out += ["│" + line + "│" for line in lines]
    out += ["└" + "─" * width + "┘",
            f" {box.engine.rules.title}  LEDs: {leds}  sound: {sounds}".ljust(cols - 1)[:cols - 1],
            *(h[:cols - 1] for h in HELP), f" {message}".ljust(cols - 1)[:cols - 1]]
    sys.stdout.write("\x1b[K\n".join(out) + "\x1b[J")
    sys.stdout.flush()
