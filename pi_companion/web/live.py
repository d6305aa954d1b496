"""A live box and its big screen, for the tools that look at the pages: `make screenshots`
(pi_companion.webshots), `make browser-test` (tests_browser/) and the web benchmark.

A box on gpiozero's mock pins runs its real loop thread, game log and hub in this process;
`pi-companion web` is the real second process, reached over loopback. The game is played by
driving the mock pins with real time, as a family would press the buttons. One set-up for all
three, so that they see the same stack."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..assemble import assemble
from ..config import Config
from ..core.events import HostCommand
from ..hw.pinmap import load_pinmap

PLAYERS = ("Ada", "Ben", "Cy")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def until(predicate: Callable[[], Any], timeout: float = 5.0, what: str = "the box did not get there") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise RuntimeError(what)
        time.sleep(0.005)


@dataclass
class Live:
    """What `live_box` runs: the box, its hub, the mock pins and the web process's address."""
    box: Any
    hub: Any
    factory: Any
    base: str
    state: Path
    web: subprocess.Popen[bytes] | None
    web_log: Any = None                 # the web process's stderr (a file), for its messages

    def web_stderr(self) -> str:
        if self.web_log is None:
            return ""
        self.web_log.flush()
        self.web_log.seek(0)
        return str(self.web_log.read().decode(errors="replace"))

    def pin(self, name: str) -> Any:
        return self.factory.pin(load_pinmap()[name])

    def tap(self, name: str, hold: float = 0.06) -> None:
        pin = self.pin(name)
        pin.drive_low()
        time.sleep(hold)
        pin.drive_high()
        time.sleep(0.05)

    def until(self, predicate: Callable[[], Any], timeout: float = 5.0) -> None:
        until(predicate, timeout)

    def buzz(self, order: list[str], gap_s: float = 0.004) -> None:
        """Presses in `order`, `gap_s` apart, inside the settle window: one decided buzz."""
        pins = [self.pin(name) for name in order]
        for pin in pins:
            pin.drive_low()
            time.sleep(gap_s)
        self.until(lambda: self.box.engine.report()["last_buzz"] is not None and self.box.engine.table.judging)
        time.sleep(0.08)
        for pin in pins:
            pin.drive_high()
        time.sleep(0.05)

    def stamped_buzz(self, order: list[str], gap_s: float) -> None:
        """Presses in `order` stamped exactly `gap_s` apart, handed to the box's loop as the edges
        its pins would give (logged and decided the same way): the margins on the pages are the
        same on every run, where real sleeps would show a few ms of scheduling jitter."""
        from ..box import Wake
        from ..core.events import Edge
        t0 = self.box.now()
        for i, name in enumerate(order):
            self.box.queue.put(Wake(Edge(t0 + i * gap_s, name, True)))
        self.until(lambda: self.box.engine.report()["last_buzz"] is not None and self.box.engine.table.judging
                   and len(self.box.engine.report()["last_buzz"]["order"]) == len(order))
        t1 = self.box.now()
        for name in order:
            self.box.queue.put(Wake(Edge(t1, name, False)))
        time.sleep(0.05)

    def quadrature(self, a: str, b: str, states: list[tuple[int, int]], pause: float) -> None:
        pin_a, pin_b = self.pin(a), self.pin(b)
        for level_a, level_b in states:
            (pin_a.drive_high if level_a else pin_a.drive_low)()
            (pin_b.drive_high if level_b else pin_b.drive_low)()
            time.sleep(pause)

    def seq(self) -> int:
        """The number of the latest snapshot the web process serves."""
        with urllib.request.urlopen(self.base + "/api/snapshot", timeout=2) as r:
            return int(json.load(r)["seq"])

    def new_game(self) -> None:
        """The host's "new game" (a finished game starts over)."""
        self.box.put_host_command(HostCommand(0.0, "new"))
        self.until(lambda: not self.box.engine.rules.is_over(self.box.engine.game))


def stop_web(proc: subprocess.Popen[bytes], patience: float) -> None:
    """SIGTERM the web process and wait `patience` seconds for it, then SIGKILL."""
    proc.terminate()
    try:
        proc.wait(timeout=patience)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_web(state: Path, hub_path: Path, log: Any = subprocess.DEVNULL,
              port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """The real `pi-companion web` on loopback (a free port unless given), once it serves a
    snapshot."""
    port = port or free_port()
    web = subprocess.Popen([sys.executable, "-m", "pi_companion", "web", "--config", os.devnull,
                            "--state-dir", str(state), "--socket", str(hub_path),
                            "--bind", "127.0.0.1", "--port", str(port)],
                           stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 15
    while True:
        try:
            urllib.request.urlopen(base + "/api/snapshot", timeout=1).close()
            return web, base
        except OSError:
            if web.poll() is not None or time.monotonic() > end:
                web.kill()
                web.wait()
                raise RuntimeError("pi-companion web did not start" + _tail(log)) from None
            time.sleep(0.05)


def _tail(log: Any) -> str:
    if not hasattr(log, "seek"):
        return ""
    log.seek(0)
    text = log.read().decode(errors="replace").strip()
    return f": {text[-500:]}" if text else ""


@contextmanager
def live_box(state: Path, game: str = "grab-bag", options: dict[str, Any] | None = None, *,
             players: tuple[str, ...] = PLAYERS, config: Any = None, display: Any = None,
             prepare: Callable[[Any], None] | None = None, web: bool = True,
             board_url: str = "", web_port: int | None = None) -> Iterator[Live]:
    """A running box (loop thread, game log in `state`, hub socket) and, with `web`, its
    `pi-companion web`. `config` replaces the one made of game, options and players;
    `display` defaults to luma's dummy device (the daemon's on a PC); `prepare(box)` runs just
    before the loop thread starts; `board_url` is the address the OLED's QR codes carry (empty:
    the QR screen says the big screen is off); `web_port`: the web process's port (default a
    free one)."""
    if config is None:
        config = Config(players=players, game=game, seed=1, sound=False, games={game: options or {}})
    built = assemble(replace(config, state_dir=str(state)), pins="mock", display=display or "dummy",
                     hub=True, hub_path=state / "hub.sock", hub_board_url=board_url)
    box, hub, factory = built.box, built.hub, built.factory
    proc = None
    with tempfile.TemporaryFile() as log:
        try:
            if prepare is not None:
                prepare(box)
            box.start()
            base = ""
            if web:
                assert hub is not None, "the hub did not start"
                proc, base = start_web(state, hub.path, log, port=web_port)
            yield Live(box, hub, factory, base, state, proc, log)
        finally:
            if proc is not None:
                stop_web(proc, 10)
            built.close()
            factory.reset()
