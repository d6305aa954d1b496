"""The wind puck's USB serial link: finds the port, reads it on a thread, survives unplugging."""

from __future__ import annotations

import glob
import logging
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
    whose boot id matches the last Hello (Counts from an unknown boot are dropped and a Hello
    is asked for, so a consumer always sees the new Hello first after a reboot).
    `on_status(connected)` reports changes: connected means the port is open and a valid
    line has arrived since it was opened. Both callbacks run on the reader thread; their
    exceptions are logged and never stop it.
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
        find: Callable[[str | None], str | None] = discover,
    ) -> None:
        self._configured = configured
        self._on_message = on_message
        self._on_status = on_status
        self._baudrate = baudrate
        self._backoff = (backoff_min, backoff_max)
        self._hello_retry_s = hello_retry_s
        self._find = find
        self._parser = proto.LineParser()
        self._stop = threading.Event()
        self._lock = threading.Lock()          # guards _serial for writers
        self._serial: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._asked_at = 0.0
        self._unknown_boot_id: str | None = None
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
            if self._attempt():
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
        self.request_info()      # opening the port flushed the boot Hello: ask again
        while not self._stop.is_set():
            data = ser.read(ser.in_waiting or 1)
            if data:
                self._dispatch(self._parser.feed(data))
            if not self.connected:
                self._ask_again()

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
            self._set_connected(True)
            if isinstance(msg, proto.Hello):
                self._greeted(msg)
            elif isinstance(msg, proto.Counts) and msg.boot_id != self.boot_id:
                self._unknown_boot(msg.boot_id)
                continue
            self._call(self._on_message, msg)

    def _unknown_boot(self, boot_id: str) -> None:
        """Counts from a boot with no Hello yet: drop them, ask for the Hello at once."""
        self.dropped_counts += 1
        if boot_id != self._unknown_boot_id:
            self._unknown_boot_id = boot_id
            self.request_info()
        else:
            self._ask_again()

    def _greeted(self, hello: proto.Hello) -> None:
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
