"""The daemon's side of the big screen: a Unix socket that publishes the table and takes host
commands (the messages and roles: hub/protocol.py).

The hub owns one thread. The box loop hands it a frame when it has drawn one (`on_draw`, so only
when idle: a snapshot never delays a buzz), and the hub thread encodes it and writes it to every
board client through a bounded buffer; a client that falls `buffer_limit` bytes behind is
dropped and gets the latest snapshot when it reconnects. While a board client watches, it gets a
beat every `BEAT_S`; with nobody watching, an idle hub sleeps.

The hub touches the box only through the callables `attach` hands it: `submit` puts a host
command on the box's queue (logged, undoable and resumed like a press) and answers when its
record is durable; `show_links` hands the box what its QR screens carry. The players it checks
a command against are the ones the loop last drew.

A frame that carries a secret (the host QR, the Wi-Fi password) goes as it is only to a host
connection that proved the token; every other client gets it with the code blanked.
"""
from __future__ import annotations

import base64
import io
import logging
import os
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.events import HostCommand, HotspotState
from ..core.snapshot import numbered, table_view
from . import protocol
from .addresses import address_url
from .hotspot import HOTSPOT_PATH, Hotspot, read_hotspot
from .protocol import CommandError
from .token import HostToken

log = logging.getLogger("pi_companion.hub")
BUFFER_LIMIT = 256 * 1024
MAX_CLIENTS = 32
BEAT_S = 0.5

