"""The daemon's side of the big screen: a Unix socket publishing the table, taking host commands.

The box loop calls `on_draw` when it has drawn a frame (so only when idle: a snapshot never
delays a buzz). It builds the table view, numbers it if it changed, and hands the bytes to the
hub's own thread, which writes them to every client through a bounded buffer. A client that
falls `BUFFER_LIMIT` bytes behind is dropped; on reconnect it gets the latest snapshot at once.

Clients speak newline-delimited JSON. The hub sends `{"type": "snapshot", "seq": N, ...}`,
`{"type": "oled", "png": base64}`, `{"type": "beat"}` every `BEAT_S` to a client that watches
(`{"cmd": "watch", "on": true}`, no token: the web process says so while a page is open, so that
the page knows within a few beats that a frozen box is offline; with nobody watching, an idle
box sends nothing and its hub thread sleeps), and
`{"type": "reply", "id": ..., "ok": bool, "error": ...}` to each command. Commands (`yes`, `no`,
`special`, `undo`, `new`, `rename`, `switch`, `players`, `dial`, `menu`: core/table.py
`HOST_COMMANDS`) carry the host
token (`"token": ...`, compared here in constant time; a wrong one is refused with
`"denied": true`); `{"cmd": "forget", "game": NAME}` (with the token) removes a finished game
from /history (the store moves it to removed/; not a game's input, so not in any game log);
`{"cmd": "address", "address": IP}`, the web process's IP address for the
OLED's QR screens, needs none (it is checked to be one home-network address, `address_url`);
`{"cmd": "hotspot"}`, sent by the SD image's NetworkManager dispatcher when the box's own Wi-Fi
hotspot goes up or down, needs none either: it only makes the hub read `HOTSPOT_PATH` again
(a root-written file; its name and password go on the OLED's Wi-Fi QR). The token's commands
become `HostCommand` inputs on the box's queue: logged, undoable and
resumed like a press. There is no command for a player's press, for power or for the config.

The token never leaves the daemon but in the OLED's host QR: no client of the socket is sent
it (the web process forwards the token a phone sends and never holds one). A frame that
carries the host QR goes to a client only once that client has proved the token
(`{"cmd": "auth", "token": ...}`); every other client gets the same frame with the code
blanked (`ui/qr.py`), so `/oled.png` never shows it.

The token file: `TOKEN_NAME` in the daemon's state directory, mode `TOKEN_MODE` (0600, the
daemon's user only). Nothing else reads it.
"""
from __future__ import annotations

import base64
import ipaddress
import io
import json
import logging
import os
import re
import selectors
import socket
import threading
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from .core.names import name_problem
from .core.events import HostCommand
from .core.frozen import lazy_frozen
from .core.snapshot import numbered, table_view
from .core.table import HOST_COMMANDS, names_problem
from .games import registry
from .games.base import OptionError

log = logging.getLogger(__name__)
BUFFER_LIMIT = 256 * 1024      # bytes a client may fall behind before it is dropped
LINE_LIMIT = 4096              # longest command line accepted
MAX_CLIENTS = 32
BEAT_S = 0.5                   # a line to every client at least this often: the box is alive
BEAT_LINE = b'{"type":"beat"}\n'
COMMANDS = HOST_COMMANDS
MENU_KEY_MAX = 24              # a game's menu entry key (pause, resume, bank, guide, ...)
SOCKET_NAME = "hub.sock"
TOKEN_NAME = "host-token"
TOKEN_MODE = 0o600             # the daemon's user only: the web process never reads it
TOKEN_MAX = 64                 # longest token text a client may offer
# The box's own Wi-Fi hotspot while it is up, as the SD image's NetworkManager dispatcher writes
# it (systemd/image/files/pi-companion-hotspot-dispatch): {"ssid", "password", "address"}.
HOTSPOT_PATH = "/run/pi-companion-net/hotspot.json"
HOTSPOT_MAX = 1024             # bytes of that file read at most


