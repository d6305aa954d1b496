"""A raw client of the daemon's hub socket: one connection that has said its role, read as JSON
lines, the way the web process and the hotspot dispatcher talk to the hub."""
from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any, Callable


class HubLines:
    def __init__(self, path: str | Path, role: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(path))
        self.sock.settimeout(3.0)
        self.buf = b""
        self.ids = 0
        self.sock.sendall(json.dumps({"cmd": "hello", "role": role, "id": "hello"}).encode() + b"\n")

    def read_until(self, predicate: Callable[[dict], bool], seen: Callable[[dict], Any] = lambda m: None,
                   timeout: float = 3.0, tick: Callable[[], Any] | None = None) -> dict:
        """The first message `predicate` takes; `seen` is shown every message read. `tick`: called
        between reads (a test's box that runs no loop of its own is pumped)."""
        end = time.monotonic() + timeout
        self.sock.settimeout(0.02 if tick is not None else timeout)
        while time.monotonic() < end:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(line)
                seen(msg)
                if predicate(msg):
                    return msg
            if tick is not None:
                tick()
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                if tick is not None:
                    continue
                break
            if not data:
                raise EOFError("hub closed the connection")
            self.buf += data
        raise AssertionError("no such message from the hub")

    def reply(self, msg_id: Any, tick: Callable[[], Any] | None = None,
              seen: Callable[[dict], Any] = lambda m: None) -> dict:
        return self.read_until(lambda m: m["type"] == "reply" and m["id"] == msg_id, seen, tick=tick)

    def send(self, msg: dict, tick: Callable[[], Any] | None = None) -> dict:
        """`msg` with the next id; the hub's reply to it."""
        self.ids += 1
        self.sock.sendall(json.dumps({**msg, "id": self.ids}).encode() + b"\n")
        return self.reply(self.ids, tick)

    def close(self) -> None:
        self.sock.close()
