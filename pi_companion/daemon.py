"""`pi-companion run`: the appliance process: config, pins, display, the box loop, systemd, signals."""
from __future__ import annotations

import logging
import os
import select
import signal
import sys
import threading
import time
from typing import Any

from . import logs, systemd
from .assemble import NoPins, StateDirBusy, assemble, build_config
from .gamelog import TooNew
from .core.events import Request
from .ui.screens import message_frame

log = logging.getLogger("pi_companion")
EXIT_CONFIG = 78
EXIT_HARDWARE = 1
EXIT_BUSY = 75          # EX_TEMPFAIL: another process holds the state directory
UPDATE_SHOWN_S = 3.0    # the update's line stays this long on the OLED at start


class Watchdog:
    """WATCHDOG=1 from the box loop (a hung loop stops it). The loop calls `kick` once per
    `interval` (half WatchdogSec, from WATCHDOG_USEC) and wakes for nothing else when idle;
    with no watchdog configured there is no interval and the loop never wakes for it."""

    def __init__(self) -> None:
        self.notify = systemd.notify
        self.interval = systemd.watchdog_interval()

    def kick(self) -> None:
        self.notify("WATCHDOG=1")


class StopLatch:
    """What the main thread sleeps on until a stop: SIGTERM/SIGINT, or `set` from another thread.

    Not a threading.Event set from the signal handler: the kernel hands a process's signal to
    any thread that does not block it, and CPython runs the Python-level handler only on the
    main thread, at its next bytecode. When another thread (the box loop, the log writer, the
    hub) took the signal while the main thread slept in `Event.wait()` (a semaphore wait that
    only a signal delivered to the main thread interrupts), the handler never ran: the daemon
    slept on until a second signal happened to land on the main thread (issue 27, item 7). And
    a handler that sets the Event it interrupts can block on the Event's own lock. Here the C
    handler, on whichever thread, writes the signal's number to a pipe (signal.set_wakeup_fd)
    and the main thread waits in select() on that pipe: no lock is taken in a handler and no
    thread has to be the one that was signalled."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.signalled = False

    def install(self) -> None:
        """On the main thread: the signals' numbers go to the pipe (the handler does nothing)."""
        signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        for sig in self.SIGNALS:
            signal.signal(sig, lambda *_: None)

    def set(self) -> None:
        """From any thread: wake the main thread (a 0 byte: no signal)."""
        try:
            os.write(self._write, b"\0")
        except BlockingIOError:
            pass                                   # a full pipe wakes the reader all the same

    def wait(self) -> None:
        """Until SIGTERM/SIGINT or `set`. The wake-up fd carries the number of every signal that
        has a Python handler, so any other (the debug hang's SIGUSR2) is read and slept through."""
        stops = {int(sig) for sig in self.SIGNALS}
        while True:
            select.select([self._read], [], [])
            try:
                data = os.read(self._read, 512)
            except BlockingIOError:
                continue
            if stops.intersection(data):
                self.signalled = True
                return
            if 0 in data:                          # `set`: a shutdown request or the loop's end
                return


# ---- debug only: a hung loop on demand, for the system test's watchdog check ---------------
# Off unless the environment says PI_COMPANION_DEBUG_HANG=1 (the shipped unit never does; the
# system test's drop-in and tests/commands/test_daemon.py do). Then SIGUSR2 makes the box loop thread
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

    from .box import Wake
    signal.signal(signal.SIGUSR2, hang)
# ---- end of the debug-only part ----------------------------------------------------------


def main(args: Any) -> int:
    config = build_config(args)
    if config is None:
        return EXIT_CONFIG
    logs.setup(config.log_level)
    stop = StopLatch()
    shutdown = threading.Event()

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
    except TooNew as err:      # a downgrade: the newer version's game stays as it is, unread
        print(f"pi-companion: {config.state_dir}/current.log is in {err}: install that version "
              "again, or move the file away to start afresh", file=sys.stderr)
        return EXIT_CONFIG
    except NoPins as err:
        print(f"pi-companion: {err}; on a PC use --pins mock", file=sys.stderr)
        return EXIT_HARDWARE
    except OSError as err:     # not a config error: exit so that systemd tries again
        print(f"pi-companion: cannot start ({type(err).__name__}: {err})", file=sys.stderr)
        return EXIT_HARDWARE
    box = built.box

    stop.install()
    arm_debug_hang(box)
    # READY=1 only once every pin is claimed (assemble above) and the first frame is drawn: drawn
    # here, before the loop thread runs, so that nothing races it. The game said is the one
    # played: a resumed game goes on whatever the config names.
    playing = f"{box.engine.rules.name} for {', '.join(box.engine.players)}"
    update = systemd.update_result(config.state_dir, take=True)
    if update is not None:      # what the card's package did, for a few seconds before the game
        log.info("%s", update)
        box.display.show(message_frame(update), time.monotonic())
        time.sleep(UPDATE_SHOWN_S)
    box.draw()
    box.start()
    systemd.notify("READY=1")
    log.info("ready: %s", playing)
    # No periodic wake-up here: a signal, a shutdown request or the loop's end sets `stop`.
    stop.wait()
    if not (stop.signalled or shutdown.is_set()):
        log.error("the loop thread ended; exiting for systemd to restart us")
        return EXIT_HARDWARE
    systemd.notify("STOPPING=1")
    if shutdown.is_set():
        box.display.show(message_frame("Shutting down"), time.monotonic())
    built.close()
    if shutdown.is_set():
        systemd.power_off()
    return 0