Saved = Callable[[str | None], None]


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket (None where unknown)."""
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (AttributeError, OSError):
        return None
    return int(struct.unpack("3i", raw)[1])


class _Client:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = bytearray()
        self.inbuf = bytearray()
        self.role: str | None = None            # said by its first line, fixed from then on
        self.proven: str | None = None          # host: the token it proved (true frames while current)
        self.watching = False                   # board: wants a beat every BEAT_S


class Hub:
    def __init__(self, path: str | Path, token_dir: str | Path | None = None, *,
                 buffer_limit: int = BUFFER_LIMIT, board_url: str = "",
                 forget: Callable[[str], str | None] | None = None,
                 hotspot_path: str | Path | None = HOTSPOT_PATH) -> None:
        self.path = Path(path)
        self.buffer_limit = buffer_limit
        self.board_url = board_url
        self.forget = forget
        self.hotspot_path = hotspot_path        # None: this box never has a hotspot
        self.hotspot: Hotspot | None = None
        self.host_token = HostToken(token_dir)
        self.address = ""                       # the board by IP, as the web process reports it
        self.submit: Callable[[HostCommand | HotspotState, Saved | None], None] | None = None
        self.show_links: Callable[[tuple[str, ...]], None] = lambda links: None
        self.players: tuple[str, ...] = ()
        self.lock = threading.Lock()
        self.seq = 0
        self.view: dict[str, Any] | None = None
        self.latest = b""                       # the latest snapshot line
        self.oled = b""                         # the latest OLED line, secrets blanked
        self.oled_true = b""                    # the same frame with its secret
        self._frame: Any = None
        self._secret = ""
        self._frame_bytes = b""
        self._sent_seq = 0
        self._replies: list[tuple[_Client, bytes]] = []
        self.dropped = 0
        self.clients: dict[int, _Client] = {}
        self.sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._stop = False
        self.thread: threading.Thread | None = None
        self.listener: socket.socket | None = None

    @property
    def token(self) -> str:
        return self.host_token.value

    def token_matches(self, given: Any) -> bool:
        return self.host_token.matches(given)

    def rotate_token(self) -> None:
        """"New host" from the menu: the old host's page stops working."""
        self.host_token.rotate()
        self.show_links(self.links())
        self._wake()

    def links(self) -> tuple[str, ...]:
        """What the OLED's QR screens show: the board's QR, the remote's (the token in the
        fragment: a browser never sends it to the server), the address by name and by IP, then
        the hotspot's name and password. The codes carry the IP address when known."""
        hotspot = self.hotspot
        wifi = (hotspot.ssid, hotspot.password) if hotspot is not None else ("", "")
        if not self.board_url:
            return ("", "", "", "") + wifi
        # On its own hotspot the box has no default route, so the web process finds no
        # address: the hotspot's is the one every phone on it reaches.
        by_ip = self.address or (address_url(self.board_url, hotspot.address)
                                 if hotspot is not None and hotspot.address else "")
        qr = by_ip or self.board_url
        return (qr, f"{qr}host#t={self.token}", self.board_url, by_ip) + wifi

    def check_hotspot(self) -> None:
        """Read the hotspot file again. A change is an input on the box's queue, logged like a
        press (the menu offers "Join box Wi-Fi" while the hotspot is up, and its coming up opens
        the Wi-Fi QR); the password goes only into the links the QR screen draws."""
        if self.hotspot_path is None:
            return
        try:
            hotspot = read_hotspot(self.hotspot_path)
        except ValueError as err:
            log.warning("hotspot file %s ignored: %s", self.hotspot_path, err)
            hotspot = None
        if hotspot == self.hotspot:
            return
        self.hotspot = hotspot
        self.show_links(self.links())
        if hotspot is None:
            log.info("hotspot off")
        else:
            log.info('hotspot on: Wi-Fi "%s" at %s', hotspot.ssid, hotspot.address or "an unknown address")
        if self.submit is not None:
            self.submit(HotspotState(0.0, hotspot.ssid, hotspot.address) if hotspot is not None
                        else HotspotState(0.0), None)

    # ---- the loop thread's side (never blocks) ----

    def attach(self, box: Any) -> None:
        """Wire the hub to a box that has not started: its frames, its queue, its QR links, and
        "New host" from its menu."""
        self.submit = box.put_host_command
        self.show_links = box.show_links
        self.players = tuple(box.engine.players)
        box.on_draw = self.on_draw
        box.web_links = self.links()
        previous = box.on_request

        def on_request(req: Any) -> None:
            if req.name == "newhost":
                self.rotate_token()
            if previous is not None:
                previous(req)
        box.on_request = on_request

    def on_draw(self, engine: Any, frame: Any) -> None:
        """The loop drew `frame` for `engine`: the snapshot and the picture for the hub thread."""
        view = table_view(engine)
        changed = view != self.view
        if changed:
            self.view = view
            self.seq += 1
            line = protocol.snapshot(numbered(view, self.seq))
        from ..ui.qr import carries_secret       # not at import: the web process imports the hub
        secret = carries_secret(engine)
        with self.lock:
            if changed:
                self.latest = line
            self.players = tuple(engine.players)
            self._frame, self._secret = frame, secret
        self._wake()

    def _answer(self, client: _Client, line: bytes) -> None:
        """A reply made on another thread: the hub thread sends it."""
        with self.lock:
            self._replies.append((client, line))
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"!")
        except OSError:
            pass                                 # already woken (or closing)

    # ---- the hub thread ----

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        os.chmod(self.path, 0o660)
        listener.listen(8)
        listener.setblocking(False)
        self.listener = listener
        self.sel.register(listener, selectors.EVENT_READ, "listen")
        self.sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self.check_hotspot()            # before the thread: from then on only it reads the file
        self.thread = threading.Thread(target=self._run, name="web-hub", daemon=True)
        self.thread.start()
        log.info("web hub on %s", self.path)

    def close(self) -> None:
        self._stop = True
        self._wake()
        if self.thread is not None:
            self.thread.join(timeout=2)
        for client in list(self.clients.values()):
            self._drop(client, "")
        if self.listener is not None:
            self.listener.close()
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    def _run(self) -> None:
        # A board client that watches hears a beat every BEAT_S, so the web process knows a
        # frozen box from a quiet one. With nobody watching the thread sleeps until a client
        # speaks.
        next_beat = time.monotonic() + BEAT_S
        while not self._stop:
            try:
                watching = [c for c in self.clients.values() if c.watching]
                timeout = max(0.0, next_beat - time.monotonic()) if watching else None
                for key, mask in self.sel.select(timeout=timeout):
                    self._event(key, mask)
                now = time.monotonic()
                if not watching:
                    next_beat = now + BEAT_S
                elif now >= next_beat:
                    next_beat = now + BEAT_S
                    for client in watching:
                        if client.watching and self.clients.get(client.sock.fileno()) is client:
                            self._send(client, protocol.BEAT)
            except Exception:               # the hub must never take the box down
                log.exception("web hub error")

    def _event(self, key: selectors.SelectorKey, mask: int) -> None:
        if key.data == "listen":
            self._accept()
        elif key.data == "wake":
            try:
                while self._wake_r.recv(4096):
                    pass
            except BlockingIOError:
                pass
            self._publish()
            with self.lock:
                replies, self._replies = self._replies, []
            for client, line in replies:
                if self.clients.get(client.sock.fileno()) is client:
                    self._send(client, line)
        else:
            client = key.data
            if mask & selectors.EVENT_READ:
                self._read(client)
            if mask & selectors.EVENT_WRITE and client.sock.fileno() in self.clients:
                self._flush(client)

    def _accept(self) -> None:
        try:
            sock, _ = self.listener.accept()  # type: ignore[union-attr]
        except BlockingIOError:
            return
        if len(self.clients) >= MAX_CLIENTS:
            sock.close()
            return
        sock.setblocking(False)
        client = _Client(sock)
        self.clients[sock.fileno()] = client
        self.sel.register(sock, selectors.EVENT_READ, client)

    @staticmethod
    def _oled_line(frame: Any) -> bytes:
        png = io.BytesIO()
        frame.convert("L").save(png, format="PNG")
        return protocol.oled(base64.b64encode(png.getvalue()).decode())

    def _publish(self) -> None:
        with self.lock:
            frame, self._frame = self._frame, None
            secret = self._secret
        token = self.token
        out, out_true = b"", b""
        if frame is not None:
            raw = frame.tobytes()
            if raw != self._frame_bytes:
                self._frame_bytes = raw
                true_line = self._oled_line(frame)
                if secret:
                    from ..ui.qr import without_secret
                line = self._oled_line(without_secret(frame, secret)) if secret else true_line
                with self.lock:
                    self.oled, self.oled_true = line, true_line
                out, out_true = line, true_line
        if self.seq != self._sent_seq:
            self._sent_seq = self.seq
            with self.lock:
                out, out_true = self.latest + out, self.latest + out_true
        if out:
            for client in list(self.clients.values()):
                if client.role == "board":
                    self._send(client, out)
                elif client.role == "host" and client.proven == token:
                    self._send(client, out_true)

    def _send(self, client: _Client, data: bytes) -> None:
        if len(client.out) + len(data) > self.buffer_limit:
            self.dropped += 1
            self._drop(client, "too slow: dropped (it resyncs on reconnect)")
            return
        client.out += data
        self._flush(client)

    def _flush(self, client: _Client) -> None:
        try:
            sent = client.sock.send(client.out) if client.out else 0
        except BlockingIOError:
            sent = 0
        except OSError:
            self._drop(client, "")
            return
        del client.out[:sent]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if client.out else 0)
        self.sel.modify(client.sock, events, client)

    def _drop(self, client: _Client, why: str) -> None:
        if why:
            log.warning("web hub client %s", why)
        fd = client.sock.fileno()
        if fd in self.clients:
            del self.clients[fd]
            self.sel.unregister(client.sock)
        client.sock.close()

    def _read(self, client: _Client) -> None:
        try:
            data = client.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(client, "")
            return
        client.inbuf += data
        while b"\n" in client.inbuf:
            line, _, rest = bytes(client.inbuf).partition(b"\n")
            client.inbuf = bytearray(rest)
            self._command(client, line)
            if client.sock.fileno() not in self.clients:
                return
        if len(client.inbuf) > protocol.LINE_LIMIT:
            self._drop(client, "sent a line too long: dropped")

    def _command(self, client: _Client, line: bytes) -> None:
        msg_id: Any = None
        try:
            msg = protocol.parse_line(line)
            msg_id = protocol.message_id(msg)
            if client.role is None:
                self._hello(client, msg_id, protocol.hello_role(msg))
                return
            problem = protocol.verb_problem(client.role, msg)
            if problem is not None:
                raise CommandError(problem)
            cmd = msg["cmd"]
            if cmd in protocol.TOKEN_VERBS:
                token = self.token
                if not (client.proven == token or self.host_token.matches(msg.get("token"))):
                    self._send(client, protocol.denied(msg_id))
                    return
                self._host(client, msg_id, cmd, msg, token)
                return
            if cmd == "watch":
                client.watching = msg.get("on") is True
                self._send(client, protocol.reply(msg_id, True) + (protocol.BEAT if client.watching else b""))
                return
            if cmd == "address":
                url = address_url(self.board_url, msg.get("address")) if self.board_url else ""
                if url != self.address:
                    self.address = url
                    self.show_links(self.links())
                    log.info("big screen also at %s", url)
            elif cmd == "hotspot":
                self.check_hotspot()
            reply = protocol.reply(msg_id, True)
        except CommandError as err:
            if client.role is None:             # no hello: nothing more from this one
                self._send(client, protocol.reply(msg_id, False, str(err)))
                self._drop(client, "")
                return
            reply = protocol.reply(msg_id, False, str(err))
        self._send(client, reply)

    def _hello(self, client: _Client, msg_id: Any, role: str) -> None:
        if role == "dispatcher" and peer_uid(client.sock) not in (None, 0, os.geteuid()):
            raise CommandError("dispatcher: only root or the box's own user")
        client.role = role
        first = b""
        if role == "board":
            with self.lock:
                first = self.latest + self.oled
        self._send(client, protocol.reply(msg_id, True) + first)

    def _host(self, client: _Client, msg_id: Any, cmd: str, msg: dict[str, Any], token: str) -> None:
        """A command of a host connection whose token is good."""
        if cmd == "auth":
            client.proven = token             # "New host" ends it
            with self.lock:
                true_frame = self.oled_true
            self._send(client, protocol.reply(msg_id, True) + true_frame)
            return
        if cmd == "forget":                   # a finished game off /history: not a game's input
            name = protocol.history_name(msg.get("game"))
            if self.forget is None:
                raise CommandError("this box keeps no history")
            threading.Thread(target=self._forget, args=(client, msg_id, name), name="web-hub-forget",
                             daemon=True).start()     # the disk's time, not the hub thread's
            return
        with self.lock:
            players = self.players
        command = protocol.parse_command(msg, players)
        if self.submit is None:
            raise CommandError("no box")

        def saved(problem: str | None) -> None:
            self._answer(client, protocol.reply(msg_id, True, problem or "", saved=problem is None))
        self.submit(command, saved)

    def _forget(self, client: _Client, msg_id: Any, name: str) -> None:
        why = self.forget(name) if self.forget is not None else "this box keeps no history"
        self._answer(client, protocol.reply(msg_id, why is None, why or ""))
