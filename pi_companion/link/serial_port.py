"""The wind puck's USB serial link: finds the port, reads it on a thread, survives unplugging."""

from __future__ import annotations

import glob
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import serial
from serial.tools import list_ports

from pi_companion.link import proto

log = logging.getLogger(__name__)

UDEV_LINK = "/dev/pi-companion-puck"
BY_ID_GLOB = "/dev/serial/by-id/*"
BY_ID_NAMES = ("Pico", "MicroPython")   # MicroPython's rp2 port: usb-MicroPython_Board_...
PICO_VID = 0x2E8A
PICO_PID = 0x0005
READ_TIMEOUT_S = 0.1
WRITE_TIMEOUT_S = 0.5
READ_MAX = 4096          # bytes taken from the port per read
QUIET_S = 3.0            # no valid frame this long after opening a port: say so, once
OLD_FRAMES = 3           # this many version-1 frames and no version-2 one: an old puck
FIRMWARE_HINT = "run `make firmware-deploy` (see firmware/README.md)"

_IO_ERRORS = (serial.SerialException, OSError)


def discover(
    configured: str | None,
    *,
    udev_link: str = UDEV_LINK,
    by_id_glob: str = BY_ID_GLOB,
    comports: Callable[[], Iterable[Any]] = list_ports.comports,
) -> str | None:
    """The puck's port: the configured path if it exists, else the udev link, else a
    /dev/serial/by-id entry naming a Pico or MicroPython, else a port with VID:PID
    2e8a:0005, else the only by-id entry if there is exactly one; None if nothing fits."""
    for path in (configured, udev_link):
        if path and os.path.exists(path):
            return path
    by_id = sorted(glob.glob(by_id_glob))
    named = [p for p in by_id if any(n in os.path.basename(p) for n in BY_ID_NAMES)]
    if named:
        return named[0]
    pico = sorted(str(p.device) for p in comports() if (p.vid, p.pid) == (PICO_VID, PICO_PID))
    if pico:
        return pico[0]
    return by_id[0] if len(by_id) == 1 else None


