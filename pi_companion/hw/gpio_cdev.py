"""Edges from the kernel's GPIO character device (uAPI v2), read without polling.

lgpio's alert thread calls `ppoll` with a 0.5 ms timeout for as long as any edge alert is claimed
(up to 2 000 wake-ups a second on a box that watches every button). Here each input line is
its own line request (GPIO_V2_GET_LINE_IOCTL) with edge detection, and one thread (`EdgeReader`)
blocks in `poll` on the requests' file descriptors and a wake pipe, with no timeout: it wakes
for an edge, for a change of the set of lines, or to close, never for nothing.

Each edge carries the kernel's `timestamp_ns` (CLOCK_MONOTONIC, the clock lgpio's ticks use),
taken when the edge happened, not when it was read: the earliest of those decides a buzz.

Standard library only (`fcntl.ioctl`, `struct`); the structures are those of linux/gpio.h.
`decode`/`Decoder` and `decode_chip_info` are pure (bytes in, values out) and tested on their own.
"""
from __future__ import annotations

import errno
import fcntl
import logging
import os
import select
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("pi_companion")

# ---- linux/gpio.h, uAPI v2 ------------------------------------------------------------------
LINES_MAX = 64
NAME_SIZE = 32
NUM_ATTRS_MAX = 10
FLAG_INPUT = 1 << 2
FLAG_OUTPUT = 1 << 3
FLAG_EDGE_RISING = 1 << 4
FLAG_EDGE_FALLING = 1 << 5
FLAG_BIAS_PULL_UP = 1 << 8
FLAG_BIAS_PULL_DOWN = 1 << 9
FLAG_BIAS_DISABLED = 1 << 10
ATTR_ID_OUTPUT_VALUES = 2
ATTR_ID_DEBOUNCE = 3
EVENT_RISING_EDGE = 1
EVENT_FALLING_EDGE = 2
BIAS_FLAGS = {"up": FLAG_BIAS_PULL_UP, "down": FLAG_BIAS_PULL_DOWN, "floating": FLAG_BIAS_DISABLED}
EDGE_FLAGS = {"both": FLAG_EDGE_RISING | FLAG_EDGE_FALLING, "rising": FLAG_EDGE_RISING,
              "falling": FLAG_EDGE_FALLING}

# struct gpio_v2_line_event: timestamp_ns, id, offset, seqno, line_seqno, padding[6]
EVENT = struct.Struct("=QIIII24x")
# struct gpio_v2_line_config_attribute: {id, padding, union u64}, mask
ATTR = struct.Struct("=IIQQ")
# struct gpio_v2_line_config: flags, num_attrs, padding[5], attrs[10]
CONFIG = struct.Struct(f"=QI20x{ATTR.size * NUM_ATTRS_MAX}s")
# struct gpio_v2_line_request: offsets[64], consumer[32], config, num_lines,
# event_buffer_size, padding[5], fd
REQUEST = struct.Struct(f"={LINES_MAX}I{NAME_SIZE}s{CONFIG.size}sII20xi")
VALUES = struct.Struct("=QQ")            # struct gpio_v2_line_values: bits, mask
CHIPINFO = struct.Struct(f"={NAME_SIZE}s{NAME_SIZE}sI")   # struct gpiochip_info: name, label, lines


def _iowr(nr: int, size: int) -> int:
    return (3 << 30) | (size << 16) | (0xB4 << 8) | nr


def _ior(nr: int, size: int) -> int:
    return (2 << 30) | (size << 16) | (0xB4 << 8) | nr


GET_CHIPINFO_IOCTL = _ior(0x01, CHIPINFO.size)
GET_LINE_IOCTL = _iowr(0x07, REQUEST.size)
LINE_SET_CONFIG_IOCTL = _iowr(0x0D, CONFIG.size)
LINE_GET_VALUES_IOCTL = _iowr(0x0E, VALUES.size)
LINE_SET_VALUES_IOCTL = _iowr(0x0F, VALUES.size)
assert (EVENT.size, CONFIG.size, REQUEST.size, CHIPINFO.size) == (48, 272, 592, 68)


