"""The web process against a box on mock pins through the real hub socket (aiohttp's test client):
the scoreboard follows presses, host commands go through the box's log, and the security
rules refuse a wrong token, a foreign Host, a cross-origin upgrade and oversized requests."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import WSServerHandshakeError
from aiohttp.test_utils import TestClient, TestServer

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers.boxes import attach_hub, make_box
from pi_companion.box import Wake
from pi_companion.core.records import to_record
from pi_companion.gamelog import GameLog
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.replay import load_scenario
from pi_companion.web.server import HubLink, host_allowed, make_app, same_origin

DOCS = Path(__file__).parents[2] / "docs" / "scenarios"


@pytest.fixture
def box(tmp_path):
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, tmp_path)
    hub = attach_hub(box, tmp_path)
    hub.start()
    box.pump()
    box.hub = hub
    yield box
    hub.close()
    box.close()
    factory.reset()


def run(box, tmp_path, body):
    """Run `body(client)` against the web app wired to the box's hub. The box runs no loop of its
    own (the virtual clock stands still): while the body awaits, its queue is pumped, so that a
    command is handled, saved and answered as the live loop would."""
    async def keep_pumping():
        while True:
            await asyncio.sleep(0.01)
            box.pump()

    async def main():
        link = HubLink(box.hub.path)
        app = make_app(link, tmp_path, names={"localhost", "box.local"})
        async with TestClient(TestServer(app)) as client:
            await asyncio.wait_for(link.connected.wait(), 3)
            for _ in range(100):
                if link.snapshot is not None:
                    break
                await asyncio.sleep(0.01)
            pumping = asyncio.ensure_future(keep_pumping())
            try:
                await body(client, link)
            finally:
                pumping.cancel()
    asyncio.run(main())


async def until(ws, predicate):
    while True:
        msg = json.loads(await asyncio.wait_for(ws.receive_str(), 3))
        if msg.get("type") == "snapshot" and predicate(msg):     # not the link's state, a beat
            return msg


async def pump(box):
    """The box loop's turn (the tests drive it by hand, on the virtual clock)."""
    await asyncio.sleep(0.02)                 # let the hub's command reach the queue
    box.pump()


def test_the_scoreboard_follows_a_press_and_a_reconnect_gets_the_latest(box, tmp_path):
    async def body(client, link):
        ws = await client.ws_connect("/ws")
        first = await until(ws, lambda s: True)
        assert first["game"] == "grab-bag" and first["buzz"] is None
        Clock.now = 1.0
        factory = box.factory
        factory.pin(load_pinmap()["P2"]).drive_low()
        box.pump()
        Clock.now = 1.1
        box.queue.put(Wake())
        box.pump()
        snap = await until(ws, lambda s: s["buzz"] is not None)
        assert snap["buzz"]["winner"] == "Ben" and snap["seq"] > first["seq"]
        await ws.close()
        again = await client.ws_connect("/ws")
        latest = await until(again, lambda s: True)           # at once, without a new change
        assert latest["seq"] == snap["seq"]
        await again.close()
        page = await client.get("/")
        assert page.status == 200 and "board.js" in await page.text()
        assert "default-src 'self'" in page.headers["Content-Security-Policy"]
        png = await client.get("/oled.png")
        assert png.status == 200 and (await png.read()).startswith(b"\x89PNG")
    run(box, tmp_path, body)


def test_the_scoreboard_and_the_host_page_carry_the_same_board(box, tmp_path):
    """board.js draws the same board on both pages: the host page once had an older copy of the
    wind dial's markup, so drawing threw there and the names never came."""
    async def body(client, link):
        pages = [await (await client.get(path)).text() for path in ("/", "/host")]
        for text in pages:
            assert '<line class="needle"' in text and 'id="wind-count"' in text
            assert 'id="players"' in text and "<!--" not in text
    run(box, tmp_path, body)


