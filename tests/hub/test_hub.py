"""The web hub: a box on mock pins publishes numbered snapshots on a Unix socket and takes host
commands as logged inputs (undoable, resumed after a power cut); slow clients are dropped."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from helpers.common import Clock, VirtualFactory, VirtualPin, wait_for
from helpers import boxes
from helpers.boxes import attach_hub
from helpers.hub_client import HubLines
from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.gamelog import GameLog
from pi_companion.hub import CommandError, parse_command
from pi_companion.hub.server import Hub
from pi_companion.hw.pinmap import load_pinmap

PLAYERS = ("Ada", "Ben", "Cy")


class HubClient:
    """A raw client of the hub socket as the web process is one: a board connection for the
    snapshots and, given a token, a host connection for the commands."""

    def __init__(self, path, token=None, pump=None):
        self.token = token                     # sent with each command (the hub checks it)
        self.pump = pump                       # the box's, while a command waits for its answer
        self.board = HubLines(path, "board")
        self.sock = self.board.sock
        self.host = HubLines(path, "host") if token is not None else None
        self.snapshots: list[dict] = []
        self.other: list[dict] = []

    def _seen(self, msg):
        (self.snapshots if msg["type"] == "snapshot" else self.other).append(msg)

    def read_until(self, predicate, timeout=3.0):
        return self.board.read_until(predicate, self._seen, timeout)

    def snapshot(self, predicate=lambda s: True):
        return self.read_until(lambda m: m["type"] == "snapshot" and predicate(m))

    def command(self, **msg):
        if self.token is not None:
            msg.setdefault("token", self.token)
        lines = self.host or self.board
        lines.sock.sendall(json.dumps(msg).encode() + b"\n")
        return lines.reply(msg.get("id"), self.pump, self._seen)

    def close(self):
        self.board.sock.close()
        if self.host is not None:
            self.host.sock.close()


def logged(state_dir):
    """The records of the game log, read through the store's own loader."""
    loaded = GameLog(state_dir).load()
    assert loaded is not None
    return loaded[1]


def make_box(state_dir, store=True):
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    config = Config(players=PLAYERS, seed=1, sound=False)
    box = boxes.make_box(factory, config=config, store=GameLog(state_dir) if store else None)
    return box, factory


@pytest.fixture
def rig(tmp_path):
    box, factory = make_box(tmp_path)
    hub = attach_hub(box, tmp_path)
    hub.start()
    box.pump()
    yield box, factory, hub, tmp_path
    hub.close()
    box.close()
    factory.reset()


def press(box, factory, button, t, hold=0.05):
    pin = factory.pin(load_pinmap()[button])
    Clock.now = t
    pin.drive_low()
    box.pump()
    Clock.now = t + hold
    pin.drive_high()
    box.pump()


def at(box, t):
    Clock.now = t
    box.queue.put(Wake())
    box.pump()


def test_snapshots_follow_presses_with_margins_and_undo(rig):
    box, factory, hub, _ = rig
    client = HubClient(hub.path, hub.token, box.pump)
    try:
        first = client.snapshot()
        assert first["game"] == "grab-bag" and [p["name"] for p in first["players"]] == list(PLAYERS)
        assert first["buzz"] is None and first["players"][0]["turn"]          # Ada is Grab Master
        pins = load_pinmap()
        Clock.now = 1.0
        factory.pin(pins["P3"]).drive_low()          # Cy first ...
        Clock.now = 1.0012
        factory.pin(pins["P2"]).drive_low()          # ... Ben 1.2 ms later, inside the settle window
        box.pump()
        at(box, 1.01)
        snap = client.snapshot(lambda s: s["buzz"] is not None)
        assert snap["seq"] > first["seq"]
        assert snap["buzz"]["winner"] == "Cy"
        assert [(o["player"], o["after_ms"]) for o in snap["buzz"]["order"]] == [("Cy", 0.0), ("Ben", 1.2)]
        factory.pin(pins["P3"]).drive_high()
        factory.pin(pins["P2"]).drive_high()
        box.pump()
        press(box, factory, "YES", 2.0)
        snap = client.snapshot(lambda s: s["players"][2]["score"] == 1)
        assert snap["score_label"] == "cards"
        assert client.command(id=1, cmd="undo")["ok"]
        box.pump()
        snap = client.snapshot(lambda s: s["players"][2]["score"] == 0)
        assert "Undone" in snap["notice"]
    finally:
        client.close()


