"""One way to build a box for a test (see `make_box`), and the rigs several tests share."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockPin

from helpers.common import Clock, VirtualFactory, VirtualPin
from pi_companion.box import Box, Wake
from pi_companion.config import Config
from pi_companion.core.engine import fold_records
from pi_companion.core.events import Turn
from pi_companion.gamelog import GameLog, open_log
from pi_companion.games import registry
from pi_companion.hub.server import Hub
from pi_companion.hub.protocol import CommandError, parse_command
from pi_companion.hw.display import Display, open_device
from pi_companion.hw.pinmap import load_pinmap

PLAYERS = ("Ada", "Ben", "Cy")


def make_box(factory: Any, state: Path | None = None, *, config: Config | None = None,
             players: tuple[str, ...] = PLAYERS, seed: int = 1, sound: bool = False,
             game: str | None = None, display: Any = None, **box_kw: Any) -> Box:
    """The one way to build a Box for a test: on `factory` (gpiozero's MockFactory, or the
    virtual clock's: `virtual_box`), its game log in `state` (none without one; `store=` gives
    one of the test's, a slow or failing log), `config` as given or made of players, seed,
    sound and game. `display`: None is no OLED, "dummy" luma's dummy device, else a Display
    as is (one that fails, say). The rest goes to Box (on_frame, on_request, watchdog, ...).
    The caller closes the box (and resets its factory)."""
    if config is None:
        config = Config(players=players, seed=seed, sound=sound, **({"game": game} if game else {}))
    if display is None or display == "dummy":
        display = Display(None if display is None else (lambda: open_device("dummy")))
    if state is not None and "store" not in box_kw:
        box_kw["store"] = GameLog(state)
    return Box(config, factory, display, **box_kw)


def virtual_box(state: Path | None = None, *, pin_class: type = VirtualPin, **kw: Any) -> Box:
    """`make_box` on mock pins whose edges are stamped with the virtual clock (`Clock.now`):
    `box.factory` drives the pins, `box.pump()` runs the loop's work in the test's thread."""
    return make_box(VirtualFactory(pin_class=pin_class), state, **kw)


def attach_hub(box: Box, state: Path, **hub_kw: Any) -> Hub:
    """The web hub on `state`/hub.sock, attached to `box` (board_url, hotspot_path, ...)."""
    hub = Hub(state / "hub.sock", state, **hub_kw)
    hub.attach(box)
    return hub


PINS = load_pinmap()
BOARD = "http://box.local:8080/"


class Rig:
    def __init__(self, state: Path) -> None:
        Clock.now = 0.0
        self.factory = VirtualFactory(pin_class=VirtualPin)
        self.state = state
        self.hotspot_file = state / "net" / "hotspot.json"
        self.box = make_box(self.factory, state, seed=3)
        self.hub = attach_hub(self.box, state, board_url=BOARD, hotspot_path=self.hotspot_file)
        self.box.pump()

    def close(self) -> None:
        self.box.close()
        self.factory.reset()

    def tick(self, seconds: float = 0.3) -> None:
        Clock.now += seconds
        self.box.queue.put(Wake())
        self.box.pump()

    def tap(self, button: str, hold: float = 0.05) -> None:
        pin = self.factory.pin(PINS[button])
        Clock.now += 0.2
        pin.drive_low()
        self.box.pump()
        Clock.now += hold
        self.box.queue.put(Wake())
        self.box.pump()
        pin.drive_high()
        self.box.pump()

    def act(self, kind: str, arg) -> None:
        box = self.box
        if kind == "press":
            button, _, long = arg.partition("-")
            self.tap(button, 1.2 if long else 0.05)
        elif kind == "turn":
            Clock.now += 0.1
            box.queue.put(Wake(Turn(box.now(), arg)))
            box.pump()
        elif kind == "web-menu":
            if box.engine.menu is None:
                self.tap("MENU")
            Clock.now += 0.1
            box.queue.put(Wake(Turn(box.now(), -1)))
            box.pump()
            self.tap("YES")
        elif kind == "hotspot":
            self.hotspot_file.parent.mkdir(exist_ok=True)
            if arg is None:
                self.hotspot_file.unlink(missing_ok=True)
            else:
                ssid, password, address = arg
                self.hotspot_file.write_text(json.dumps({"ssid": ssid, "password": password, "address": address}))
            self.hub.check_hotspot()
            box.pump()
        else:
            try:
                box.put_host_command(parse_command(arg, tuple(box.engine.players)))
            except CommandError:
                return                               # the hub refuses it: never logged
            box.pump()
        self.tick()

    def folded(self):
        assert self.box.store.flush()
        with open_log(self.box.store.path) as reader:
            engine = registry.engine_for(reader.header, debounce_s=self.box.config.debounce_ms / 1000.0)
            count, why, _ = fold_records(engine, reader.records())
        assert why is None, why
        return engine


class LatePin(VirtualPin):
    """A mock pin on the virtual clock: its level changes at the edge, its callback waits in
    `held` until delivered (a late GPIO backend)."""
    held: list[tuple["LatePin", float, bool]] = []

    def _call_when_changed(self) -> None:
        LatePin.held.append((self, self._last_change, self._state))

    @classmethod
    def deliver(cls, count: int | None = None) -> None:
        """Run the oldest `count` held callbacks (all by default)."""
        n = len(cls.held) if count is None else count
        now, cls.held = cls.held[:n], cls.held[n:]
        for pin, ticks, value in now:
            super(MockPin, pin)._call_when_changed(ticks, value)


def late_box(state_dir: Any) -> Box:
    config = Config(game="grab-bag", players=("Ada", "Ben", "Cy", "Di"), seed=3, sound=False,
                    games={"grab-bag": {"variant": "all-seekers"}})
    box = virtual_box(state_dir, config=config, pin_class=LatePin)
    box.piezo.play = box.piezo.played.append  # type: ignore[method-assign]
    return box


def late_first_press_until_the_window_is_due(box: Box) -> None:
    """P1 pressed at 5.0 with its callback late, P2 at 5.0005 delivered first; the box taken
    to 5.0026, when the window is due and waits for P1's edge (P1 reads down)."""
    pin = lambda name: box.factory.pin(PINS[name])   # noqa: E731
    pin("P1").drive_low()                         # the earlier press: its callback is late
    Clock.now = 5.0005
    pin("P2").drive_low()
    LatePin.held = [LatePin.held[1], LatePin.held[0]]
    LatePin.deliver(1)                            # the later press arrives first
    box.pump()
    Clock.now = 5.0026                            # the window is due
    box.queue.put(Wake())
    box.pump()


def tap(box, factory, button, t):
    pin = factory.pin(load_pinmap()[button])
    Clock.now = t
    pin.drive_low()
    box.pump()
    Clock.now = t + 0.05
    pin.drive_high()
    box.pump()