def test_host_commands_need_the_token_and_go_through_the_log(box, tmp_path):
    async def body(client, link):
        cmd = {"cmd": "rename", "player": 0, "name": "Ava"}
        for headers in ({}, {"X-Host-Token": "wrong"}, {"X-Host-Token": box.hub.token + "x"}):
            r = await client.post("/api/command", json=cmd, headers=headers)
            assert r.status == 403
        r = await client.post("/api/command", json=cmd, headers={"X-Host-Token": box.hub.token})
        assert r.status == 200 and (await r.json())["ok"]
        await pump(box)
        assert box.engine.players[0] == "Ava"
        bad = await client.post("/api/command", json={"cmd": "buzz", "player": 1},
                                headers={"X-Host-Token": box.hub.token})
        assert bad.status == 400 and "unknown command" in (await bad.json())["error"]
    run(box, tmp_path, body)
    assert box.store.flush()
    records = GameLog(tmp_path).load()[1]
    assert {"host": "rename", "player": 0, "name": "Ava"}.items() <= records[-1].items()


def test_a_foreign_host_header_is_refused(box, tmp_path):
    async def body(client, link):
        for host in ("evil.example", "box.local.evil.example", ""):
            r = await client.get("/api/snapshot", headers={"Host": host})
            assert r.status in (400, 421), host
        for host in ("box.local:8080", "localhost", "192.168.1.20:8080", "[::1]:8080"):
            r = await client.get("/api/snapshot", headers={"Host": host})
            assert r.status == 200, host
    run(box, tmp_path, body)


def test_a_cross_origin_websocket_upgrade_is_refused(box, tmp_path):
    async def body(client, link):
        with pytest.raises(WSServerHandshakeError) as err:
            await client.ws_connect("/ws", headers={"Origin": "http://evil.example"})
        assert err.value.status == 403
        host = f"{client.host}:{client.port}"
        ws = await client.ws_connect("/ws", headers={"Origin": f"http://{host}"})
        assert (await until(ws, lambda s: True))["type"] == "snapshot"
        await ws.close()
    run(box, tmp_path, body)


def test_oversized_requests_and_floods_are_refused(box, tmp_path):
    async def body(client, link):
        token = {"X-Host-Token": box.hub.token}
        big = {"cmd": "rename", "player": 0, "name": "x" * 10000}
        r = await client.post("/api/command", json=big, headers=token)
        assert r.status == 413
        ws = await client.ws_connect("/ws")
        await until(ws, lambda s: True)
        await ws.send_str("x" * 5000)
        msg = await ws.receive(timeout=3)
        assert ws.closed or msg.type.name in ("CLOSE", "CLOSED")
        statuses = [(await client.post("/api/command", json={"cmd": "no"}, headers=token)).status
                    for _ in range(30)]
        assert 429 in statuses and statuses[0] == 200
    run(box, tmp_path, body)


def test_the_token_counts_only_in_its_header_compared_in_constant_time(box, tmp_path, monkeypatch):
    """A token anywhere but `X-Host-Token` (a URL's query, which ends in browser history and
    server logs; a cookie; an Authorization header) is no token; the header's is compared with
    hmac.compare_digest (time independent of where a guess goes wrong) by the hub, in the daemon."""
    import hmac

    compared, real = [], hmac.compare_digest

    def compare_digest(a, b):
        compared.append((a, b))
        return real(a, b)
    monkeypatch.setattr(hmac, "compare_digest", compare_digest)   # hub imports it when used

    async def body(client, link):
        token = box.hub.token
        cmd = {"cmd": "rename", "player": 0, "name": "Ava"}
        for url, headers in ((f"/api/command?token={token}", {}), (f"/api/command?t={token}", {}),
                             ("/api/command", {"Cookie": f"t={token}; token={token}"}),
                             ("/api/command", {"Authorization": f"Bearer {token}"})):
            r = await client.post(url, json=cmd, headers=headers)
            assert r.status == 403, url
        assert all(given != token.encode() for given, _ in compared)
        compared.clear()
        r = await client.post("/api/command", json=cmd, headers={"X-Host-Token": token})
        assert r.status == 200 and compared == [(token.encode(), token.encode())]
    run(box, tmp_path, body)


def test_a_flood_of_page_requests_is_refused_per_address(box, tmp_path):
    """20 requests/s per address with a burst of 60: a flood gets 429, not the box's attention."""
    async def body(client, link):
        statuses = []
        while 429 not in statuses and len(statuses) < 2000:
            statuses.append((await client.get("/api/snapshot")).status)
        assert statuses[-1] == 429 and set(statuses[:-1]) == {200} and len(statuses) > 60
    run(box, tmp_path, body)


