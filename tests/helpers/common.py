"""Helpers the tests import: the virtual clock and its pins, scenarios, the CLI, waiting.

(Once in conftest.py as `from conftest import ...`; a module of its own so that tests in any
folder import it the same way: tests/ is on sys.path, pyproject's `pythonpath`.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPin


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


def stop_at_ready(monkeypatch, look=None):
    """`daemon.main` stops as systemd would stop it, once it has sent READY=1: no real signal
    (the latch is not installed), the main thread is woken as by SIGTERM. `look()`, if given,
    runs at the READY=1 call itself, before the stop."""
    from pi_companion import daemon, systemd

    latches: list = []
    monkeypatch.setattr(daemon.StopLatch, "install", lambda self: latches.append(self))

    def notify(state: str) -> bool:
        if state == "READY=1":
            if look is not None:
                look()
            for latch in latches:
                latch.signalled = True
                latch.set()
        return True

    monkeypatch.setattr(systemd, "notify", notify)


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
