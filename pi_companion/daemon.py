"""`pi-companion run`: the appliance process: config, pins, display, the box loop, systemd, signals."""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from dataclasses import replace
from typing import Any

from .config import Config, ConfigError, check_buttons, check_game, load_config_arg
from .core.events import Request

log = logging.getLogger("pi_companion")
EXIT_CONFIG = 78
EXIT_HARDWARE = 1


def build_config(args: Any) -> Config | None:
    """The config file with the command line's overrides; None (after one line on stderr) if bad."""
    try:
        config = load_config_arg(args.config)
        if getattr(args, "game", None):
            from .games import registry
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


def make_factory(kind: str) -> Any:
    """The gpiozero pin factory: MockFactory for `mock`, else gpiozero's own choice (env var)."""
    from gpiozero import Device
    if kind == "mock":
        from gpiozero.pins.mock import MockFactory, MockPWMPin
        Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    else:
        Device.ensure_pin_factory()
    return Device.pin_factory


def make_display(driver: str, config: Config) -> Any:
    from .hw.display import Display, open_device
    if driver == "none":
        return Display(None)
    if driver == "auto":
        driver = "ssd1306"
    return Display(lambda: open_device(driver, config.i2c_port, config.i2c_address, config.rotate))


class Watchdog:
    """WATCHDOG=1 from the box loop (a hung loop stops it). The loop calls `kick` once per
    `interval` (half WatchdogSec, from WATCHDOG_USEC) and wakes for nothing else when idle;
    with no watchdog configured there is no interval and the loop never wakes for it."""

    def __init__(self) -> None:
        from . import systemd
        self.notify = systemd.notify
        self.interval = systemd.watchdog_interval()

    def kick(self) -> None:
        self.notify("WATCHDOG=1")


# ---- debug only: a hung loop on demand, for the system test's watchdog check ---------------
# Off unless the environment says PI_COMPANION_DEBUG_HANG=1 (the shipped unit never does; the
# system test's drop-in and tests/test_daemon.py do). Then SIGUSR2 makes the box loop thread
# block for ever at its next pass while every other thread and the process live on: only a
# watchdog fed by the loop itself stops, and systemd must kill and restart the daemon.
DEBUG_HANG_ENV = "PI_COMPANION_DEBUG_HANG"


def arm_debug_hang(box: Any) -> None:
    if os.environ.get(DEBUG_HANG_ENV) != "1":
        return

    def hang(*_: Any) -> None:
        log.warning("debug: SIGUSR2: the box loop hangs from its next pass (%s=1)", DEBUG_HANG_ENV)
        box._turn = threading.Event().wait        # the loop's next pass never returns
        box.queue.put(Wake())                     # ... and it comes now, not at the next timer

    from .app import Wake
    signal.signal(signal.SIGUSR2, hang)
# ---- end of the debug-only part ----------------------------------------------------------


def main(args: Any) -> int:
    config = build_config(args)
    if config is None:
        return EXIT_CONFIG
    from . import logs
    logs.setup(config.log_level)
    from . import systemd
    from .app import Box
    try:
        factory = make_factory(args.pins)
    except Exception as err:
        print(f"pi-companion: no GPIO pin factory ({type(err).__name__}: {err}); "
              "on a PC use --pins mock", file=sys.stderr)
        return EXIT_HARDWARE
    display = make_display(args.display if args.display != "auto" else config.display, config)
    stop = threading.Event()
    shutdown = threading.Event()
    signalled = threading.Event()

    hub: Any = None

    def on_request(req: Request) -> None:
        if req.name == "shutdown":
            shutdown.set()
            stop.set()

    watchdog = Watchdog()
    from .store import GameLog
    store = GameLog(config.state_dir, config.history)
    try:
        box = Box(config, factory, display, on_request=on_request, store=store, on_exit=stop.set,
                  watchdog=watchdog.kick if watchdog.interval is not None else None,
                  watchdog_s=watchdog.interval)
    except OSError as err:     # not a config error: exit so that systemd tries again
        print(f"pi-companion: cannot start ({type(err).__name__}: {err})", file=sys.stderr)
        return EXIT_HARDWARE
    if config.web_enabled:
        from .hub import Hub, board_url, socket_path
        hub = Hub(box, socket_path(config.state_dir), config.state_dir,
                  board_url=board_url(config.web_port))
        hub.attach()
        try:
            hub.start()
        except OSError as err:
            log.error("web hub: cannot listen on %s (%s); playing on without it", hub.path, err)
            hub = None

    def on_signal(*_: Any) -> None:
        signalled.set()
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    arm_debug_hang(box)
    # READY=1 only once every pin is claimed (Box() above) and the first frame is drawn: drawn
    # here, before the loop thread runs, so that nothing races it.
    box.draw()
    box.start()
    systemd.notify("READY=1")
    log.info("ready: %s for %s", config.game, ", ".join(config.players))
    # No periodic wake-up here: a signal, a shutdown request or the loop's end sets `stop`.
    stop.wait()
    if not (signalled.is_set() or shutdown.is_set()):
        log.error("the loop thread ended; exiting for systemd to restart us")
        return EXIT_HARDWARE
    systemd.notify("STOPPING=1")
    if shutdown.is_set():
        from .ui.screens import message_frame
        box.display.show(message_frame("Shutting down"), time.monotonic())
    box.close()
    if hub is not None:
        hub.close()
    if shutdown.is_set():
        systemd.power_off()
    return 0