def board_url(port: int) -> str:
    return f"http://{socket.gethostname()}.local:{port}/"


def address_url(board: str, address: Any) -> str:
    """The big screen's address by IP (Android phones often cannot resolve NAME.local): the
    port of `board` at `address`, which must be one IP address (v4 or v6) of a home network or
    this machine - private, link-local or loopback, not multicast or unspecified. CommandError
    otherwise: the web process reports it, and the OLED's QR codes (the host's with its token)
    carry it, so nothing but an address gets into a URL here."""
    if not isinstance(address, str) or len(address) > 64:
        raise CommandError("address: one IP address")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise CommandError("address: one IP address") from None
    if ip.is_multicast or ip.is_unspecified or not (ip.is_private or ip.is_loopback or ip.is_link_local):
        raise CommandError("address: not a home network's address")
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        raise CommandError("address: no scope")
    port = urlsplit(board).port
    host = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    return f"http://{host}:{port}/" if port else f"http://{host}/"


@lazy_frozen        # made when a hotspot file is first read (core/frozen.py)
class Hotspot:
    """The box's own Wi-Fi network while it is up: what a phone needs to join it."""
    ssid: str
    password: str
    address: str = ""              # the box's IP address on it ("" if not said)


def read_hotspot(path: str | Path) -> Hotspot | None:
    """The hotspot file: None when there is none (the hotspot is down, or this is no image);
    ValueError with a one-line reason when it is not what the dispatcher writes."""
    try:
        with open(path, "rb") as f:
            raw = f.read(HOTSPOT_MAX + 1)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"cannot read it ({err.strerror})") from None
    if len(raw) > HOTSPOT_MAX:
        raise ValueError(f"longer than {HOTSPOT_MAX} bytes")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    ssid, password, address = data.get("ssid"), data.get("password"), data.get("address", "")
    if not isinstance(ssid, str) or not 1 <= len(ssid.encode()) <= 32 or not ssid.isprintable():
        raise ValueError("ssid: 1 to 32 bytes of printable text")
    if not isinstance(password, str) or not (8 <= len(password) <= 63 and password.isascii()
                                             and password.isprintable()):
        raise ValueError("password: 8 to 63 printable ASCII characters")
    if not isinstance(address, str):
        raise ValueError("address: one IP address")
    if address:
        try:
            address_url("http://x/", address)
        except CommandError as err:
            raise ValueError(str(err)) from None
    return Hotspot(ssid, password, address)


def socket_path(state_dir: str | Path) -> Path:
    """`$RUNTIME_DIRECTORY/hub.sock` under systemd, else in the state directory."""
    runtime = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    return Path(runtime or state_dir) / SOCKET_NAME


class CommandError(ValueError):
    """A host command that cannot be taken; the message goes back to the page."""


HISTORY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,120}\.log")


def history_name(value: Any) -> str:
    """A finished game's file name as /history gives it (`game-000042-20261201-213000.log`):
    one plain name, no directory, no dot but the ".log"; CommandError otherwise."""
    if not isinstance(value, str) or not HISTORY_NAME.fullmatch(value):
        raise CommandError("game: the name of a finished game")
    return value


