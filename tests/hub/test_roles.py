"""Who may say what to the hub, as an attacker on the LAN and the hub's own clients see it.

The web process forwards to the hub only the host verbs a page may send (`protocol.FORWARDED`),
each rebuilt from its own fields; the hub gives each connection a role when it says hello and
each role a fixed set of verbs, whatever token a message carries. Here: the role table on the
real hub socket, every message kind through `POST /api/command` against the real daemon and web
processes, each LAN attack end to end, and a command answered only once it is saved."""
from __future__ import annotations

import errno
import http.client
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers.boxes import attach_hub, make_box
from helpers.hub_client import HubLines
from helpers.daemons import ready
from helpers.lan import mirrored_oled, post, qr_texts, show_host_qr

from pi_companion.gamelog import open_log
from pi_companion.hub import protocol
from pi_companion.hub.server import Hub
from pi_companion.web.live import live_box, start_web, stop_web, until

BOARD = "http://testbox.local:8080/"
TOKEN_KINDS = ("none", "wrong", "right")
UNKNOWN = ("buzz", "power", "config", "", "hello ")


# ---- the role table, on the hub's own socket ---------------------------------------------------

def Conn(path: Path, role: str) -> HubLines:
    """A client of the hub socket that has said hello as `role` and been taken."""
    conn = HubLines(path, role)
    assert conn.reply("hello")["ok"], role
    return conn


@pytest.fixture
def hub_rig(tmp_path):
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(factory, tmp_path)
    hub = attach_hub(box, tmp_path, board_url=BOARD, hotspot_path=tmp_path / "hotspot.json")
    hub.start()
    box.pump()
    yield box, hub
    hub.close()
    box.close()
    factory.reset()


def fields_for(cmd: str) -> dict:
    """Fields that make each verb valid, so that a refusal can only be the role's."""
    return {"rename": {"player": 1, "name": "Bea"}, "players": {"names": ["Ada", "Ben", "Cy"]},
            "switch": {"game": "grab-bag"}, "dial": {"delta": 1}, "menu": {"key": "x"},
            "forget": {"game": "game-000001-20261201-213000.log"}, "watch": {"on": False},
            "address": {"address": "192.168.1.66"}, "press": {"player": 0},
            "hold": {"player": 0}}.get(cmd, {})


def test_every_verb_outside_a_connections_role_is_refused_whatever_its_token(hub_rig):
    box, hub = hub_rig
    for role in protocol.ROLES:
        for cmd in sorted(protocol.KNOWN - {"hello"}):
            for kind in TOKEN_KINDS:
                conn = Conn(hub.path, role)           # a fresh one: an `auth` proves its connection
                msg = {"cmd": cmd, **fields_for(cmd)}
                if kind != "none":
                    msg["token"] = hub.token if kind == "right" else "wrong-guess"
                try:
                    reply = conn.send(msg, box.pump)
                finally:
                    conn.close()
                where = (role, cmd, kind, reply)
                if cmd not in protocol.VERBS[role]:
                    assert reply == {"type": "reply", "id": 1, "ok": False,
                                     "error": f"{cmd}: not a {role} connection's command"}, where
                elif cmd in protocol.TOKEN_VERBS and kind != "right":
                    assert reply.get("denied") is True and not reply["ok"], where
                elif cmd in ("watch", "hotspot", "auth") or cmd in protocol.HOST_COMMANDS:
                    assert reply["ok"], where
        # Only the board's own `address` (sent above on a board connection) moved the QR codes.
        assert hub.address == "http://192.168.1.66:8080/"


JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.text(max_size=12)),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)


def test_any_message_on_any_role_gets_one_answer_and_no_error_in_the_hub(hub_rig, caplog):
    """Fuzzed messages of every shape on a connection of each role: each line gets its reply (a
    refusal in one line, or the verb's answer), the hub thread logs no error and stays up."""
    box, hub = hub_rig
    conns = {role: Conn(hub.path, role) for role in protocol.ROLES}

    @settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(role=st.sampled_from(protocol.ROLES),
           cmd=st.sampled_from(sorted(protocol.KNOWN) + ["buzz", ""]) | JSON,
           fields=st.dictionaries(st.sampled_from(["player", "name", "names", "game", "options", "delta",
                                                   "key", "address", "on", "role", "token"]), JSON, max_size=3))
    def one(role, cmd, fields):
        if cmd == "auth" or cmd == "watch":
            return                                       # they change the connection itself
        reply = conns[role].send({**fields, "cmd": cmd}, box.pump)
        assert isinstance(reply["ok"], bool) and "\n" not in reply.get("error", "")
    try:
        one()
        assert "web hub error" not in caplog.text and hub.thread.is_alive()
        assert conns["board"].send({"cmd": "watch", "on": False})["ok"]
    finally:
        for conn in conns.values():
            conn.close()


