"""`pi-companion run`: the appliance process: config, pins, display, the box loop, systemd, signals."""
from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from typing import Any

from . import logs, systemd
from .assemble import NoPins, StateDirBusy, assemble, build_config
from .core.events import Request
from .ui.screens import message_frame

log = logging.getLogger("pi_companion")
EXIT_CONFIG = 78
EXIT_HARDWARE = 1
EXIT_BUSY = 75          # EX_TEMPFAIL: another process holds the state directory


class Watchdog:
    """WATCHDOG=1 from the box loop (a hung loop stops it). The loop calls `kick` once per
    `interval` (half WatchdogSec, from WATCHDOG_USEC) and wakes for nothing else when idle;
    with no watchdog configured there is no interval and the loop never wakes for it."""

    def __init__(self) -> None:
        self.notify = systemd.notify
        self.interval = systemd.watchdog_interval()

    def kick(self) -> None:
        self.notify("WATCHDOG=1")


def main(args: Any) -> int:
    config = build_config(args)
    if config is None:
        return EXIT_CONFIG
    logs.setup(config.log_level)
    stop = threading.Event()
    shutdown = threading.Event()
    signalled = threading.Event()

    def on_request(req: Request) -> None:
        if req.name == "shutdown":
            shutdown.set()
            stop.set()

    watchdog = Watchdog()
    try:
        built = assemble(config, pins=args.pins, display="device" if args.display == "auto" else args.display,
                         hub=config.web_enabled, on_request=on_request, on_exit=stop.set,
                         watchdog=watchdog.kick if watchdog.interval is not None else None,
                         watchdog_s=watchdog.interval)
    except StateDirBusy as err:
        print(f"pi-companion: {err}", file=sys.stderr)
        return EXIT_BUSY
    except NoPins as err:
        print(f"pi-companion: {err}; on a PC use --pins mock", file=sys.stderr)
        return EXIT_HARDWARE
    except OSError as err:     # not a config error: exit so that systemd tries again
        print(f"pi-companion: cannot start ({type(err).__name__}: {err})", file=sys.stderr)
        return EXIT_HARDWARE
    box = built.box

    def on_signal(*_: Any) -> None:
        signalled.set()
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
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
        box.display.show(message_frame("Shutting down"), time.monotonic())
    built.close()
    if shutdown.is_set():
        systemd.power_off()
    return 0