# ---- decoding (pure) -------------------------------------------------------------------------
@dataclass(frozen=True)
class LineEvent:
    """One edge as the kernel stamped it."""
    timestamp_ns: int
    rising: bool
    offset: int
    seqno: int
    line_seqno: int


class LineEventError(ValueError):
    """A record that is not a line event (a one-line message)."""


def decode_one(record: bytes) -> LineEvent:
    """One 48-byte `gpio_v2_line_event`; LineEventError if it is not one."""
    if len(record) != EVENT.size:
        raise LineEventError(f"truncated edge record: {len(record)} of {EVENT.size} bytes")
    ts, kind, offset, seqno, line_seqno = EVENT.unpack(record)
    if kind not in (EVENT_RISING_EDGE, EVENT_FALLING_EDGE):
        raise LineEventError(f"garbled edge record: event id {kind} (1 rising, 2 falling) "
                             f"for line {offset}, seqno {seqno}")
    return LineEvent(ts, kind == EVENT_RISING_EDGE, offset, seqno, line_seqno)


class Decoder:
    """Records from a byte stream in any chunking: `feed` returns the whole records' events and
    the one-line errors of the garbled ones (skipped); a part record waits for the rest.
    `finish` at the end of the stream: the error for a part record left over, if any."""

    def __init__(self, offset: int | None = None) -> None:
        self.offset = offset            # the line this stream belongs to (None: any)
        self._rest = b""

    def feed(self, data: bytes) -> tuple[list[LineEvent], list[str]]:
        buf = self._rest + data if self._rest else data
        whole = len(buf) - len(buf) % EVENT.size
        self._rest = buf[whole:]
        events: list[LineEvent] = []
        errors: list[str] = []
        for at in range(0, whole, EVENT.size):
            try:
                event = decode_one(buf[at:at + EVENT.size])
            except LineEventError as err:
                errors.append(str(err))
                continue
            if self.offset is not None and event.offset != self.offset:
                errors.append(f"garbled edge record: line {event.offset} on line {self.offset}'s request")
                continue
            events.append(event)
        return events, errors

    def finish(self) -> str | None:
        rest, self._rest = self._rest, b""
        return f"truncated edge record: {len(rest)} of {EVENT.size} bytes at the end" if rest else None


# ---- line requests ---------------------------------------------------------------------------
class LineError(OSError):
    """A line that cannot be requested or read, said in one line (busy, no permission, ...)."""


def _why(err: OSError) -> str:
    return {errno.EBUSY: "busy: another program holds it",
            errno.EACCES: "permission denied (is the user in the gpio group?)",
            errno.EPERM: "permission denied (is the user in the gpio group?)",
            errno.EINVAL: "refused by the chip (no such line, or a setting it cannot do)",
            errno.ENOTTY: "not a GPIO character device",
            errno.ENODEV: "the chip is gone"}.get(err.errno, err.strerror or str(err))


def config_bytes(bias: str, edges: str | None, debounce_us: int = 0, output: bool | None = None) -> bytes:
    """A `gpio_v2_line_config`: an input with `bias`, `edges` (None: no edge detection) and
    debounce; or, with `output` set, an output driven at that level (no bias, no edges)."""
    if output is not None:                                       # no clock flag: CLOCK_MONOTONIC
        return CONFIG.pack(FLAG_OUTPUT, 1, ATTR.pack(ATTR_ID_OUTPUT_VALUES, 0, int(output), 1))
    flags = FLAG_INPUT | BIAS_FLAGS[bias] | (EDGE_FLAGS[edges] if edges else 0)
    attrs = ATTR.pack(ATTR_ID_DEBOUNCE, 0, debounce_us, 1) if debounce_us else b""
    return CONFIG.pack(flags, 1 if debounce_us else 0, attrs)