def parse_command(msg: Any, players: tuple[str, ...]) -> HostCommand:
    """Check one command message; the HostCommand to queue (t filled in later) or CommandError."""
    if not isinstance(msg, dict):
        raise CommandError("a command must be a JSON object")
    cmd = msg.get("cmd")
    if cmd not in COMMANDS:
        raise CommandError(f"unknown command (one of {', '.join(COMMANDS)})")
    if cmd == "rename":
        player, name = msg.get("player"), msg.get("name")
        if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < len(players):
            raise CommandError(f"player must be 0 to {len(players) - 1}")
        problem = name_problem(name)
        if problem is not None:
            raise CommandError(problem)
        name = name.strip()
        if name in players[:player] + players[player + 1:]:
            raise CommandError(f"{name} is already playing")
        return HostCommand(0.0, "rename", player, name)
    if cmd == "players":           # other players: a new game with them (the table checks the count)
        names = msg.get("names")
        problem = names_problem(names)
        if problem is not None:
            raise CommandError(problem)
        return HostCommand(0.0, "players", -1, "", json.dumps([n.strip() for n in names]))
    if cmd == "switch":
        game, options = msg.get("game"), msg.get("options", {})
        if game not in registry.available():
            raise CommandError(f"unknown game (one of {', '.join(registry.available())})")
        if not isinstance(options, dict):
            raise CommandError("options must be an object")
        rules = registry.get(game)
        if not rules.min_players <= len(players) <= rules.max_players:
            raise CommandError(f"{rules.title} takes {rules.min_players} to {rules.max_players} players")
        try:
            rules.new_game(players, options, 0)
        except OptionError as err:
            raise CommandError(str(err)) from None
        return HostCommand(0.0, "switch", -1, game, json.dumps(options, separators=(",", ":"))
                           if options else "")
    if cmd == "dial":              # one detent of the encoder
        delta = msg.get("delta")
        if isinstance(delta, bool) or delta not in (1, -1):
            raise CommandError("delta must be 1 or -1")
        return HostCommand(0.0, "dial", delta=delta)
    if cmd == "menu":              # the game's own menu entry (the table checks the game has it)
        key = msg.get("key")
        if not isinstance(key, str) or not 0 < len(key) <= MENU_KEY_MAX or not key.isascii() \
                or not all(c.isalnum() or c == "-" for c in key):
            raise CommandError("key must be a menu entry's name (letters, digits, -)")
        return HostCommand(0.0, "menu", name=key)
    return HostCommand(0.0, cmd)


def token_text_ok(given: Any) -> bool:
    """Could `given` be a token at all (1 to TOKEN_MAX of URL-safe base64's characters)? Anything
    else is refused before any comparison."""
    return (isinstance(given, str) and 0 < len(given) <= TOKEN_MAX and given.isascii()
            and all(c.isalnum() or c in "-_" for c in given))


class _Client:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = bytearray()
        self.inbuf = bytearray()
        self.proven: str | None = None          # the host token it sent: true frames while current
        self.watching = False                   # wants a beat every BEAT_S (it has a page open)