def test_a_connection_says_who_it_is_first_and_once(hub_rig):
    box, hub = hub_rig
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(hub.path))
    sock.settimeout(3)
    sock.sendall(b'{"cmd": "address", "address": "192.168.1.66", "id": 1}\n')
    reply = json.loads(sock.makefile("rb").readline())
    assert not reply["ok"] and reply["error"].startswith("say who you are first")
    assert sock.recv(10) == b""                            # and it is closed
    sock.close()
    conn = Conn(hub.path, "board")
    try:
        assert conn.send({"cmd": "hello", "role": "host"}) == {
            "type": "reply", "id": 1, "ok": False, "error": "hello: said already"}
        assert conn.send({"cmd": "yes", "token": hub.token})["error"] == "yes: not a board connection's command"
    finally:
        conn.close()
    assert hub.address == "" and box.engine.report()["phase"] == "searching"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to speak as another user")
def test_the_dispatcher_role_is_only_for_root_or_the_boxs_own_user(hub_rig):
    """The web process runs as a user of its own: it cannot claim the dispatcher's role."""
    box, _ = hub_rig
    nobody = pwd.getpwnam("nobody").pw_uid
    room = Path(tempfile.mkdtemp(prefix="pi-companion-hub-"))   # a folder `nobody` may enter
    room.chmod(0o755)
    hub = Hub(room / "hub.sock", None, hotspot_path=room / "hotspot.json")
    hub.start()
    os.chmod(hub.path, 0o666)
    child = subprocess.run(
        [sys.executable, "-c",
         "import os, socket, sys, json\n"
         f"os.setuid({nobody})\n"
         "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
         "s.sendall(b'{\"cmd\": \"hello\", \"role\": \"dispatcher\", \"id\": 0}\\n')\n"
         "print(s.makefile('rb').readline().decode())\n", str(hub.path)],
        capture_output=True, text=True, timeout=30)
    reply = json.loads(child.stdout)
    assert reply == {"type": "reply", "id": 0, "ok": False,
                     "error": "dispatcher: only root or the box's own user"}, child.stderr
    conn = Conn(hub.path, "dispatcher")                    # this process: the box's own user
    try:
        assert conn.send({"cmd": "hotspot"})["ok"]
    finally:
        conn.close()
        hub.close()
        shutil.rmtree(room, ignore_errors=True)


# ---- every message kind through POST /api/command, real daemon and web process ------------------

