"""A LAN attacker against the real `pi-companion web` process, on loopback only, bounded in
count and time: a slowloris (requests that never finish their headers) from one address and
held WebSockets from others, while a fresh screen loads the page. Linux routes all of
127.0.0.0/8 to the loopback device, so a client can pick its source address there and look
like several machines on the LAN.

`siege(...)` returns the figures: the fresh page's load time (the page, its script and style,
and the first snapshot on its WebSocket), the web process's open descriptors at their peak,
how many half-open connections were opened, and how many WebSockets were held.
"""
from __future__ import annotations

import asyncio
import base64
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

SLOWLORIS_FROM = "127.0.0.2"
VIEWERS_FROM = [f"127.0.0.{n}" for n in range(10, 20)]
PAGE_FROM = "127.0.0.1"


@dataclass
class Figures:
    page_s: list[float] = field(default_factory=list)   # fresh page loads, in seconds
    page_errors: list[str] = field(default_factory=list)
    fds_peak: int = 0
    half_open_opened: int = 0
    half_open_peak: int = 0          # the attacker's own count of connections it held at once
    sockets_held: int = 0            # WebSockets upgraded (101) and held
    sockets_refused: int = 0
    sockets_closed: int = 0          # held WebSockets the server closed (to make room)


def _ws_request(path: str, host: str) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


class Attack:
    def __init__(self, port: int, half_open: int, sockets: int, total_cap: int, seconds: float) -> None:
        self.port = port
        self.half_open = half_open
        self.sockets = sockets
        self.total_cap = total_cap          # half-open connections opened in all, at most
        self.seconds = seconds
        self.figures = Figures()
        self.ready = threading.Event()      # the attack is at full strength
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), name="siege", daemon=True)
        self.held: set[asyncio.StreamWriter] = set()

    async def _slow(self) -> None:
        """One half-open request, trickling a header line a second; reopened when closed."""
        f = self.figures
        while not self.stop.is_set() and f.half_open_opened < self.total_cap:
            f.half_open_opened += 1
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port,
                                                               local_addr=(SLOWLORIS_FROM, 0))
            except OSError:
                await asyncio.sleep(0.05)
                continue
            self.held.add(writer)
            f.half_open_peak = max(f.half_open_peak, len(self.held))
            try:
                writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                while not self.stop.is_set():
                    await writer.drain()
                    try:
                        if await asyncio.wait_for(reader.read(1), 1.0) == b"":
                            break                       # the server closed it
                    except asyncio.TimeoutError:
                        writer.write(b"X-a: b\r\n")
            except OSError:
                pass
            finally:
                self.held.discard(writer)
                writer.close()

    async def _viewer(self, source: str) -> None:
        f = self.figures
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(source, 0))
            writer.write(_ws_request("/ws", "127.0.0.1"))
            status = await asyncio.wait_for(reader.readline(), 10)
        except (OSError, asyncio.TimeoutError):
            f.sockets_refused += 1
            return
        if b" 101 " not in status:
            f.sockets_refused += 1
            writer.close()
            return
        f.sockets_held += 1
        try:
            pong_due = time.monotonic()
            while not self.stop.is_set():            # held: a screen left open, alive
                if time.monotonic() >= pong_due:     # a masked, empty PONG: the server's
                    writer.write(b"\x8a\x80" + os.urandom(4))   # heartbeat sees a live client
                    pong_due = time.monotonic() + 5.0
                try:
                    if await asyncio.wait_for(reader.read(65536), 0.5) == b"":
                        f.sockets_closed += 1
                        return
                except asyncio.TimeoutError:
                    pass
            # Stopping: was it closed meanwhile (a loaded loop may not have read it yet)?
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                try:
                    if await asyncio.wait_for(reader.read(65536), 0.3) == b"":
                        f.sockets_closed += 1
                        return
                except asyncio.TimeoutError:
                    return                           # nothing more: still open
        except OSError:
            f.sockets_closed += 1
        finally:
            writer.close()

    async def _main(self) -> None:
        viewers = [asyncio.ensure_future(self._viewer(VIEWERS_FROM[i % len(VIEWERS_FROM)]))
                   for i in range(self.sockets)]
        while self.figures.sockets_held + self.figures.sockets_refused < self.sockets:
            await asyncio.sleep(0.05)
        slow = [asyncio.ensure_future(self._slow()) for _ in range(self.half_open)]
        await asyncio.sleep(1.0)                     # every half-open connection tried once
        self.ready.set()
        end = time.monotonic() + self.seconds
        while time.monotonic() < end and not self.stop.is_set():
            await asyncio.sleep(0.1)
        self.stop.set()
        for task in slow:
            task.cancel()
        await asyncio.gather(*slow, return_exceptions=True)
        await asyncio.wait(viewers, timeout=10)      # each looks whether it was closed
        for task in viewers:
            task.cancel()
        await asyncio.gather(*viewers, return_exceptions=True)


def count_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def fresh_page(port: int, timeout: float = 5.0) -> float:
    """A new screen: the page, its script and style, then its WebSocket's first snapshot; the
    seconds it took (raises if any part failed or took over `timeout`)."""
    start = time.monotonic()
    for path in ("/", "/static/board.js", "/static/style.css"):
        with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                      source_address=(PAGE_FROM, 0)) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            if not data.startswith(b"HTTP/1.1 200"):
                raise AssertionError(f"{path}: {data[:80]!r}")
    with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(PAGE_FROM, 0)) as s:
        s.sendall(_ws_request("/ws", "127.0.0.1"))
        data = b""
        while b'"type":"snapshot"' not in data:
            chunk = s.recv(65536)
            if not chunk:
                raise AssertionError(f"/ws closed: {data[:80]!r}")
            data += chunk
        if not data.startswith(b"HTTP/1.1 101"):
            raise AssertionError(f"/ws: {data[:80]!r}")
    return time.monotonic() - start


def siege(port: int, pid: int, half_open: int = 1000, sockets: int = 200, pages: int = 5,
          seconds: float = 6.0, total_cap: int = 5000, probe: Any = None) -> Figures:
    """Run the attack for `seconds` once at full strength, loading a fresh page `pages` times
    meanwhile (`probe()`, default `fresh_page(port)`: its seconds); stops by itself (and its
    connections) in any case."""
    probe = probe or (lambda: fresh_page(port))
    attack = Attack(port, half_open, sockets, total_cap, seconds)
    figures = attack.figures
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            figures.fds_peak = max(figures.fds_peak, count_fds(pid))
            time.sleep(0.02)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    attack.thread.start()
    try:
        if not attack.ready.wait(60):
            raise AssertionError(f"the attack never reached full strength: {figures}")
        for _ in range(pages):
            try:
                figures.page_s.append(probe())
            except Exception as err:                  # a page that failed is a figure too
                figures.page_errors.append(f"{type(err).__name__}: {err}")
            time.sleep(0.3)
    finally:
        attack.stop.set()
        attack.thread.join(30)
        sampling.set()
        sampler.join(5)
    return figures