class Hub:
    def __init__(self, box: Any, path: str | Path, token_dir: str | Path | None = None, *,
                 buffer_limit: int = BUFFER_LIMIT, board_url: str = "",
                 forget: Callable[[str], str | None] | None = None,
                 hotspot_path: str | Path | None = HOTSPOT_PATH) -> None:
        self.box = box
        self.hotspot_path = hotspot_path        # None: this box never has a hotspot (tests)
        self.hotspot: Hotspot | None = None
        self.forget = forget                    # the host removes a finished game (the store's)
        self._replies: list[tuple[_Client, bytes]] = []     # answers made on other threads
        self.board_url = board_url
        self.path = Path(path)
        self.buffer_limit = buffer_limit
        self.token_path = Path(token_dir) / TOKEN_NAME if token_dir is not None else None
        self.token = self._load_token()
        self.address = ""                       # the board by IP, as the web process reports it
        self.lock = threading.Lock()
        self.seq = 0
        self.view: dict[str, Any] | None = None
        self.latest = b""                       # the latest snapshot line
        self.oled = b""                         # the latest OLED line, for every client
        self.oled_true = b""                    # the same frame with its secret (proven clients)
        self._frame: Any = None                 # a frame to encode (hub thread)
        self._secret = ""                       # ... and the secret it carries ("host", "wifi")
        self._frame_bytes = b""
        self._sent_seq = 0
        self.dropped = 0
        self.clients: dict[int, _Client] = {}
        self.sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._stop = False
        self.thread: threading.Thread | None = None
        self.listener: socket.socket | None = None

    # ---- the host token ----

    def _load_token(self) -> str:
        if self.token_path is not None:
            try:
                token = self.token_path.read_text().strip()
                if len(token) >= 8:
                    return token
            except OSError:
                pass
        return self._new_token()

    def _new_token(self) -> str:
        import secrets     # here, not at import: with hmac, OpenSSL's hashlib (~12 M instructions
                           # before READY); a box makes its token once, at its first start
        token = secrets.token_urlsafe(9)        # 72 bits; short enough for a QR on the OLED
        if self.token_path is not None:
            try:
                # A first start: the game log's writer may not have made the directory yet.
                self.token_path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.token_path.with_suffix(".tmp")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, TOKEN_MODE)
                with os.fdopen(fd, "w") as f:
                    f.write(token + "\n")
                os.replace(tmp, self.token_path)
            except OSError as err:
                log.warning("host token not saved (%s): it changes at the next start", err)
        return token

    def rotate_token(self) -> None:
        """"New host" from the menu: the old host's page stops working."""
        token = self._new_token()
        with self.lock:
            self.token = token
        self.box.web_links = self.links()
        self._wake()

    def token_matches(self, given: Any) -> bool:
        """The host token, compared in constant time (any thread)."""
        import hmac        # here, not at import (see _new_token): the first client's command
        with self.lock:
            token = self.token
        return token_text_ok(given) and hmac.compare_digest(given.encode(), token.encode())

    def links(self) -> tuple[str, ...]:
        """What the OLED's QR screens show: the scoreboard's QR, the remote's (the token in the
        fragment: a browser never sends it to the server nor keeps it in its history list),
        then as text the address by name and, once the web process has said it, by IP. The
        codes carry the IP address when known (every phone can open it; Android often cannot
        resolve NAME.local)."""
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
        """Read the hotspot file again (at start, and when the dispatcher says it changed). When
        the hotspot has just come up, the box shows its Wi-Fi QR: an input on the box's queue,
        logged like a press, that any button closes."""
        if self.hotspot_path is None:
            return
        try:
            hotspot = read_hotspot(self.hotspot_path)
        except ValueError as err:
            log.warning("hotspot file %s ignored: %s", self.hotspot_path, err)
            hotspot = None
        if hotspot == self.hotspot:
            return
        came_up = self.hotspot is None
        self.hotspot = hotspot
        self.box.web_links = self.links()
        if hotspot is None:
            log.info("hotspot off")
            return
        log.info('hotspot on: Wi-Fi "%s" at %s', hotspot.ssid, hotspot.address or "an unknown address")
        if came_up:
            self.box.put_host_command(HostCommand(0.0, "wifi"))

    # ---- the loop thread's side (never blocks) ----

    def attach(self) -> None:
        """Hook into the box: its drawn frames, and "New host" from its menu."""
        self.box.on_draw = self.on_draw
        self.box.web_links = self.links()
        previous = self.box.on_request

        def on_request(req: Any) -> None:
            if req.name == "newhost":
                self.rotate_token()
            if previous is not None:
                previous(req)
        self.box.on_request = on_request

    def on_draw(self, box: Any, frame: Any) -> None:
        view = table_view(box.engine)
        changed = view != self.view
        if changed:
            self.view = view
            self.seq += 1
            line = json.dumps(numbered(view, self.seq), separators=(",", ":")).encode() + b"\n"
        from .ui.qr import carries_secret       # (not at import: the web process imports this module)
        secret = carries_secret(box.engine)
        with self.lock:
            if changed:
                self.latest = line
            self._frame, self._secret = frame, secret
        self._wake()

    def _forget(self, client: _Client, msg_id: Any, name: str) -> None:
        why = self.forget(name) if self.forget is not None else "this box keeps no history"
        reply = {"type": "reply", "id": msg_id, "ok": why is None, **({"error": why} if why else {})}
        with self.lock:
            self._replies.append((client, json.dumps(reply).encode() + b"\n"))
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"!")
        except (BlockingIOError, OSError):
            pass                                 # already woken

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
        # To a client that watches, a beat every BEAT_S: a web process that hears nothing for a
        # while knows the box is gone or frozen (a SIGKILL closes the socket at once; a SIGSTOP or
        # a hang does not). With no client watching (no page open anywhere) the thread sleeps
        # until a client speaks: an idle box never wakes.
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
                            self._send(client, BEAT_LINE)
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
        with self.lock:
            hello = self.latest + self.oled      # nobody has proved the token yet
        self._send(client, hello)

    @staticmethod
    def _oled_line(frame: Any) -> bytes:
        png = io.BytesIO()
        frame.convert("L").save(png, format="PNG")
        return json.dumps({"type": "oled", "png": base64.b64encode(png.getvalue()).decode()}).encode() + b"\n"

    def _publish(self) -> None:
        with self.lock:
            frame, self._frame = self._frame, None
            secret, token = self._secret, self.token
        out, out_true = b"", b""
        if frame is not None:
            raw = frame.tobytes()
            if raw != self._frame_bytes:
                self._frame_bytes = raw
                true_line = self._oled_line(frame)
                if secret:
                    from .ui.qr import without_secret
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
                self._send(client, out_true if client.proven == token else out)

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
        if len(client.inbuf) > LINE_LIMIT:
            self._drop(client, "sent a line too long: dropped")

    def _command(self, client: _Client, line: bytes) -> None:
        msg_id: Any = None
        try:
            if len(line) > LINE_LIMIT:
                raise CommandError("command too long")
            try:
                msg = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                raise CommandError("not JSON") from None
            msg_id = msg.get("id") if isinstance(msg, dict) else None
            if not isinstance(msg, dict):
                raise CommandError("a command must be a JSON object")
            with self.lock:
                token = self.token
            if msg.get("cmd") == "watch":       # beats while it has a page open (no token: no power)
                client.watching = msg.get("on") is True
                self._send(client, json.dumps({"type": "reply", "id": msg_id, "ok": True}).encode()
                           + b"\n" + (BEAT_LINE if client.watching else b""))
                return
            if msg.get("cmd") == "hotspot":     # the hotspot went up or down: read its file (no token)
                self.check_hotspot()
                reply: dict[str, Any] = {"type": "reply", "id": msg_id, "ok": True}
            elif msg.get("cmd") == "address":   # the web process's IP address (no token: no power)
                url = address_url(self.board_url, msg.get("address")) if self.board_url else ""
                if url != self.address:
                    self.address = url
                    self.box.web_links = self.links()
                    log.info("big screen also at %s", url)
                reply = {"type": "reply", "id": msg_id, "ok": True}
            elif not (client.proven == token or self.token_matches(msg.get("token"))):
                reply = {"type": "reply", "id": msg_id, "ok": False, "denied": True,
                                         "error": "not the host: scan the host QR"}
            elif msg.get("cmd") == "auth":
                client.proven = token         # "New host" ends it
                reply = {"type": "reply", "id": msg_id, "ok": True}
                with self.lock:
                    true_frame = self.oled_true
                self._send(client, json.dumps(reply).encode() + b"\n" + true_frame)
                return
            elif msg.get("cmd") == "forget":    # a finished game off /history: not a game's input
                name = history_name(msg.get("game"))
                if self.forget is None:
                    raise CommandError("this box keeps no history")
                threading.Thread(target=self._forget, args=(client, msg_id, name), name="web-hub-forget",
                                 daemon=True).start()     # the disk's time, not the hub thread's
                return
            else:
                cmd = parse_command(msg, tuple(self.box.engine.players))
                self.box.put_host_command(cmd)
                reply = {"type": "reply", "id": msg_id, "ok": True}
        except CommandError as err:
            reply = {"type": "reply", "id": msg_id, "ok": False, "error": str(err)}
        self._send(client, json.dumps(reply).encode() + b"\n")