def request_line(chip_fd: int, offset: int, *, bias: str = "floating", edges: str | None = "both",
                 debounce_us: int = 0, consumer: str = "pi-companion", where: str = "") -> int:
    """A line request for `offset` as an input (with edge detection unless `edges` is None; an
    output is the same request reconfigured, `set_config`): its file descriptor (non-blocking,
    close-on-exec). LineError (one line) if the kernel refuses."""
    offsets = [offset] + [0] * (LINES_MAX - 1)
    buf = bytearray(REQUEST.pack(*offsets, consumer.encode()[:NAME_SIZE - 1],
                                 config_bytes(bias, edges, debounce_us), 1, 0, 0))
    try:
        fcntl.ioctl(chip_fd, GET_LINE_IOCTL, buf, True)
    except OSError as err:
        raise LineError(err.errno, f"{where or 'GPIO chip'} line {offset}: {_why(err)}") from None
    fd = REQUEST.unpack(buf)[-1]
    os.set_blocking(fd, False)
    return fd


def set_config(req_fd: int, bias: str, edges: str | None, debounce_us: int = 0,
               output: bool | None = None) -> None:
    """Change a request in place: its direction, bias, edges or debounce (no edge lost meanwhile)."""
    try:
        fcntl.ioctl(req_fd, LINE_SET_CONFIG_IOCTL,
                    bytearray(config_bytes(bias, edges, debounce_us, output)), True)
    except OSError as err:
        raise LineError(err.errno, f"line reconfiguration: {_why(err)}") from None


def read_value(req_fd: int) -> bool:
    """The line's level now (GPIO_V2_LINE_GET_VALUES_IOCTL)."""
    buf = bytearray(VALUES.pack(0, 1))
    try:
        fcntl.ioctl(req_fd, LINE_GET_VALUES_IOCTL, buf, True)
    except OSError as err:
        raise LineError(err.errno, f"line read: {_why(err)}") from None
    return bool(VALUES.unpack(buf)[0] & 1)


_HIGH, _LOW = VALUES.pack(1, 1), VALUES.pack(0, 1)


def write_value(req_fd: int, value: bool) -> None:
    """Drive an output line high or low (GPIO_V2_LINE_SET_VALUES_IOCTL)."""
    try:
        fcntl.ioctl(req_fd, LINE_SET_VALUES_IOCTL, _HIGH if value else _LOW)
    except OSError as err:
        raise LineError(err.errno, f"line write: {_why(err)}") from None


# ---- the chip -------------------------------------------------------------------------------
def decode_chip_info(buf: bytes) -> tuple[str, str, int]:
    """A 68-byte `gpiochip_info`: (name, label, lines), each string up to its first NUL."""
    name, label, lines = CHIPINFO.unpack(buf)
    return (name.split(b"\0", 1)[0].decode("utf-8", "replace"),
            label.split(b"\0", 1)[0].decode("utf-8", "replace"), lines)


def chip_info(chip_fd: int, where: str = "") -> tuple[str, str, int]:
    """The open chip's (name, label, lines) (GPIO_GET_CHIPINFO_IOCTL)."""
    buf = bytearray(CHIPINFO.size)
    try:
        fcntl.ioctl(chip_fd, GET_CHIPINFO_IOCTL, buf, True)
    except OSError as err:
        raise LineError(err.errno, f"{where or 'GPIO chip'}: {_why(err)}") from None
    return decode_chip_info(bytes(buf))


# ---- the reader thread -----------------------------------------------------------------------
Callback = Callable[[LineEvent], None]
READ_SIZE = EVENT.size * 16        # the kernel's default event buffer holds 16 per line


