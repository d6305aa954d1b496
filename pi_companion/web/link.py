"""The web process's two connections to the daemon's hub (roles `board` and `host`, see
hub/protocol.py), kept open for ever: the latest snapshot and OLED picture, whether the box is
alive, and the pages' commands with their answers. It never holds the host token."""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..hub import protocol

log = logging.getLogger("pi_companion.web")
COMMAND_TIMEOUT_S = 5.0          # the hub answers once the command is saved, or 2 s later why not
SILENCE_S = 2.0                  # no line from the hub for this long: the box is offline


class HubLink:
    """Two connections to the hub socket, each reconnected for ever. The board connection
    (role `board`) brings the latest snapshot and OLED image and says whether the box is alive
    (`box`): connected, and, while a page is open (`watch`), heard within SILENCE_S (the hub
    beats every 0.5 s to a board that watches, so a frozen daemon goes offline as surely as a
    dead one, whose socket closes). With no page open nobody is told, so the link asks for no
    beats and checks nothing: an idle box and an idle web process both sleep. The host
    connection (role `host`) carries the pages' commands, each rebuilt by the protocol from the
    verbs a page may send and the token its phone sent; the link never holds a token."""

    def __init__(self, path: str | Path, address: Callable[[], str] | None = None) -> None:
        self.path = str(path)
        self.address = address          # this machine's IP address, for the OLED's QR screens
        self.told = ""
        self.snapshot: str | None = None
        self.seq = 0
        self.oled: bytes | None = None
        self.changed = asyncio.Event()
        self.writer: asyncio.StreamWriter | None = None
        self.host_writer: asyncio.StreamWriter | None = None
        self.host_connected = asyncio.Event()
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.ids = itertools.count(1)
        self.connected = asyncio.Event()
        self.version = 0                # counts snapshots taken (a restarted box numbers afresh)
        self.box = False                # connected (and, while watched, heard within SILENCE_S)
        self.heard = 0.0
        self.viewers = 0                # pages open (the app's WebSockets): beats asked for while > 0
        self.watched = asyncio.Event()  # set while viewers > 0

    def _alive(self, alive: bool) -> None:
        if alive != self.box:
            self.box = alive
            (log.info if alive else log.warning)("the box is %s", "there" if alive else "offline")
            self._notify()

    def watch(self, pages: int) -> None:
        """How many pages are open now: the first asks the hub for beats, the last stops them."""
        was = self.viewers > 0
        self.viewers = pages
        if (self.viewers > 0) != was:
            if self.viewers:
                self.heard = time.monotonic()   # the hub's first beat answers at once
                self.watched.set()
            else:
                self.watched.clear()
            self._tell_watch()

    def _tell_watch(self) -> None:
        if self.writer is not None:
            self.writer.write(protocol.watch(self.viewers > 0))

    async def _watch(self) -> None:
        next_address = time.monotonic() + 60.0      # a DHCP lease may have moved it
        while True:
            if self.viewers:
                await asyncio.sleep(SILENCE_S / 8)
                if self.viewers and self.box and time.monotonic() - self.heard > SILENCE_S:
                    self._alive(False)
            else:                                   # nobody to tell: sleep until a page opens
                try:
                    await asyncio.wait_for(self.watched.wait(), max(0.0, next_address - time.monotonic()))
                except asyncio.TimeoutError:
                    pass
            if time.monotonic() >= next_address:
                next_address = time.monotonic() + 60.0
                self._tell_address()

    def _tell_address(self, again: bool = False) -> None:
        address = self.address() if self.address is not None else ""
        if self.writer is not None and address and (again or address != self.told):
            self.told = address
            self.writer.write(protocol.address(address))

    async def run(self) -> None:
        watch = asyncio.ensure_future(self._watch())
        host = asyncio.ensure_future(self._run_host())
        try:
            await self._run()
        finally:
            watch.cancel()
            host.cancel()

    async def _connect(self, role: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the hub that has said its role (retried until the hub is there)."""
        delay = 0.2
        while True:
            try:
                reader, writer = await asyncio.open_unix_connection(self.path, limit=1 << 20)
            except OSError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            writer.write(protocol.hello(role))
            return reader, writer

    async def _run_host(self) -> None:
        while True:
            reader, writer = await self._connect("host")
            self.host_writer = writer
            self.host_connected.set()
            try:
                while line := await reader.readline():
                    msg = protocol.parse_server_line(line)
                    if msg["type"] == "reply":
                        self._message(msg)
            except (OSError, ValueError) as err:
                log.warning("hub link (commands): %s", err)
            finally:
                self.host_writer = None
                self.host_connected.clear()
                writer.close()
                for fut in self.pending.values():
                    if not fut.done():
                        fut.set_exception(ConnectionError("the box went away"))
                self.pending.clear()
            await asyncio.sleep(0.2)

    async def _run(self) -> None:
        while True:
            reader, writer = await self._connect("board")
            self.writer = writer
            self.connected.set()
            self._tell_address(again=True)
            if self.viewers:
                self.heard = time.monotonic()
                self._tell_watch()
            try:
                while line := await reader.readline():
                    self.heard = time.monotonic()
                    self._message(protocol.parse_server_line(line))
                    self._alive(True)
            except (OSError, ValueError) as err:
                log.warning("hub link: %s", err)
            finally:
                self.writer = None
                self.connected.clear()
                self._alive(False)
                writer.close()

    def _message(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "snapshot":
            self.snapshot = json.dumps(msg, separators=(",", ":"))
            self.seq = int(msg["seq"])
            self.version += 1
            self._notify()
        elif kind == "oled":
            self.oled = base64.b64decode(msg["png"])
        elif kind == "reply":
            fut = self.pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
            if fut is not None and not fut.done():
                fut.set_result(msg)

    def _notify(self) -> None:
        old, self.changed = self.changed, asyncio.Event()
        old.set()

    async def command(self, page: dict[str, Any], token: str) -> dict[str, Any]:
        """A page's command with its phone's token: the hub's reply. CommandError, before
        anything is sent, for a verb no page may send."""
        msg_id = next(self.ids)
        line = protocol.host_message(page, token, msg_id)
        if self.box and self.host_writer is None:      # the board is there: its twin comes
            try:
                await asyncio.wait_for(self.host_connected.wait(), SILENCE_S)
            except asyncio.TimeoutError:
                pass
        if self.host_writer is None or not self.box:
            raise ConnectionError("the box is offline")
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = fut
        self.host_writer.write(line)
        try:
            return await asyncio.wait_for(fut, COMMAND_TIMEOUT_S)
        finally:
            self.pending.pop(msg_id, None)