def test_oled_png_mirrors_the_oled(tmp_path):
    """/oled.png is the frame on the OLED, pixel for pixel (luma's dummy device keeps it)."""
    import io

    from PIL import Image

    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, tmp_path, display="dummy")
    hub = attach_hub(box, tmp_path)
    hub.start()
    box.pump()
    box.hub = hub
    try:
        Clock.now = 1.0
        factory.pin(load_pinmap()["P2"]).drive_low()
        box.pump()
        Clock.now = 1.1
        box.queue.put(Wake())
        box.pump()
        shown = box.display.device.image.convert("1").tobytes()

        async def body(client, link):
            for _ in range(300):
                r = await client.get("/oled.png")
                png = Image.open(io.BytesIO(await r.read()))
                if png.convert("1").tobytes() == shown:
                    break
                await asyncio.sleep(0.01)
            assert r.status == 200 and r.content_type == "image/png" and png.size == (128, 64)
            assert png.convert("1").tobytes() == shown
            assert "Ben" in box.engine.report()["last_buzz"]["winner"]
        run(box, tmp_path, body)
    finally:
        hub.close()
        box.close()
        factory.reset()


def test_the_history_lists_finished_games_with_per_player_totals(box, tmp_path):
    hist = tmp_path / "history"
    hist.mkdir()
    for name in ("grab-bag-two-players-to-the-end", "hold-everything-win"):
        scenario = load_scenario(json.loads((DOCS / f"{name}.json").read_text()))
        header = {"v": 1, "game": scenario.game, "players": list(scenario.players),
                  "options": scenario.options, "seed": scenario.seed}
        lines = [header] + [to_record(e) for e in scenario.events]
        if scenario.end is not None:
            lines.append({"t": scenario.end, "advance": 1})
        (hist / f"{name}.log").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (hist / "broken.log").write_text("{not json\n")

    async def body(client, link):
        r = await client.get("/history")
        text = await r.text()
        assert r.status == 200
        assert "Grab Bag" in text and "Hold Everything!" in text
        expected = json.loads((DOCS / "grab-bag-two-players-to-the-end.expected.json").read_text())
        assert f"&#9733; {', '.join(expected['winners'])}</td>" in text
        totals = text.split("<h2>Games</h2>")[0]
        # both games, both won; one buzz each (nobody else pressed in it: no margin)
        assert "<tr><td>Ada</td><td>2</td><td>2</td><td>1</td><td>-</td></tr>" in totals
        assert "<tr><td>Ben</td><td>2</td><td>1</td><td>1</td><td>-</td></tr>" in totals
    run(box, tmp_path, body)


def test_history_counts_buzz_wins_and_their_median_margin_across_games(tmp_path):
    """Grab Bag logs played out on the engine: in each buzz the first seeker presses, a second one
    `gap` ms later; the history's totals count the buzzes each player won and the median of
    their margins, across games; an unfinished game counts for nothing."""
    import statistics

    from pi_companion.games import registry
    from pi_companion.core.events import Edge
    from pi_companion.web.history import history
    hist = tmp_path / "history"
    hist.mkdir()
    won: dict[str, list[float]] = {}
    for number, (gaps, finish) in enumerate((((3.0, 7.5, 4.0), True), ((2.5, 9.0), True), ((1.0,), False)), 1):
        engine = registry.new_engine("grab-bag", ("Ada", "Ben", "Cy"), {"cards": 3}, number)
        records = [{"v": 1, "game": "grab-bag", "players": ["Ada", "Ben", "Cy"], "options": {"cards": 3},
                    "seed": number}]
        t, i = 1.0, 0

        def feed(event):
            records.append(to_record(event))
            engine.feed(event)
        mine = {}
        while not engine.rules.is_over(engine.game) and (finish or i < len(gaps)):
            seekers = sorted(engine.rules.buzzers(engine.game))
            gap = gaps[i % len(gaps)]
            i += 1
            first, second = seekers[i % len(seekers)], seekers[(i + 1) % len(seekers)]
            feed(Edge(t, f"P{first + 1}", True))
            feed(Edge(t + gap / 1000, f"P{second + 1}", True))
            feed(Edge(t + 0.2, f"P{first + 1}", False))
            feed(Edge(t + 0.2, f"P{second + 1}", False))
            mine.setdefault(engine.players[first], []).append(gap)
            feed(Edge(t + 0.5, "YES", True))
            feed(Edge(t + 0.6, "YES", False))
            t += 2.0
        if finish:
            assert engine.rules.is_over(engine.game)
            for name, gaps_won in mine.items():
                won.setdefault(name, []).extend(gaps_won)
        (hist / f"game-{number:06d}-20261201-2000{number:02d}.log").write_text(
            "".join(json.dumps(x) + "\n" for x in records))
    games, totals = history(tmp_path)
    assert len(games) == 2
    for name, gaps_won in won.items():
        assert totals[name]["buzzes"] == len(gaps_won), (name, totals)
        assert totals[name]["margin_ms"] == pytest.approx(statistics.median(gaps_won), abs=0.01), (name, totals)
    assert sum(t["buzzes"] for t in totals.values()) == sum(len(g) for g in won.values())