def command(port: int, source: str, body: bytes, token: str | None) -> tuple[int, dict]:
    """POST /api/command from `source` (a loopback address of its own: the web process limits
    commands per address, and a property test sends many)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    headers = {"Content-Type": "application/json", "Host": "127.0.0.1"}
    if token is not None:
        headers["X-Host-Token"] = token
    try:
        conn.request("POST", "/api/command", body=body, headers=headers)
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


@pytest.fixture
def processes(tmp_path):
    """The real `pi-companion run` (web on) and the real `pi-companion web` in front of it."""
    config = tmp_path / "config.toml"
    config.write_text('[box]\nplayers = ["Ada", "Ben", "Cy"]\nseed = 1\n[web]\nenabled = true\n'
                      '')
    with ready(tmp_path, {"RUNTIME_DIRECTORY": ""}, args=("--config", str(config))) as (daemon, _):
        state = tmp_path / "state"
        until(lambda: (state / "host-token").exists(), 10, "no host token")
        web, base = start_web(state, state / "hub.sock")
        try:
            yield daemon, base, (state / "host-token").read_text().strip(), state
        finally:
            stop_web(web, 10)


def test_every_message_kind_through_the_page_route_is_refused_unless_a_host_verb_with_the_token(processes):
    daemon, base, token, state = processes
    port = int(base.rsplit(":", 1)[1])
    sources = iter(f"127.0.{a}.{b}" for a in range(1, 250) for b in range(2, 250))

    @settings(max_examples=90, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(cmd=st.sampled_from(sorted(protocol.KNOWN) + list(UNKNOWN)),
           kind=st.sampled_from(TOKEN_KINDS),
           extra=st.dictionaries(st.sampled_from(["address", "on", "role", "player", "name", "delta",
                                                  "key", "token", "id", "game"]),
                                 st.one_of(st.none(), st.booleans(), st.integers(-2, 3),
                                           st.sampled_from(["192.168.1.66", "x", "Eve"])), max_size=3))
    def one(cmd, kind, extra):
        given_token = {"none": None, "wrong": "wrong-guess-123", "right": token}[kind]
        status, body = command(port, next(sources), json.dumps({**extra, "cmd": cmd}).encode(), given_token)
        where = (cmd, kind, extra, status, body)
        if kind == "none":
            assert status == 403, where
        elif cmd not in protocol.FORWARDED:
            assert status == 400 and body["error"].startswith("unknown command"), where
        elif kind == "wrong":
            assert status == 403 and body == {"ok": False, "error": protocol.NOT_HOST}, where
        else:
            assert status in (200, 400), where
            if status == 200:
                assert body["saved"] is True, where
    one()
    # The hub never heard an address, a watch, an auth or a hotspot from a page: the daemon's
    # journal names no address but the web process's own, and the board is still watched.
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(timeout=15)
    journal = daemon.stderr.read()
    assert "192.168.1.66" not in journal and "hotspot" not in journal, journal[-2000:]


# ---- each attack end to end (a box on mock pins, the real web process) --------------------------

def test_a_stranger_cannot_point_the_host_qr_at_their_own_address(tmp_path):
    """The theft: `address` through the page route would put the attacker's address in the host
    QR, and the host's phone would carry the token there."""
    with live_box(tmp_path, board_url=BOARD) as live:
        body = json.dumps({"cmd": "address", "address": "192.168.1.66"}).encode()
        status, reply = post(live.base + "/api/command", body, {"X-Host-Token": "x"})
        assert status == 400 and reply["error"].startswith("unknown command"), reply
        show_host_qr(live)
        until(lambda: qr_texts(live.box.display.device.image), 5, "the OLED never drew the QR")
        assert qr_texts(live.box.display.device.image) == [f"http://127.0.0.1:8080/host#t={live.hub.token}"]


def test_a_stranger_cannot_make_every_page_say_box_offline(tmp_path):
    import asyncio
    import aiohttp

    with live_box(tmp_path) as live:
        async def page() -> list[dict]:
            seen: list[dict] = []
            async with aiohttp.ClientSession() as session:
                async with session.ws_connect(live.base + "/ws") as ws:
                    await asyncio.sleep(0.5)                  # the page is watching
                    loop = asyncio.get_running_loop()
                    body = json.dumps({"cmd": "watch", "on": False}).encode()
                    status, _ = await loop.run_in_executor(
                        None, post, live.base + "/api/command", body, {"X-Host-Token": "x"})
                    assert status == 400
                    end = loop.time() + 3.5                   # the web's silence limit is 2 s
                    while loop.time() < end:
                        try:
                            msg = await ws.receive_str(timeout=end - loop.time())
                        except asyncio.TimeoutError:
                            break
                        seen.append(json.loads(msg))
            return seen
        seen = asyncio.run(page())
        assert {"type": "link", "box": False} not in seen, seen
        ok = post(live.base + "/api/command", json.dumps({"cmd": "dial", "delta": 1}).encode(),
                  {"X-Host-Token": live.hub.token})
        assert ok[0] == 200, ok


def test_the_token_does_not_make_the_web_processs_link_see_the_host_qr(tmp_path):
    with live_box(tmp_path, board_url=BOARD) as live:
        status, reply = post(live.base + "/api/command", b'{"cmd": "auth"}', {"X-Host-Token": live.hub.token})
        assert status == 400 and reply["error"].startswith("unknown command"), reply
        show_host_qr(live)
        assert qr_texts(mirrored_oled(live, live.box.display.device.image)) == []


# ---- "done" only once saved -------------------------------------------------------------------

def test_a_command_is_answered_only_once_its_record_is_durable(tmp_path, monkeypatch):
    """The disk takes 0.4 s to sync: the page's "done" comes after that, never before."""
    real = os.fdatasync
    synced: list[float] = []

    def slow(fd):
        if threading.current_thread().name == "game-log":
            time.sleep(0.4)
        real(fd)
        synced.append(time.monotonic())
    monkeypatch.setattr(os, "fdatasync", slow)
    with live_box(tmp_path) as live:
        store = live.box.store
        for i, name in enumerate(("Bea", "Bo", "Bix")):
            sent = time.monotonic()
            status, reply = post(live.base + "/api/command",
                                 json.dumps({"cmd": "rename", "player": 1, "name": name}).encode(),
                                 {"X-Host-Token": live.hub.token})
            answered = time.monotonic()
            assert status == 200 and reply == {"ok": True, "error": "", "saved": True}, reply
            assert store.durable >= store.seq, (i, store.durable, store.seq)
            assert any(sent < t <= answered for t in synced), i
            with open_log(store.path) as reader:
                assert any(r.get("name") == name for r in reader.records())