class EdgeReader:
    """One thread blocking in `poll` (no timeout) on the added file descriptors and a wake
    pipe; each fd's records are decoded and handed to its callback, in the order read.

    `add`/`remove` may be called from any thread, the callbacks included; `remove` from another
    thread returns only once the thread no longer watches the fd (the caller may close it then).
    `wakeups` counts the returns from `poll`: an idle reader adds none."""

    def __init__(self, name: str = "gpio-edges") -> None:
        self.name = name
        self.wakeups = 0
        self.errors = 0
        self._lock = threading.Lock()
        self._synced = threading.Condition(self._lock)
        self._sources: dict[int, tuple[Decoder, Callback]] = {}
        self._generation = 0           # bumped by every add/remove
        self._seen = 0                 # the generation the thread's poll set matches
        self._stop = False
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._thread: threading.Thread | None = None

    def add(self, fd: int, callback: Callback, offset: int | None = None) -> None:
        with self._lock:
            self._sources[fd] = (Decoder(offset), callback)
            self._generation += 1
            if self._thread is None and not self._stop:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        self._poke()

    def remove(self, fd: int) -> None:
        with self._lock:
            if self._sources.pop(fd, None) is None:
                return
            self._generation += 1
            want = self._generation
        self._poke()
        if threading.current_thread() is self._thread:
            return                     # a callback: the loop re-reads its set before polling again
        with self._lock:
            self._synced.wait_for(lambda: self._seen >= want or self._stop or not self.alive(),
                                  timeout=5.0)

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread (it wakes at once) and close the wake pipe; the added fds are the
        callers' to close."""
        with self._lock:
            self._stop = True
            thread = self._thread
        self._poke()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1

    def _poke(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except (BlockingIOError, OSError):       # full (a wake is pending anyway) or closed
            pass

    def _report(self, fd: int, message: str) -> None:
        self.errors += 1
        log.error("GPIO edges (fd %d): %s", fd, message)

    def _run(self) -> None:
        poller = select.poll()
        wake = self._wake_r
        poller.register(wake, select.POLLIN)
        watched: set[int] = set()
        while True:
            with self._lock:
                if self._stop:
                    self._synced.notify_all()
                    return
                sources = dict(self._sources)
                self._seen = self._generation
                self._synced.notify_all()
            for fd in watched - sources.keys():
                poller.unregister(fd)
            for fd in sources.keys() - watched:
                poller.register(fd, select.POLLIN | select.POLLPRI)
            watched = set(sources)
            ready = poller.poll()                 # no timeout: an edge, a change or close
            self.wakeups += 1
            for fd, mask in ready:
                if fd == wake:
                    try:
                        while os.read(wake, 64):
                            pass
                    except BlockingIOError:
                        pass
                    continue
                if fd not in sources:
                    continue
                with self._lock:                  # removed meanwhile: not ours to read any more
                    if fd not in self._sources:
                        continue
                self._read(fd, mask, *sources[fd])

    def _read(self, fd: int, mask: int, decoder: Decoder, callback: Callback) -> None:
        if mask & select.POLLNVAL:                # closed without remove(): never poll it again
            self._report(fd, "closed while watched; no more edges from this line")
            self._drop(fd)
            return
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError as err:
            self._report(fd, f"read failed ({err.strerror or err}); no more edges from this line")
            self._drop(fd)
            return
        if not data:                              # the end of the stream: nothing more comes
            leftover = decoder.finish()
            if leftover:
                self._report(fd, leftover)
            self._drop(fd)
            return
        events, errors = decoder.feed(data)
        for message in errors:
            self._report(fd, message)
        for event in events:
            if fd not in self._sources:       # its handler let go of the line: the rest is not for it
                return
            try:
                callback(event)
            except Exception:                 # the edge's handler failed: the reader lives on
                log.exception("GPIO edges: a handler failed on line %d", event.offset)

    def _drop(self, fd: int) -> None:
        with self._lock:
            if self._sources.pop(fd, None) is not None:
                self._generation += 1