class PuckLink:
    """Owns one reader thread that keeps a puck connected and hands its messages on.

    `on_message(msg)` gets every Hello, Pong, ConfigAck and DeviceError, and every Counts
    whose boot id matches the Hello heard since the port was opened (other Counts are
    dropped and a Hello is asked for, so a consumer always sees a Hello first after a
    reconnection or a reboot). `on_status(connected)` reports changes: connected means the
    port is open and a valid line has arrived since it was opened. Both callbacks run on
    the reader thread; their exceptions are logged and never stop it.

    The link writes nothing to a port before it has read a valid frame of this protocol
    version from it: a stock MicroPython board on the puck's VID:PID (a REPL) is never typed
    at. Such a port, or a puck with version-1 firmware, gets one journal line.
    """

    def __init__(
        self,
        configured: str | None,
        on_message: Callable[[proto.Message], None],
        on_status: Callable[[bool], None],
        *,
        baudrate: int = 115200,
        backoff_min: float = 0.5,
        backoff_max: float = 2.0,
        hello_retry_s: float = 1.0,
        quiet_s: float = QUIET_S,
        find: Callable[[str | None], str | None] = discover,
    ) -> None:
        self._configured = configured
        self._on_message = on_message
        self._on_status = on_status
        self._baudrate = baudrate
        self._backoff = (backoff_min, backoff_max)
        self._hello_retry_s = hello_retry_s
        self._quiet_s = quiet_s
        self._find = find
        self._parser = proto.LineParser()
        self._stop = threading.Event()
        self._lock = threading.Lock()          # guards _serial for writers
        self._serial: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._asked_at = -math.inf
        self._greeted_now = False              # a Hello heard since the port was opened
        self._warned: set[tuple[str, str]] = set()   # (port, what) said once already
        self.connected = False
        self.port: str | None = None
        self.boot_id: str | None = None        # from the last Hello
        self.reboots = 0
        self.dropped_counts = 0                # Counts from a boot not yet greeted

    # -- public ---------------------------------------------------------------------------

    def start(self) -> PuckLink:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="puck-link", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread; it closes the port on its way out."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def __enter__(self) -> PuckLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, data: bytes) -> bool:
        """Write one command line; False if no port is open or the write failed."""
        with self._lock:
            ser = self._serial
            if ser is None:
                return False
            try:
                ser.write(data)
                return True
            except _IO_ERRORS as exc:
                log.info("puck write failed: %s", exc)
                return False

    def request_info(self) -> bool:
        self._asked_at = time.monotonic()
        return self.send(proto.info_command())

    def ping(self, token: str = "") -> bool:
        return self.send(proto.ping_command(token))

    def set_heartbeat(self, ms: int) -> bool:
        return self.send(proto.heartbeat_command(ms))

    def stats(self) -> dict[str, int]:
        counts = self._parser.stats()
        counts.update(reboots=self.reboots, dropped_counts=self.dropped_counts)
        return counts

    # -- the reader thread ----------------------------------------------------------------

    def _run(self) -> None:
        low, high = self._backoff
        delay = low
        while not self._stop.is_set():
            try:
                talked = self._attempt()
            except Exception:              # a bug here must not end the thread for good
                log.exception("puck link error; reconnecting")
                talked = False
            if talked:
                delay = low
            if self._stop.wait(delay):
                break
            delay = min(delay * 2, high)

    def _attempt(self) -> bool:
        """Find, open and read one port until it fails or we stop; True if it talked."""
        path = self._find(self._configured)
        if path is None:
            return False
        try:
            ser = serial.Serial(path, self._baudrate, timeout=READ_TIMEOUT_S,
                                write_timeout=WRITE_TIMEOUT_S, exclusive=True)
        except (*_IO_ERRORS, ValueError) as exc:
            log.debug("cannot open puck port %s: %s", path, exc)
            return False
        self.port = path
        with self._lock:
            self._serial = ser
        try:
            self._session(ser)
        except _IO_ERRORS as exc:
            log.warning("puck link lost on %s: %s", path, exc)
        finally:
            self._hang_up(ser)
        talked = self.connected
        self._set_connected(False)
        return talked

    def _session(self, ser: serial.Serial) -> None:
        """Read until the port fails or we stop. Nothing is written before a valid frame
        arrives (opening the port flushed the boot Hello; the puck's next heartbeat CNT,
        from a boot not greeted on this port, makes us ask for a Hello)."""
        self._greeted_now = False
        self._asked_at = -math.inf
        opened = time.monotonic()
        before = self._parser.stats()
        while not self._stop.is_set():
            data = ser.read(min(ser.in_waiting, READ_MAX) or 1)
            if data:
                self._dispatch(self._parser.feed(data))
                self._note_bad_lines(before)
            if not self.connected:
                self._foreign(opened, before)
            elif not self._greeted_now:
                self._ask_again()

    def _note_bad_lines(self, before: dict[str, int]) -> None:
        if log.isEnabledFor(logging.DEBUG):
            now = self._parser.stats()
            bad = {k: now[k] - before[k] for k in now if k != "messages" and now[k] != before[k]}
            if bad:
                log.debug("puck port %s: unreadable lines so far: %s", self.port, bad)

    def _foreign(self, opened: float, before: dict[str, int]) -> None:
        """No valid frame on this port yet: say once what it seems to be."""
        now = self._parser.stats()
        old = now["old_version"] - before["old_version"]
        if old >= OLD_FRAMES:
            self._warn_once("old", "the wind puck on %s runs old firmware (protocol version 1; "
                            "this box speaks %d): %s", self.port, proto.VERSION, FIRMWARE_HINT)
        elif time.monotonic() - opened >= self._quiet_s:
            lines = sum(now[k] - before[k] for k in now if k != "messages")
            self._warn_once("foreign", "no wind puck firmware answers on %s (%d unreadable "
                            "lines in %.0f s; a stock MicroPython board?): left alone; %s",
                            self.port, lines, self._quiet_s, FIRMWARE_HINT)

    def _warn_once(self, what: str, message: str, *args: Any) -> None:
        key = (str(self.port), what)
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message, *args)

    def _hang_up(self, ser: serial.Serial) -> None:
        with self._lock:
            self._serial = None
        try:
            ser.close()
        except _IO_ERRORS as exc:
            log.debug("closing puck port: %s", exc)
        self._parser.finish()

    def _ask_again(self) -> None:
        if time.monotonic() - self._asked_at >= self._hello_retry_s:
            self.request_info()

    def _dispatch(self, messages: list[proto.Message]) -> None:
        for msg in messages:
            if not self.connected:
                self._warned = {w for w in self._warned if w[0] != str(self.port)}
            self._set_connected(True)
            if isinstance(msg, proto.Hello):
                self._greeted(msg)
            elif isinstance(msg, proto.Counts) and (
                    not self._greeted_now or msg.boot_id != self.boot_id):
                self._unknown_boot(msg.boot_id)
                continue
            self._call(self._on_message, msg)

    def _unknown_boot(self, boot_id: str) -> None:
        """Counts from a boot with no Hello on this port yet: drop them, ask for the Hello
        (at once the first time, then at most every hello_retry_s however fast they come)."""
        self.dropped_counts += 1
        self._greeted_now = False                # a reboot: ask until its Hello comes
        self._ask_again()

    def _greeted(self, hello: proto.Hello) -> None:
        self._greeted_now = True
        if self.boot_id is not None and hello.boot_id != self.boot_id:
            self.reboots += 1
            log.warning("puck rebooted: boot id %s -> %s", self.boot_id, hello.boot_id)
        self.boot_id = hello.boot_id

    def _set_connected(self, connected: bool) -> None:
        if connected != self.connected:
            self.connected = connected
            log.info("puck %s (%s)", "connected" if connected else "disconnected", self.port)
            self._call(self._on_status, connected)

    @staticmethod
    def _call(callback: Callable[[Any], None], arg: Any) -> None:
        try:
            callback(arg)
        except Exception:
            log.exception("puck link callback %r failed", callback)
