"""The one place that assembles a box: a `Config` and the chosen parts in, a box ready to start out.

Every way of running a box goes through `assemble`: the daemon (`pi-companion run`), `simulate`,
the web's live stack (web/live.py: screenshots, browser tests, the web benchmark) and the
benchmarks. So a part added here (the state directory's lock, the hub) is in every box any user
or test runs. The parts:

- pins: "real" (on a Pi: the kernel's GPIO character device, or lgpio, as the config's `edges`
  says; else gpiozero's own choice of pin factory),
  "mock" (gpiozero's MockFactory), or a pin factory object (the benchmarks' virtual-time
  factories, a test's);
- display: "device" (the config's driver), "ssd1306" / "sh1106", "dummy" (luma's dummy
  device: the frame kept in memory), "none", or a Display object;
- store: the config's state directory (a durable game log, locked against a second writer),
  a GameLog the caller made (a benchmark's; its directory is locked the same), or none;
- hub: on (the web's socket) or off;
- puck: as the config says (its `wind_source` and `puck_port`), or "fake" (a software puck on
  a pty, read through the real serial link).
"""
from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from .box import Box
from .config import Config, ConfigError, check_buttons, check_game, load_config_arg
from .gamelog import GameLog, StateDirBusy, lock_state_dir
from .games import registry
from .hw.display import Display, open_device

# Imported where used, off the way to READY: the hub only with the web on, the fake puck only
# in `simulate`.
if TYPE_CHECKING:
    from .hub.server import Hub
    from .link.fake_puck import FakePuck

log = logging.getLogger("pi_companion")
__all__ = ["Assembly", "NoPins", "StateDirBusy", "assemble", "build_config", "make_display", "make_factory"]


class NoPins(RuntimeError):
    """No pin factory could be made (on a PC without `--pins mock`)."""


def build_config(args: Any) -> Config | None:
    """The config file with the command line's overrides; None (after one line on stderr) if bad."""
    try:
        config = load_config_arg(args.config)
        if getattr(args, "game", None):
            if args.game not in registry.GAMES:
                raise ConfigError(f"--game: unknown game {args.game!r} (one of {', '.join(registry.GAMES)})")
            config = replace(config, game=args.game)
        if getattr(args, "players", None):
            names = tuple(n.strip() for n in args.players.split(","))
            if not 2 <= len(names) <= 8 or not all(names) or len(set(names)) != len(names):
                raise ConfigError("--players: give 2 to 8 unique names, comma-separated")
            config = replace(config, players=names)
        if getattr(args, "state_dir", None):
            config = replace(config, state_dir=args.state_dir)
        if getattr(args, "edges", None):
            config = replace(config, edges=args.edges)
        if getattr(args, "pinmap", None):
            config = replace(config, pinmap=args.pinmap, pins={})
        check_buttons(config, args.config, "--players" if getattr(args, "players", None) else "box.players")
        check_game(config)
    except ConfigError as err:
        print(f"pi-companion: {err}", file=sys.stderr)
        return None
    if config.seed is None:
        config = replace(config, seed=int.from_bytes(os.urandom(4), "big"))
    return config


def make_factory(kind: str, edges: str = "kernel") -> Any:
    """The gpiozero pin factory: MockFactory for `mock`; for real pins on a Pi, every pin through
    the kernel's GPIO character device (`edges` = "kernel": hw/kernel_pins.py, no thread that
    wakes while idle) or gpiozero's lgpio factory ("lgpio", or whatever GPIOZERO_PIN_FACTORY
    names); off a Pi, gpiozero's own choice (and its reason when it has none)."""
    if kind == "mock":
        Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    elif edges == "kernel" and os.environ.get("GPIOZERO_PIN_FACTORY", "lgpio").lower() == "lgpio" \
            and os.path.exists("/dev/gpiochip0"):
        from gpiozero.exc import PinUnknownPi

        from .hw.kernel_pins import KernelFactory
        try:
            Device.pin_factory = KernelFactory()
        except PinUnknownPi:           # a GPIO chip, but not a Pi's: what gpiozero would pick
            Device.ensure_pin_factory()
        else:
            log.info("pins: the kernel's GPIO character device (%s, label %s), edges from its line events",
                     Device.pin_factory.chip_path, Device.pin_factory.chip_label)
    else:
        Device.ensure_pin_factory()
    return Device.pin_factory


def make_display(driver: str, config: Config) -> Display:
    """The OLED: `device` (the config's driver; `auto` is an SSD1306), a driver by name,
    `dummy` (luma's in-memory device) or `none`."""
    if driver == "none":
        return Display(None)
    if driver == "device":
        driver = config.display
    if driver == "auto":
        driver = "ssd1306"
    return Display(lambda: open_device(driver, config.i2c_port, config.i2c_address, config.rotate))


@dataclass
class Assembly:
    """A box and the parts it was built with; `close()` lets go of them all, in order."""
    config: Config
    box: Box
    factory: Any
    store: GameLog | None = None
    hub: Hub | None = None
    puck: FakePuck | None = None
    lock: int | None = None          # the state directory's flocked descriptor

    def close(self) -> None:
        self.box.close()
        if self.hub is not None:
            self.hub.close()
        if self.puck is not None:
            self.puck.close()
        self.release()

    def release(self) -> None:
        """Let go of the state directory's lock (a process that exits lets go of it anyway)."""
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def assemble(config: Config, *, pins: Any = "real", display: Any = "device", store: bool | GameLog = True,
             hub: bool = False, hub_path: Path | None = None, hub_board_url: str | None = None,
             puck: str | None = None, **hooks: Any) -> Assembly:
    """A box built from `config` and the chosen parts (see the module's doc), not yet started.

    With a store, the state directory is locked first: StateDirBusy if another process writes
    there (nothing else is touched then). `hooks` go to the Box (on_frame, on_request, on_exit,
    watchdog, watchdog_s). The hub, when on, is attached and listening before this returns (a
    hub that cannot listen is logged and left out: the box plays on without it). Raises what
    the parts raise (no pin factory, a state directory that cannot be read): with nothing left
    held."""
    chosen = store if isinstance(store, GameLog) else None      # a log a benchmark made itself
    lock = lock_state_dir(chosen.dir if chosen is not None else config.state_dir) \
        if store is True or chosen is not None else None
    fake = None
    try:
        if puck == "fake":
            from .link.fake_puck import FakePuck
            fake = FakePuck()
            config = replace(config, wind_source="puck", puck_port=fake.path)
        try:
            factory = make_factory(pins, config.edges) if isinstance(pins, str) else pins
        except Exception as err:
            raise NoPins(f"no GPIO pin factory ({type(err).__name__}: {err})") from err
        game_log = chosen if chosen is not None else \
            GameLog(config.state_dir, config.history) if store is True else None
        screen = make_display(display, config) if isinstance(display, str) else display
        box = Box(config, factory, screen, store=game_log, **hooks)
    except BaseException:
        if lock is not None:
            os.close(lock)
        if fake is not None:
            fake.close()
        raise
    built = Assembly(config, box, factory, game_log, None, fake, lock)
    if hub:
        from .hub import board_url, socket_path
        from .hub.server import Hub
        server = Hub(hub_path or socket_path(config.state_dir), config.state_dir,
                     board_url=board_url(config.web_port) if hub_board_url is None else hub_board_url,
                     forget=game_log.forget if game_log is not None else None)
        server.attach(box)
        try:
            server.start()
        except OSError as err:
            log.error("web hub: cannot listen on %s (%s); playing on without it", server.path, err)
        else:
            built.hub = server
    return built

