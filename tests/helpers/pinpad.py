"""The real daemon (`pi-companion run --pins mock ...`) with a test's fingers on its mock pins.

Run as: python pinpad.py run --pins mock --display dummy --state-dir DIR [...], or forked
from a warm interpreter by tests/helpers/zygote.py (the same `main`).
Either way the process runs the daemon's own code unchanged (`pi_companion.cli.main`, the
`pi-companion` entry point); this wrapper only adds a hand on the box, through gpiozero's mock
pins: a driven pin goes through the same edge callback, input device and queue as a real GPIO
edge.

- PINPAD_HELD=YES,P2 (environment) / `held`: those buttons are closed when the box powers up;
- `press NAME` / `release NAME` (stdin lines): close / open that button's contact;
- the daemon's power-off is only written to stderr (`pinpad: POWER OFF`), never done;
- `report`: once the box has handled everything queued, one line `report {json}` with the live
  engine's report, the buttons it holds down and its next timer.
It says `ready N` (N = log records folded at resume) once the box loop runs.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from gpiozero import Device
from gpiozero.pins.mock import MockPWMPin

from pi_companion import assemble, systemd
from pi_companion.box import Box
from pi_companion.cli import main as cli_main
from pi_companion.games import registry
from pi_companion.hw import display
from pi_companion.hw.inputs import BUTTON_NAMES, RawEdge
from pi_companion.hw.pinmap import load_pinmap

PINS = load_pinmap()
HELD: set[str] = set()
OUT = threading.Lock()


class PowerUpPin(MockPWMPin):
    """A mock pin whose button is already closed when the box sets its pull-up."""

    def _set_pull(self, value: str) -> None:
        super()._set_pull(value)
        if self.info.name in HELD:
            self.drive_low()


def say(line: str) -> None:
    with OUT:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def fingers(box: Any, handled: list[int]) -> None:
    made = 0                                     # edges the fingers made (each one is queued)
    while line := sys.stdin.readline():
        cmd, _, name = line.strip().partition(" ")
        if cmd in ("press", "release"):
            pin = Device.pin_factory.pin(PINS[name])
            made += pin.state != (cmd == "release")
            pin.drive_low() if cmd == "press" else pin.drive_high()
        elif cmd == "report":
            until = time.monotonic() + 5.0
            while handled[0] < made and time.monotonic() < until:
                time.sleep(0.002)                # the box has handled every edge made so far
            if box.store is not None:
                box.store.flush()                # and its log holds what it has handled
            e = box.engine
            say("report " + json.dumps({"report": e.report(), "held": sorted(e.held()),
                                        "deadline": e.next_deadline(), "clock": e.clock,
                                        "notice": e.notice}))


def install(held: list[str]) -> None:
    HELD.update(f"GPIO{PINS[name]}" for name in held if name)
    make_factory, start = assemble.make_factory, Box.start

    def make(kind: str, *rest: Any) -> Any:
        factory = make_factory(kind, *rest)
        factory.pin_class = PowerUpPin
        return factory

    def started(box: Any) -> None:
        handled = [0]                            # pin edges the box has handled
        handle = box.handle

        def counted(item: Any) -> None:
            handle(item)
            if isinstance(item, RawEdge) and item.name in BUTTON_NAMES:
                handled[0] += 1

        box.handle = counted
        start(box)
        say(f"ready {box.resumed_records}")
        threading.Thread(target=fingers, args=(box, handled), daemon=True).start()

    assemble.make_factory = make
    Box.start = started  # type: ignore[method-assign]
    # Never the real logind call from a test: the daemon's power-off is noted, not done.
    systemd.power_off = lambda: print("pinpad: POWER OFF", file=sys.stderr, flush=True)


def warm() -> None:
    """Import what `run` imports on its way up (for tests/helpers/zygote.py)."""
    display.open_device("dummy")
    for game in registry.available():
        registry.get(game)


def main(argv: list[str]) -> int:
    install(os.environ.get("PINPAD_HELD", "").split(","))
    return int(cli_main(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