def test_host_commands_are_logged_inputs_that_survive_a_resume(rig):
    box, factory, hub, state_dir = rig
    client = HubClient(hub.path, hub.token, box.pump)
    try:
        assert client.command(id="r", cmd="rename", player=1, name="Bea")["ok"]
        box.pump()
        client.snapshot(lambda s: s["players"][1]["name"] == "Bea")
        press(box, factory, "P2", 1.0)
        at(box, 1.1)
        assert client.command(id=2, cmd="yes")["ok"]
        box.pump()
        client.snapshot(lambda s: s["players"][1]["score"] == 1)
        refused = client.command(id=3, cmd="rename", player=0, name="Bea")
        assert not refused["ok"] and "already playing" in refused["error"]
    finally:
        client.close()
    assert box.store.flush()
    lines = logged(state_dir)
    hosts = [r for r in lines if "host" in r]
    assert [r["host"] for r in hosts] == ["rename", "yes"] and hosts[0]["name"] == "Bea"
    before = box.engine.report()
    box.store.close()                                      # the power goes
    again, f2 = make_box(state_dir)
    try:
        assert again.resumed and again.engine.report() == before
        assert again.engine.players == ("Ada", "Bea", "Cy")
        again.put_host_command(parse_command({"cmd": "undo"}, again.engine.players))
        again.pump()                                        # undo reaches the host's YES after resume
        assert again.engine.report()["scores"]["Bea"] == 0
    finally:
        again.close()
        f2.reset()


def test_a_new_game_from_the_host_keeps_the_new_names(rig):
    box, _, hub, state_dir = rig
    client = HubClient(hub.path, hub.token, box.pump)
    try:
        assert client.command(id=1, cmd="rename", player=2, name="Cyd")["ok"]
        box.pump()
        assert client.command(id=2, cmd="switch", game="hands-up", options={"beat_ms": 700})["ok"]
        box.pump()
        snap = client.snapshot(lambda s: s["game"] == "hands-up")
        assert [p["name"] for p in snap["players"]] == ["Ada", "Ben", "Cyd"]
        assert box.engine.options == {"beat_ms": 700}
        assert box.store.flush()
        header = GameLog(state_dir).load()[0]
        assert header["game"] == "hands-up" and header["players"][2] == "Cyd"
    finally:
        client.close()


@pytest.mark.parametrize("msg, error", [
    ({"cmd": "buzz", "player": 0}, "unknown command"),           # no network path decides a buzz
    ({"cmd": "shutdown"}, "unknown command"),
    ({"cmd": "rename", "player": 7, "name": "X"}, "player must be"),
    ({"cmd": "rename", "player": 0, "name": "x" * 40}, "name must be"),
    ({"cmd": "switch", "game": "chess"}, "unknown game"),
    ({"cmd": "switch", "game": "hands-up", "options": {"beat_ms": "fast"}}, "beat_ms"),
    (["yes"], "JSON object"),
])
def test_bad_commands_are_refused_with_a_reason(msg, error):
    with pytest.raises(CommandError, match=error):
        parse_command(msg, PLAYERS)


def test_garbage_on_the_socket_gets_an_error_and_the_box_plays_on(rig):
    box, factory, hub, _ = rig
    client = HubClient(hub.path, hub.token, box.pump)
    try:
        client.sock.sendall(b"{not json\n")
        reply = client.read_until(lambda m: m["type"] == "reply" and m["id"] is None)
        assert not reply["ok"] and reply["error"] == "not JSON"
        client.sock.sendall(b"x" * 10000)                  # an endless line: dropped
        with pytest.raises((EOFError, ConnectionResetError)):
            client.read_until(lambda m: False)
    finally:
        client.close()
    other = HubClient(hub.path, hub.token, box.pump)
    try:
        assert other.snapshot()["game"] == "grab-bag"
        assert other.command(id=1, cmd="no")["ok"]
    finally:
        other.close()


def test_a_stuck_client_is_dropped_and_a_reconnect_gets_the_latest_at_once(tmp_path):
    box, factory = make_box(tmp_path, store=False)
    hub = attach_hub(box, tmp_path, buffer_limit=32 * 1024)
    hub.start()
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(str(hub.path))                           # ... and never reads
    stuck.sendall(b'{"cmd": "hello", "role": "board"}\n')
    reader = HubClient(hub.path)
    try:
        assert wait_for(lambda: len(hub.clients) == 2)
        frame = None
        pad = "x" * 4000                         # 4 KB snapshots: over 1 MB for the stuck client
        for i in range(3000):
            box.engine.notice = f"{pad}{i}"
            hub.on_draw(box.engine, frame)       # a loop blocked by the stuck client never ends
            if i % 10 == 0:                      # the hub sends at least these (it coalesces)
                reader.snapshot(lambda s, i=i: s["notice"] == f"{pad}{i}")
        assert wait_for(lambda: hub.dropped >= 1 and len(hub.clients) == 1)
        last = reader.snapshot(lambda s: s["notice"] == f"{pad}2999")
        late = HubClient(hub.path)
        try:
            assert late.snapshot()["seq"] == last["seq"]      # the first thing it reads
            assert not [m for m in late.other if m["type"] == "token"]   # never sent
        finally:
            late.close()
    finally:
        stuck.close()
        reader.close()
        hub.close()
        box.close()
        factory.reset()


