"""`pi-companion web`: the big screen's HTTP and WebSocket server, a client of the daemon's hub.

It has no GPIO and never writes the state directory. The scoreboard is open to the LAN; host
commands need the token (header `X-Host-Token`, compared in constant time). Only requests whose
Host header names the box (its hostname, hostname.local, localhost, an IP address, or
`web.hosts`) are answered, so a DNS-rebinding page cannot reach it; a WebSocket upgrade from
another origin is refused; request bodies, WebSocket messages and request rates are limited.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import signal
import socket
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSCloseCode, WSMsgType, web

from .. import __version__
from ..games import registry
from ..hub import protocol
from ..hub.addresses import address_url, board_url
from ..hub.protocol import CommandError, token_text_ok
from .gate import BACKLOG, IDLE_S, LISTEN_QUEUE, Gate
from .link import HubLink

log = logging.getLogger("pi_companion.web")
MAX_BODY = 4096                  # bytes in a command request
MAX_WS_MESSAGE = 1024
MAX_SOCKETS = 200                # open WebSockets at once
RATE = (20.0, 60.0)              # requests per second per address, burst
COMMAND_RATE = (4.0, 12.0)       # host commands per second per address, burst
SHUTDOWN_S = 1.0                 # SIGTERM: the longest wait for open connections (board)
BODY_TIMEOUT_S = 5.0             # a command's body must arrive within this
PAGE_BEAT_S = 1.0                # a line to each browser at least this often (board.js: 3 s)
NOT_HOST = protocol.NOT_HOST
PAGES = {"/": "index.html", "/host": "host.html"}
STATIC = {"style.css": "text/css", "board.js": "text/javascript", "host.js": "text/javascript",
          "history.js": "text/javascript", "evening.js": "text/javascript", "evening.css": "text/css"}


class Buckets:
    """A token bucket per client address."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.state: dict[str, tuple[float, float]] = {}

    def take(self, who: str) -> bool:
        now = time.monotonic()
        tokens, last = self.state.get(who, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if len(self.state) > 4096:
            self.state.clear()
        if tokens < 1.0:
            self.state[who] = (tokens, now)
            return False
        self.state[who] = (tokens - 1.0, now)
        return True


def own_names(extra: tuple[str, ...] = ()) -> set[str]:
    host = socket.gethostname().lower()
    return {"localhost", host, f"{host}.local", *(h.lower() for h in extra)}


def host_allowed(header: str | None, names: set[str]) -> bool:
    """Is the Host header the box's own name or an address (with or without a port)?"""
    if not header:
        return False
    name = urlsplit(f"//{header}").hostname
    if name is None:
        return False
    name = name.lower().rstrip(".")
    if name in names:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def same_origin(origin: str | None, host: str | None) -> bool:
    """A browser's WebSocket upgrade must come from a page served by this very host."""
    if origin is None:
        return True                               # not a browser: nothing to forge
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == (host or "").lower()


def make_app(link: HubLink, state_dir: str | Path, hosts: tuple[str, ...] = (),
             names: set[str] | None = None, gate: Gate | None = None,
             port: int | None = None) -> web.Application:
    """The app; with `gate` (the real server's, see `serve`) each request marks its connection
    busy, and a new WebSocket over the limit takes the place of the oldest viewer. `port`: the
    one it listens on, for the board's own address (default: the request's)."""
    allowed = names if names is not None else own_names(hosts)
    rate, commands = Buckets(*RATE), Buckets(*COMMAND_RATE)
    sockets: set[web.WebSocketResponse] = set()

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        if not host_allowed(request.headers.get("Host"), allowed):
            return web.Response(status=421, text="this box answers only to its own name\n")
        if not rate.take(request.remote or "?"):
            return web.Response(status=429, text="too many requests\n")
        conn = gate.conns.get(request.transport) if gate is not None and request.transport else None
        if conn is not None:
            conn.busy += 1                      # answering: not to be closed for a newcomer
        try:
            response = await handler(request)
        finally:
            if conn is not None:
                conn.busy -= 1
        response.headers.setdefault("Content-Security-Policy",
                                    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=_page(PAGES[request.path]), content_type="text/html")

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.Response(text=_static(name), content_type=STATIC[name])

    async def snapshot(request: web.Request) -> web.Response:
        if link.snapshot is None:
            return web.json_response({"error": "waiting for the box"}, status=503)
        return web.Response(text=link.snapshot, content_type="application/json")

    async def oled(request: web.Request) -> web.Response:
        if link.oled is None:
            return web.Response(status=503, text="no picture from the box yet\n")
        return web.Response(body=link.oled, content_type="image/png")

    async def ws_handler(request: web.Request) -> web.StreamResponse:
        if not same_origin(request.headers.get("Origin"), request.headers.get("Host")):
            return web.Response(status=403, text="cross-origin WebSocket refused\n")
        conn = gate.conns.get(request.transport) if gate is not None and request.transport else None
        if conn is not None:
            gate.make_room_for_viewer(conn.address, MAX_SOCKETS)    # a new screen always gets in
        elif len(sockets) >= MAX_SOCKETS:
            return web.Response(status=503, text="too many screens\n")
        ws = web.WebSocketResponse(max_msg_size=MAX_WS_MESSAGE, heartbeat=20)
        await ws.prepare(request)
        if conn is not None:
            conn.viewer = True
        sockets.add(ws)
        link.watch(len(sockets))         # beats from the hub while a page is open
        reader = asyncio.ensure_future(_drain(ws))
        try:
            sent, told = 0, None
            while not ws.closed:
                changed = link.changed
                if link.box != told:             # first, and whenever the box comes or goes
                    told = link.box
                    await asyncio.wait_for(ws.send_str(LINK_LINES[told]), 5.0)
                    continue
                if link.snapshot is not None and link.version != sent:
                    sent = link.version
                    await asyncio.wait_for(ws.send_str(link.snapshot), 5.0)
                    continue
                waiter = asyncio.ensure_future(changed.wait())
                done, _ = await asyncio.wait({reader, waiter}, timeout=PAGE_BEAT_S,
                                             return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if reader in done:
                    break
                if not done:                     # quiet: the page hears this process is alive
                    await asyncio.wait_for(ws.send_str(BEAT), 5.0)
        except (asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            sockets.discard(ws)
            link.watch(len(sockets))
            reader.cancel()
            await ws.close()
        return ws

    async def command(request: web.Request) -> web.Response:
        # The token is checked by the hub (the daemon), which alone holds it; here only its
        # shape: a header that cannot be a token (empty, too long, not URL-safe ASCII, which
        # aiohttp hands over as text with stray bytes in it) is refused before anything else.
        given = request.headers.get("X-Host-Token", "")
        if not token_text_ok(given):
            return web.json_response({"ok": False, "error": NOT_HOST}, status=403)
        if not commands.take(request.remote or "?"):
            return web.json_response({"ok": False, "error": "slow down"}, status=429)
        try:
            msg = await asyncio.wait_for(request.json(), BODY_TIMEOUT_S)
        except ValueError:
            return web.json_response({"ok": False, "error": "not JSON"}, status=400)
        if not isinstance(msg, dict):
            return web.json_response({"ok": False, "error": "a command must be a JSON object"}, status=400)
        try:
            reply = await link.command(msg, given)
        except CommandError as err:
            return web.json_response({"ok": False, "error": str(err)}, status=400)
        except (ConnectionError, asyncio.TimeoutError) as err:
            return web.json_response({"ok": False, "error": str(err) or "the box did not answer"},
                                     status=503)
        if reply.get("denied"):
            return web.json_response({"ok": False, "error": NOT_HOST}, status=403)
        ok = bool(reply.get("ok"))
        body: dict[str, Any] = {"ok": ok, "error": reply.get("error", "")}
        if ok and "saved" in reply:
            body["saved"] = reply["saved"] is True
        return web.json_response(body, status=200 if ok else 400)

    def join_url(request: web.Request) -> str:
        # The scoreboard's address as the OLED's board QR carries it: by IP once known (Android
        # phones often cannot resolve NAME.local), else by name. Never the host's link: the
        # token is the daemon's alone and this process never has it.
        board = board_url(port or request.url.port or 80)
        try:
            return address_url(board, link.address() if link.address is not None else "")
        except CommandError:
            return board

    async def join(request: web.Request) -> web.Response:
        return web.json_response({"url": join_url(request)})

    async def join_svg(request: web.Request) -> web.Response:
        return web.Response(body=_qr_svg(join_url(request)), content_type="image/svg+xml")

    async def games(request: web.Request) -> web.Response:
        # The host's remote builds its game and option controls from what each game declares.
        return web.json_response(_games())

    async def history(request: web.Request) -> web.Response:
        from .history import history_page
        from .evening import evenings_section
        text = await asyncio.get_running_loop().run_in_executor(
            None, lambda: history_page(Path(state_dir), evenings_section(Path(state_dir))))
        return web.Response(text=text, content_type="text/html")

    async def evening(request: web.Request) -> web.Response:
        from .evening import evening_view
        view = await asyncio.get_running_loop().run_in_executor(None, evening_view, Path(state_dir))
        return web.json_response(view)

    async def evening_page(request: web.Request) -> web.Response:
        return web.Response(text=_static("evening.html"), content_type="text/html")

    async def start_link(app: web.Application) -> Any:
        task = asyncio.ensure_future(link.run())
        yield
        task.cancel()
        for ws in list(sockets):
            await ws.close()

    async def close_screens(app: web.Application) -> None:
        # SIGTERM (board): every browser's WebSocket is closed at once ("going away": the page
        # says it is reconnecting), so that no handler is left waiting for a snapshot and the
        # process stops at once rather than after the shutdown timeout.
        closing = [asyncio.ensure_future(ws.close(code=WSCloseCode.GOING_AWAY, message=b"restarting"))
                   for ws in list(sockets)]
        if closing:
            await asyncio.wait(closing, timeout=SHUTDOWN_S / 2)

    app.on_shutdown.append(close_screens)
    app.cleanup_ctx.append(start_link)
    app.router.add_get("/", page)
    app.router.add_get("/host", page)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/api/snapshot", snapshot)
    app.router.add_get("/oled.png", oled)
    app.router.add_get("/ws", ws_handler)
    app.router.add_post("/api/command", command)
    app.router.add_get("/history", history)
    app.router.add_get("/evening", evening_page)
    app.router.add_get("/api/evening", evening)
    app.router.add_get("/api/games", games)
    app.router.add_get("/api/join", join)
    app.router.add_get("/join.svg", join_svg)
    return app


def _qr_svg(url: str) -> bytes:
    """A QR code of `url` as SVG, dark modules on white with the quiet zone phone cameras need."""
    import io
    import segno
    out = io.BytesIO()
    segno.make_qr(url, error="m").save(out, kind="svg", scale=4, border=4, dark="#000", light="#fff",
                                       xmldecl=False, svgns=True)
    return out.getvalue()


# What the pages get besides snapshots: whether the box is alive, and a beat when nothing else
# was sent for PAGE_BEAT_S (a page that hears nothing for 3 s says it is reconnecting: this
# process, or the network to it, is gone, even without a closed connection).
LINK_LINES = {alive: json.dumps({"type": "link", "box": alive}) for alive in (False, True)}
BEAT = json.dumps({"type": "beat"})


async def _drain(ws: web.WebSocketResponse) -> None:
    """The page sends nothing we act on; reading notices close and oversized messages."""
    async for msg in ws:
        if msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
            break


_CACHE: dict[str, str] = {}


def _games() -> list[dict[str, Any]]:
    """Every game with its player range and declared options (games/*.py: `options`)."""
    return [{"name": g.name, "title": g.title, "min_players": g.min_players, "max_players": g.max_players,
             "options": [o.as_json() for o in g.options]} for g in registry.catalogue()]


def _static(name: str) -> str:
    if name not in _CACHE:
        _CACHE[name] = resources.files(__package__).joinpath("static", name).read_text()
    return _CACHE[name]


BOARD_MARK = "<!-- board.html -->\n"
VERSION_MARK = "<!-- version -->"           # the footer's: the package's version


def _page(name: str) -> str:
    """A page with the scoreboard's markup (static/board.html, one copy for the scoreboard and
    the host page: board.js draws into it on both) in place of its mark."""
    key = f"page:{name}"
    if key not in _CACHE:
        page = _static(name)
        assert BOARD_MARK in page, name
        _CACHE[key] = page.replace(BOARD_MARK, _static("board.html")).replace(VERSION_MARK, __version__)
    return _CACHE[key]


def listening_url(bind: str | None, port: int) -> str:
    """Where a browser reaches this server: the address it is bound to, or, bound to every
    address, this machine's name on the home network."""
    if bind and bind not in ("0.0.0.0", "::"):
        host = f"[{bind}]" if ":" in bind else bind
        return f"http://{host}:{port}/"
    return f"http://{socket.gethostname()}.local:{port}/"


def lan_address(bind: str | None) -> str:
    """The address phones reach this server at: the one it listens on, or (listening on every
    address) the one the machine's default route leaves from - a UDP socket's connect sends
    nothing, it only picks the route. "" when there is none (no network yet)."""
    if bind and bind not in ("0.0.0.0", "::"):
        return bind
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 9))
            return str(probe.getsockname()[0])
        except OSError:
            return ""


def main(args: Any) -> int:
    from ..config import ConfigError, load_config_arg
    from ..hub import socket_path
    try:
        config = load_config_arg(args.config)
    except ConfigError as err:
        print(f"pi-companion: {err}", file=sys.stderr)
        return 78
    logging.basicConfig(level=config.log_level.upper(), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    state_dir = args.state_dir or config.state_dir
    path = args.socket or socket_path(state_dir)
    port = args.port or config.web_port
    gate = Gate()
    app = make_app(HubLink(path, lambda: lan_address(args.bind)), state_dir, config.web_hosts, gate=gate,
                   port=port)
    log.info("big screen on %s (hub %s)", listening_url(args.bind, port), path)
    asyncio.run(serve(app, gate, args.bind, port))
    return 0


async def serve(app: web.Application, gate: Gate, host: str | None, port: int) -> None:
    """aiohttp's app behind the gate (web/gate.py) until SIGTERM or SIGINT. Not `web.run_app`:
    the gate must see every connection before aiohttp does."""
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(gate.exception_handler)
    gate.quiet(logging.getLogger("aiohttp.server"))
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=IDLE_S, handle_signals=False,
                            shutdown_timeout=SHUTDOWN_S)
    await runner.setup()
    listener = socket.create_server((host or "0.0.0.0", port), backlog=LISTEN_QUEUE,
                                    family=socket.AF_INET6 if host and ":" in host else socket.AF_INET)
    server = await loop.create_server(gate.factory(runner.server), sock=listener, backlog=BACKLOG)
    # asyncio listens with `backlog`, which is also how many it accepts at once (and so bounds
    # the descriptors being closed); the kernel's queue of connections not yet accepted can be
    # deeper: a new screen's connection then waits its turn behind an attacker's instead of
    # being dropped and retried by its browser a second or three later.
    listener.listen(LISTEN_QUEUE)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        server.close()
        await runner.cleanup()
