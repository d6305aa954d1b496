"""A wind puck in software: the device end of a pty speaking the puck protocol.

`pi-companion simulate --puck fake` turns the turntable keys into this puck's counters, so the
box's real serial link (discovery aside) reads them exactly as it would read a Pico.
"""
from __future__ import annotations

import os
import secrets
import select
import threading
import time
import tty

from . import proto

HEARTBEAT_S = 0.25


class FakePuck:
    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self.master)
        self.path = os.ttyname(self._slave)
        self.boot_id = secrets.token_hex(4)
        self.net = self.forward = self.backward = 0
        self.seq = 0
        self.started = time.monotonic()
        self.last_edge: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fake-puck", daemon=True)
        self._thread.start()

    def step(self, delta: int) -> None:
        """The turntable moved one quadrature step forward (+1) or back (-1)."""
        with self._lock:
            self.net += delta
            if delta > 0:
                self.forward += 1
            else:
                self.backward += 1
            self.last_edge = time.monotonic()
        self._report()

    def _report(self) -> None:
        now = time.monotonic()
        with self._lock:
            self.seq += 1
            since = -1 if self.last_edge is None else int((now - self.last_edge) * 1000)
            msg = proto.Counts(self.seq, self.boot_id, self.net, self.forward, self.backward, 0,
                               0, 0, since, int((now - self.started) * 1000))
        self._write(proto.encode(msg))

    def _write(self, data: bytes) -> None:
        try:
            os.write(self.master, data)
        except OSError:
            pass

    def _serve(self) -> None:
        self._write(proto.encode(proto.Hello(proto.VERSION, self.boot_id)))
        next_beat = time.monotonic()
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], max(0.0, next_beat - time.monotonic()))
            if ready:
                try:
                    data = os.read(self.master, 1024)
                except OSError:
                    data = b""
                if b"INFO" in data:
                    self._write(proto.encode(proto.Hello(proto.VERSION, self.boot_id)))
            if time.monotonic() >= next_beat:
                self._report()
                next_beat = time.monotonic() + HEARTBEAT_S

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        os.close(self.master)
        os.close(self._slave)