def test_the_host_token_persists_and_new_host_rotates_it(tmp_path):
    box, factory = make_box(tmp_path, store=False)
    try:
        hub = Hub(tmp_path / "hub.sock", tmp_path)
        token = hub.token
        assert len(token) >= 12 and (tmp_path / "host-token").stat().st_mode & 0o077 == 0
        assert Hub(tmp_path / "hub2.sock", tmp_path).token == token
        hub.rotate_token()
        assert hub.token != token and Hub(tmp_path / "hub3.sock", tmp_path).token == hub.token
    finally:
        box.close()
        factory.reset()


def test_the_host_token_is_saved_in_a_state_directory_not_made_yet(tmp_path):
    """A first start with a new state directory: the hub comes up before the game log's writer
    has made the directory, and the web process reads the token from it."""
    box, factory = make_box(tmp_path, store=False)
    state = tmp_path / "new" / "state"
    try:
        hub = Hub(tmp_path / "hub.sock", state)
        assert (state / "host-token").read_text().strip() == hub.token
    finally:
        box.close()
        factory.reset()


def test_the_loop_never_writes_to_a_client_however_many_are_connected(rig, monkeypatch):
    """The loop's part of a snapshot is the same for 1 client or 32: it builds the view once and
    wakes the hub thread, which alone writes to the clients (the fan-out is off the loop
    thread, so a client can only cost the hub, never the buzzers). Here the test thread is the
    loop (it pumps the box) while the hub's limit of clients reads."""
    from pi_companion.hub.server import MAX_CLIENTS
    box, factory, hub, _ = rig
    writers = []
    real_send = Hub._send

    def send(self, client, data):
        writers.append(threading.current_thread().name)
        real_send(self, client, data)
    monkeypatch.setattr(Hub, "_send", send)
    clients = [HubClient(hub.path) for _ in range(MAX_CLIENTS)]
    try:
        for client in clients:
            client.snapshot()
        assert wait_for(lambda: len(hub.clients) == MAX_CLIENTS)
        before = len(writers)
        press(box, factory, "P2", 1.0)
        at(box, 1.01)
        for client in clients:
            assert client.snapshot(lambda s: s["buzz"] is not None)["buzz"]["winner"] == "Ben"
        assert len(writers) - before >= MAX_CLIENTS
        assert set(writers) == {"web-hub"}              # never the loop (this test's) thread
    finally:
        for client in clients:
            client.close()


def test_beats_go_only_to_a_client_that_watches_and_stop_when_it_stops(rig):
    # An idle box with the web process connected but no page open must not wake every 0.5 s:
    # the hub beats only to a client that said it watches (the web process, while a page is
    # open), at once when it starts and every BEAT_S after; nothing once it stops.
    box, factory, hub, tmp_path = rig
    client = HubClient(tmp_path / "hub.sock")
    client.snapshot()                                       # the hello
    with pytest.raises(AssertionError, match="no such message"):
        client.read_until(lambda m: m["type"] == "beat", timeout=1.3)   # 2 beats were due
    client.sock.sendall(b'{"cmd": "watch", "on": true, "id": 7}\n')
    t0 = time.monotonic()
    client.read_until(lambda m: m["type"] == "reply" and m["id"] == 7 and m["ok"])
    client.read_until(lambda m: m["type"] == "beat")        # the first one at once
    assert time.monotonic() - t0 < 0.4
    for _ in range(2):
        client.read_until(lambda m: m["type"] == "beat", timeout=1.5)
    client.sock.sendall(b'{"cmd": "watch", "on": false, "id": 8}\n')
    client.read_until(lambda m: m["type"] == "reply" and m["id"] == 8)
    client.other.clear()
    with pytest.raises(AssertionError, match="no such message"):
        client.read_until(lambda m: m["type"] == "beat", timeout=1.3)
    assert hub.clients and not any(c.watching for c in hub.clients.values())
    client.close()
