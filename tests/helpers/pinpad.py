"""The real daemon (`pi-companion run --pins mock ...`) with a test's fingers on its mock pins.

Run as: python pinpad.py run --pins mock --display dummy --state-dir DIR [...], or, to save
the interpreter's start (~0.3 s) per process, forked from a warm one: `pinpad.py --zygote`.
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
import signal
import sys
import threading
import time
from typing import Any

from gpiozero import Device
from gpiozero.pins.mock import MockPWMPin

from pi_companion import app, daemon, systemd
from pi_companion.cli import main
from pi_companion.games import registry
from pi_companion.hw import display
from pi_companion.hw.pinmap import load_pinmap

PINS = load_pinmap()
HELD: set[str] = set()
OUT = threading.Lock()


class Lines:
    """The fingers' line channel: stdin/stdout, or two FIFOs for a forked daemon."""

    def __init__(self) -> None:
        self.inp: Any = sys.stdin
        self.out: Any = sys.stdout

    def read(self) -> str | None:
        return self.inp.readline() or None

    def write(self, line: str) -> None:
        with OUT:
            self.out.write(line + "\n")
            self.out.flush()


CHANNEL = Lines()


class PowerUpPin(MockPWMPin):
    """A mock pin whose button is already closed when the box sets its pull-up."""

    def _set_pull(self, value: str) -> None:
        super()._set_pull(value)
        if self.info.name in HELD:
            self.drive_low()


def say(line: str) -> None:
    CHANNEL.write(line)


def fingers(box: Any) -> None:
    while (line := CHANNEL.read()) is not None:
        cmd, _, name = line.strip().partition(" ")
        if cmd in ("press", "release"):
            pin = Device.pin_factory.pin(PINS[name])
            pin.drive_low() if cmd == "press" else pin.drive_high()
        elif cmd == "report":
            settle_until = time.monotonic() + 2.0
            while not box.queue.empty() and time.monotonic() < settle_until:
                time.sleep(0.002)
            time.sleep(0.015)                # the item the loop took last is handled by now
            e = box.engine
            say("report " + json.dumps({"report": e.report(), "held": sorted(e.held()),
                                        "deadline": e.next_deadline(), "clock": e.clock}))


def install(held: list[str]) -> None:
    HELD.update(f"GPIO{PINS[name]}" for name in held if name)
    make_factory, start = daemon.make_factory, app.Box.start

    def make(kind: str) -> Any:
        factory = make_factory(kind)
        factory.pin_class = PowerUpPin
        return factory

    def started(box: Any) -> None:
        start(box)
        say(f"ready {box.resumed_records}")
        threading.Thread(target=fingers, args=(box,), daemon=True).start()

    daemon.make_factory = make
    app.Box.start = started  # type: ignore[method-assign]
    # Never the real logind call from a test: the daemon's power-off is noted, not done.
    systemd.power_off = lambda: print("pinpad: POWER OFF", file=sys.stderr, flush=True)


def zygote() -> None:
    """Fork daemons on request, each from this already-warm interpreter.

    stdin: one JSON line per daemon, {"argv", "held", "stderr", "cmd", "out"} (two FIFOs for
    the fingers' lines); stdout: its pid. Children are reaped here as they die."""
    def reap(*_: Any) -> None:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
    signal.signal(signal.SIGCHLD, reap)
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid:
            sys.stdout.write(f"{pid}\n")
            sys.stdout.flush()
            continue
        code = 1
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            fd = os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            CHANNEL.inp = open(job["cmd"])
            CHANNEL.out = open(job["out"], "w")
            install(job["held"])
            code = main(job["argv"])
        finally:
            os._exit(code)


if __name__ == "__main__":
    if sys.argv[1:] == ["--zygote"]:
        display.open_device("dummy")        # warm up: what `run` imports on its way up
        for game in registry.available():
            registry.get(game)
        zygote()
    else:
        install(os.environ.get("PINPAD_HELD", "").split(","))
        sys.exit(main(sys.argv[1:]))