def test_a_command_the_disk_refuses_is_done_but_said_not_saved(tmp_path, monkeypatch):
    real = os.write
    full = threading.Event()

    def write(fd, data):
        if full.is_set() and threading.current_thread().name == "game-log":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)
    monkeypatch.setattr(os, "write", write)
    with live_box(tmp_path) as live:
        full.set()
        status, reply = post(live.base + "/api/command",
                             json.dumps({"cmd": "rename", "player": 1, "name": "Bea"}).encode(),
                             {"X-Host-Token": live.hub.token})
        assert status == 200 and reply == {"ok": True, "saved": False, "error": "not saved: disk full"}, reply
        assert live.box.engine.players[1] == "Bea"        # the box plays on from memory
        full.clear()
        live.until(lambda: live.box.store.durable >= live.box.store.seq)


def kill_after_each_answer(tmp_path: Path, names: list[str]) -> list[str]:
    """The real daemon and web process: each acknowledged rename is followed at once by a SIGKILL
    of the daemon and a restart; the names the resumed games have."""
    config = tmp_path / "config.toml"
    config.write_text('[box]\nplayers = ["Ada", "Ben", "Cy"]\nseed = 1\n[web]\nenabled = true\n')
    state = tmp_path / "state"
    web = None
    seen = []
    try:
        for name in names:
            with ready(tmp_path, {"RUNTIME_DIRECTORY": ""}, args=("--config", str(config))) as (daemon, sock):
                until(lambda: (state / "host-token").exists(), 10, "no host token")
                if web is None:
                    web, base = start_web(state, state / "hub.sock")
                token = (state / "host-token").read_text().strip()
                body = json.dumps({"cmd": "rename", "player": 1, "name": name}).encode()
                port = int(base.rsplit(":", 1)[1])
                for attempt in range(100):            # the web process's link comes back
                    status, reply = command(port, f"127.0.1.{2 + attempt}", body, token)
                    if status != 503:
                        break
                    time.sleep(0.05)
                assert status == 200 and reply["saved"] is True, reply
                daemon.send_signal(signal.SIGKILL)
                daemon.wait()
            (tmp_path / "notify.sock").unlink()
            status = subprocess.run([sys.executable, "-m", "pi_companion", "status", "--config", os.devnull,
                                     "--state-dir", str(state), "--json"],
                                    capture_output=True, text=True, timeout=60)
            seen.append(json.loads(status.stdout)["players"][1])
    finally:
        if web is not None:
            stop_web(web, 10)
    return seen


def test_every_acknowledged_rename_survives_a_sigkill_right_after_its_answer(tmp_path):
    names = ["Bea", "Bo", "Bix"]
    assert kill_after_each_answer(tmp_path, names) == names


@pytest.mark.torture
def test_every_acknowledged_rename_survives_a_sigkill_right_after_its_answer_torture(tmp_path):
    names = [f"Ben{i}" for i in range(40)]
    seen = kill_after_each_answer(tmp_path, names)
    print(f"\n{len(names)} acknowledged renames, each followed by a SIGKILL: {sum(a == b for a, b in zip(seen, names))} kept")
    assert seen == names


def test_a_command_on_a_disk_that_does_not_answer_is_said_not_saved_in_time(tmp_path, monkeypatch):
    """The card hangs in its sync: the page hears "not saved" once the box gives up waiting
    (2 s), well before its own patience (5 s) would call the box offline."""
    real = os.fdatasync
    hang = threading.Event()

    def stuck(fd):
        if hang.is_set() and threading.current_thread().name == "game-log":
            time.sleep(4.0)
        real(fd)
    monkeypatch.setattr(os, "fdatasync", stuck)
    with live_box(tmp_path) as live:
        hang.set()
        sent = time.monotonic()
        status, reply = post(live.base + "/api/command",
                             json.dumps({"cmd": "rename", "player": 1, "name": "Bea"}).encode(),
                             {"X-Host-Token": live.hub.token})
        took = time.monotonic() - sent
        hang.clear()
        assert status == 200 and reply == {"ok": True, "saved": False,
                                           "error": "not saved: disk not responding"}, (reply, took)
        # (Had the box waited for the sync, the answer would have said saved.)
        assert live.box.engine.players[1] == "Bea"          # answered before the sync returned