@pytest.mark.parametrize("header, ok", [
    ("box.local", True), ("BOX.LOCAL:80", True), ("10.0.0.7", True), ("[fe80::1]:8080", True),
    ("attacker.com", False), ("box.local@evil", False), (None, False),
])
def test_host_rule(header, ok):
    assert host_allowed(header, {"box.local"}) is ok


def test_origin_rule():
    assert same_origin(None, "box.local:8080")
    assert same_origin("http://box.local:8080", "box.local:8080")
    assert not same_origin("http://box.local:8080.evil", "box.local:8080")
    assert not same_origin("null", "box.local:8080")


def test_web_config_keys_are_checked():
    from pi_companion.config import ConfigError, parse_config
    config = parse_config({"web": {"enabled": True, "port": 8081, "hosts": ["Box.lan"]}})
    assert (config.web_enabled, config.web_port, config.web_hosts) == (True, 8081, ("box.lan",))
    assert parse_config({}).web_enabled is False
    for bad, key in (({"enabled": "yes"}, "web.enabled"), ({"port": 80}, "web.port"),
                     ({"hosts": "box"}, "web.hosts"), ({"power": True}, "web.power")):
        with pytest.raises(ConfigError, match=key):
            parse_config({"web": bad})


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_daemon_and_the_web_process_end_to_end(tmp_path):
    """The real `run` with web.enabled and the real `web` process: a host rename over HTTP lands
    in the daemon's log; the scoreboard sees it."""
    import os
    import subprocess
    import sys
    import time
    import urllib.request
    from urllib.error import HTTPError
    config = tmp_path / "config.toml"
    config.write_text('[box]\nplayers = ["Ada", "Ben"]\n[web]\nenabled = true\n')
    env = {**os.environ, "RUNTIME_DIRECTORY": str(tmp_path / "run")}
    (tmp_path / "run").mkdir()
    state = tmp_path / "state"
    daemon = subprocess.Popen([sys.executable, "-m", "pi_companion", "run", "--pins", "mock",
                               "--display", "dummy", "--config", str(config), "--state-dir", str(state)],
                              env=env, stderr=subprocess.PIPE, text=True)
    port = free_port()
    webp = subprocess.Popen([sys.executable, "-m", "pi_companion", "web", "--config", str(config),
                             "--state-dir", str(state), "--bind", "127.0.0.1", "--port", str(port)],
                            env=env, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        snap = None
        for _ in range(150):
            try:
                snap = json.load(urllib.request.urlopen(base + "/api/snapshot", timeout=2))
                break
            except (OSError, HTTPError):
                time.sleep(0.1)
        assert snap is not None and [p["name"] for p in snap["players"]] == ["Ada", "Ben"]
        token = (state / "host-token").read_text().strip()
        req = urllib.request.Request(base + "/api/command", method="POST",
                                     data=json.dumps({"cmd": "rename", "player": 1, "name": "Bo"}).encode(),
                                     headers={"X-Host-Token": token, "Content-Type": "application/json"})
        assert json.load(urllib.request.urlopen(req, timeout=5))["ok"]
        for _ in range(100):
            snap = json.load(urllib.request.urlopen(base + "/api/snapshot", timeout=2))
            if snap["players"][1]["name"] == "Bo":
                break
            time.sleep(0.05)
        assert snap["players"][1]["name"] == "Bo"
        log = (state / "current.log").read_text()
        assert '"host":"rename"' in log and '"name":"Bo"' in log
        assert (tmp_path / "run" / "hub.sock").exists()
    finally:
        for proc in (webp, daemon):
            proc.terminate()
            proc.wait(timeout=10)
    assert daemon.returncode == 0


def test_web_with_a_missing_config_says_so_in_one_line(tmp_path):
    from helpers.common import run_cli
    missing = str(tmp_path / "typo.toml")
    out = run_cli("web", "--config", missing, "--port", str(free_port()))
    assert out.returncode == 78 and out.stderr.count("\n") == 1 and f"{missing}: no such file" in out.stderr


def test_the_web_process_stops_within_2_s_of_sigterm_with_screens_open(tmp_path):
    """The real `pi-companion web` (it took 27-33 s with a browser open): three WebSockets held
    open, one of them never reading, then SIGTERM; the process is gone within 2 s, exit 0."""
    import signal
    import time

    import aiohttp

    from pi_companion.web.live import live_box

    with live_box(tmp_path / "state") as live:
        async def hold_and_stop():
            async with aiohttp.ClientSession() as session:
                sockets = [await session.ws_connect(live.base.replace("http:", "ws:") + "/ws") for _ in range(3)]
                for ws in sockets[:2]:
                    assert json.loads((await ws.receive()).data)["type"] == "link"
                began = time.monotonic()
                live.web.send_signal(signal.SIGTERM)
                while live.web.poll() is None and time.monotonic() - began < 30:
                    await asyncio.sleep(0.01)
                return time.monotonic() - began
        took = asyncio.run(hold_and_stop())
        print(f"pi-companion web stopped {took * 1000:.0f} ms after SIGTERM")
        assert took < 2.0, f"pi-companion web took {took:.1f} s to stop on SIGTERM"
        assert live.web.returncode == 0


def test_the_real_web_process_asks_for_beats_only_while_a_page_is_open(tmp_path):
    """An idle box with the big screen on but nobody looking must not wake twice a second: the
    real `pi-companion web` tells the hub it watches only while a WebSocket (a page) is open, so
    the hub's beats (which let a page say "box offline" when the daemon freezes) stop with the
    last page and come back with the next."""
    import time

    import aiohttp

    from pi_companion.web.live import live_box, until

    with live_box(tmp_path / "state") as live:
        until(lambda: live.hub.clients, what="the web process never connected to the hub")
        time.sleep(0.3)
        assert not any(c.watching for c in live.hub.clients.values()), "beats asked for with no page open"

        async def a_page_open_then_closed():
            async with aiohttp.ClientSession() as session:
                ws = await session.ws_connect(live.base.replace("http:", "ws:") + "/ws")
                assert json.loads((await ws.receive()).data) == {"type": "link", "box": True}
                await asyncio.to_thread(until, lambda: any(c.watching for c in live.hub.clients.values()),
                                        3.0, "a page is open, yet the web process asks for no beats")
                await ws.close()
        asyncio.run(a_page_open_then_closed())
        until(lambda: not any(c.watching for c in live.hub.clients.values()), 3.0,
              "the last page closed, yet the web process still asks for beats")


def test_the_web_process_says_the_address_it_listens_on(tmp_path):
    """Bound to 127.0.0.1 it says so, not the machine's NAME.local, which it does not answer on."""
    import tempfile
    from pi_companion.web.live import live_box, start_web, stop_web
    with live_box(tmp_path, web=False) as live, tempfile.TemporaryFile() as log:
        web, base = start_web(tmp_path, live.hub.path, log)
        stop_web(web, 10)
        log.seek(0)
        said = [line for line in log.read().decode().splitlines() if "big screen on" in line]
    assert said == [f"INFO pi_companion.web: big screen on {base}/ (hub {live.hub.path})"], said
