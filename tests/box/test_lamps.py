"""Every screen sets every lamp: the live box on MockFactory pins, read off the LED pins.

A new game (the host's New game, Change game) must not keep the lamps the old game's last
screen had: right after the input that started it (no later input or timer to mend them), the
LED pins are what the new game's first screen lights.

And the winner's lamp never waits for the SD card (#27 item 1), judgements still do:
A real Box on gpiozero's MockFactory pins with its loop thread, luma's dummy display and a real
GameLog on a real file, whose `fdatasync` is held by fault injection (a stalled card): the
buzz winner's LED and tone come while the press's record is not durable; a judgement (YES:
a point, a new Grab Master) changes no LED and draws no frame until its record is durable."""
from __future__ import annotations

import threading
import time

import pytest

from helpers.common import wait_for
from helpers.boxes import make_box, virtual_box
from pi_companion.box import Wake
from pi_companion.core.events import Edge, HostCommand
from pi_companion.gamelog import GameLog
from pi_companion.hw.pinmap import load_pinmap

PLAYERS = ("Ada", "Ben", "Cy")
PINS = load_pinmap()


def lamps(factory, n=len(PLAYERS)):
    pins = load_pinmap()
    return frozenset(i for i in range(n) if factory.pin(pins[f"LED{i + 1}"]).state)


def feed(box, *events):
    for event in events:
        box.queue.put(Wake(event))
    box.pump()


@pytest.fixture
def box(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path, players=PLAYERS, seed=3, display="dummy")
    yield box
    box.close()


def judging_ben(box, factory):
    t = box.now()
    feed(box, Edge(t, "P2", True), Edge(t + 0.05, "P2", False))
    box.engine.advance(t + 1.0)            # the settle window closes: Ben's buzz is judged
    box.refresh()
    assert box.engine.game.phase == "judging" and lamps(factory) == {1}


def test_a_new_game_from_the_host_lights_the_new_games_lamps(box, mock_factory):
    assert lamps(mock_factory) == {1, 2}                 # Grab Bag: the seekers are lit
    judging_ben(box, mock_factory)
    feed(box, HostCommand(box.now(), "new"))
    assert box.engine.game.phase == "searching"
    assert lamps(mock_factory) == box.engine.lit() == {1, 2}


@pytest.mark.parametrize("game", ["hands-up", "all-wound-up", "hold-your-breath", "hold-everything"])
def test_a_change_of_game_lights_the_new_games_lamps_at_once(box, mock_factory, game):
    judging_ben(box, mock_factory)
    feed(box, HostCommand(box.now(), "switch", -1, game))
    assert box.engine.rules.name == game
    assert lamps(mock_factory) == box.engine.lit()


# ---- holding MENU: a countdown on the OLED before the power-off ----

def countdown_frame(seconds):
    from pi_companion.ui.canvas import new_frame
    from pi_companion.ui.screens import draw_power_off
    image, draw = new_frame()
    draw_power_off(draw, seconds)
    return image.convert("1").tobytes()


def shown(box):
    image = box.display.device.image
    return None if image is None else image.convert("1").tobytes()


def live_box(factory, requests):
    box = make_box(factory, players=PLAYERS, seed=3, display="dummy", on_request=requests.append)
    box.start()
    return box


def test_holding_menu_counts_down_3_2_1_on_the_oled_then_powers_off(mock_factory):
    from helpers.common import wait_for
    requests = []
    box = live_box(mock_factory, requests)
    try:
        assert wait_for(lambda: shown(box) is not None)
        menu = mock_factory.pin(load_pinmap()["MENU"])
        menu.drive_low()
        seen = []
        for n in (3, 2, 1):
            assert wait_for(lambda: shown(box) == countdown_frame(n), timeout=4), f"no {n} on screen"
            seen.append(n)
            assert not requests                          # nothing powers off before the count ends
        assert wait_for(lambda: [r.name for r in requests] == ["shutdown"], timeout=3)
        menu.drive_high()
        assert seen == [3, 2, 1]
    finally:
        box.close()


def test_letting_go_of_menu_cancels_the_countdown(mock_factory):
    import time

    from helpers.common import wait_for
    requests = []
    box = live_box(mock_factory, requests)
    try:
        assert wait_for(lambda: shown(box) is not None)
        game_screen = shown(box)
        menu = mock_factory.pin(load_pinmap()["MENU"])
        menu.drive_low()
        assert wait_for(lambda: shown(box) == countdown_frame(2), timeout=4)
        menu.drive_high()                                 # let go with 2 s to go
        assert wait_for(lambda: shown(box) not in (countdown_frame(2), countdown_frame(1), countdown_frame(3)))
        time.sleep(2.5)                                   # past when it would have powered off
        assert not requests and not box.engine.shutdown_requested
        assert shown(box) != countdown_frame(1)
        assert box.engine.menu is not None                # shorter than 3 s: MENU's short press
        assert game_screen is not None and shown(box) != game_screen
    finally:
        box.close()


# ---- the real daemon: its main, its hub, its pins -------------------------------------------

def test_the_real_daemon_sets_every_lamp_when_the_host_changes_the_game(tmp_path, monkeypatch):
    """`daemon.main` as systemd runs it (on mock pins, in a thread), the game changed through its
    hub socket as the host's phone changes it: after each change the LED pins are exactly what
    the new game's first screen lights (the snapshot's `lit`), never the old game's lamps."""
    import argparse
    import json
    import socket
    import time

    from gpiozero import Device

    from helpers.common import daemon_in_a_thread
    from pi_companion import systemd

    monkeypatch.setattr(systemd, "power_off", lambda: None)
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text('[box]\nplayers = ["Ada", "Ben", "Cy"]\nseed = 3\n[sound]\nenabled = false\n'
                      '[web]\nenabled = true\n')
    state = tmp_path / "state"
    args = argparse.Namespace(config=str(config), game=None, players=None, pins="mock",
                              display="dummy", state_dir=str(state))
    pins = load_pinmap()
    with daemon_in_a_thread(monkeypatch, args) as (thread, result):
        end = time.monotonic() + 15
        while not (tmp_path / "hub.sock").exists() and time.monotonic() < end:
            time.sleep(0.02)
        hub = socket.socket(socket.AF_UNIX)
        hub.connect(str(tmp_path / "hub.sock"))
        hub.sendall(b'{"cmd": "hello", "role": "board"}\n')
        hub.settimeout(5)
        host = socket.socket(socket.AF_UNIX)                     # the phone's commands
        host.connect(str(tmp_path / "hub.sock"))
        host.sendall(b'{"cmd": "hello", "role": "host"}\n')
        stream = hub.makefile("rb")
        token = (state / "host-token").read_text().strip()

        def factory_lamps():
            return {i for i in range(3) if Device.pin_factory.pin(pins[f"LED{i + 1}"]).state}

        def snapshot_where(ok):
            while True:
                msg = json.loads(stream.readline())
                if msg.get("type") == "snapshot" and ok(msg):
                    return msg

        def lamps_follow(snap):
            want = {i for i, p in enumerate(snap["players"]) if p["lit"]}
            end = time.monotonic() + 5
            while factory_lamps() != want and time.monotonic() < end:
                time.sleep(0.01)
            assert factory_lamps() == want, (snap["game"], factory_lamps(), want)
            return want

        first = snapshot_where(lambda s: True)
        assert lamps_follow(first) == {1, 2}                      # Grab Bag: the seekers lit
        Device.pin_factory.pin(pins["P2"]).drive_low()            # Ben buzzes: his lamp alone
        time.sleep(0.1)
        Device.pin_factory.pin(pins["P2"]).drive_high()
        assert lamps_follow(snapshot_where(lambda s: s.get("buzz"))) == {1}
        seen = []
        for game in ("all-wound-up", "hold-your-breath", "hands-up", "grab-bag"):
            host.sendall(json.dumps({"cmd": "switch", "game": game, "token": token, "id": 1}).encode() + b"\n")
            seen.append((game, lamps_follow(snapshot_where(lambda s, g=game: s["game"] == g))))
        assert seen[-1] == ("grab-bag", {1, 2}) and seen[0][1] != {1}, seen
        hub.close()
        host.close()
        Device.pin_factory.pin(pins["MENU"]).drive_low()         # held: the daemon powers off
        thread.join(timeout=15)
        assert result == [0]


# ---- the winner's lamp never waits for the SD card (#27 item 1) ----------------------------


class StalledDisk:
    """Replaces the log's sync: while `stall` is on, each sync blocks until `release()`."""

    def __init__(self, store: GameLog) -> None:
        self.real = store.sync
        self.go = threading.Event()
        self.go.set()
        self.blocked = threading.Event()      # a sync is being held now
        store.sync = self

    def __call__(self, fd: int) -> None:
        if not self.go.is_set():
            self.blocked.set()
            self.go.wait(20)
        self.real(fd)

    def stall(self) -> None:
        self.blocked.clear()
        self.go.clear()

    def release(self) -> None:
        self.go.set()


def test_the_winners_lamp_and_tone_do_not_wait_for_the_sync_but_a_score_does(mock_factory, tmp_path):
    store = GameLog(tmp_path, wait_s=30)           # no "disk not responding" within the test
    disk = StalledDisk(store)
    frames: list[object] = []
    box = make_box(mock_factory, seed=3, sound=True, display="dummy", store=store,
                   on_frame=frames.append)
    pin = lambda name: mock_factory.pin(PINS[name])      # noqa: E731
    box.start()
    try:
        assert wait_for(lambda: pin("LED3").state == 1 and frames and store.durable == store.seq)
        # 1. The buzz: the press's record is not durable, the lamp and the tone come anyway.
        disk.stall()
        pin("P2").drive_low()
        assert wait_for(lambda: disk.blocked.is_set())
        assert wait_for(lambda: pin("LED3").state == 0 and pin("LED2").state == 1)   # Ben's alone
        assert wait_for(lambda: bool(pin("PIEZO").frequency))                         # his tune
        assert box.engine.report()["last_buzz"]["winner"] == "Ben"
        assert store.durable < store.seq and disk.blocked.is_set() and not disk.go.is_set()
        disk.release()
        assert wait_for(lambda: store.durable == store.seq)
        pin("P2").drive_high()
        assert wait_for(lambda: box.handled >= 2 and store.durable == store.seq and not box.stale)
        time.sleep(0.05)
        # 2. The judgement: YES gives Ben a point and makes him the Grab Master; the engine has
        # it at once, the LEDs and the OLED only once its record is on disk.
        disk.stall()
        shown, lit = len(frames), {n: pin(n).state for n in ("LED1", "LED2", "LED3")}
        pin("YES").drive_low()
        time.sleep(0.05)
        pin("YES").drive_high()                     # a short press: judged at its release
        assert wait_for(lambda: box.engine.report()["scores"]["Ben"] == 1)
        assert wait_for(lambda: disk.blocked.is_set())
        time.sleep(0.3)                              # the loop has had every chance to show it
        assert store.durable < store.seq
        assert len(frames) == shown, "a frame with the point was sent before it was saved"
        assert {n: pin(n).state for n in lit} == lit, "the judgement's LEDs came before it was saved"
        disk.release()
        assert wait_for(lambda: pin("LED2").state == 0)          # the Grab Master's lamp is off
        assert wait_for(lambda: len(frames) > shown)
        assert box.engine.report()["grab_master"] == "Ben"
    finally:
        disk.release()
        box.close()


def test_a_judgement_that_closes_the_window_shows_the_buzz_first_and_waits_for_its_own_record(
        mock_factory, tmp_path):
    """YES released after the settle window's due time, before the loop's timer took it: one
    input decides the buzz and judges it. The buzz's lamp comes at once; the point's LEDs only
    once the YES record is durable."""
    from pi_companion.box import Wake
    from pi_companion.core.events import Edge
    store = GameLog(tmp_path, wait_s=30)
    disk = StalledDisk(store)
    box = make_box(mock_factory, seed=3, store=store)
    pin = lambda name: mock_factory.pin(PINS[name])      # noqa: E731
    try:
        for event in (Edge(1.0, "P2", True), Edge(1.001, "YES", True)):
            box.handle(Wake(event))
        assert box.engine.window is not None and store.flush()
        disk.stall()
        judged = threading.Thread(target=box.handle, args=(Wake(Edge(1.05, "YES", False)),))
        judged.start()
        assert wait_for(lambda: disk.blocked.is_set())
        assert wait_for(lambda: pin("LED3").state == 0 and pin("LED2").state == 1)   # Ben's buzz
        time.sleep(0.2)
        assert box.engine.report()["scores"]["Ben"] == 1 and store.durable < store.seq
        assert pin("LED2").state == 1, "the judgement's LEDs came before it was saved"
        disk.release()
        judged.join(10)
        assert pin("LED2").state == 0 and pin("LED1").state == 1   # Ben is the Grab Master now
    finally:
        disk.release()
        box.close()


def test_a_press_in_flight_that_closes_the_window_lights_its_lamp_before_its_record_is_durable(
        tmp_path):
    """The window was due, the look found P1's button down with its edge still in flight, and
    the window waits for it; the edge lands and closes the window: P1's buzz (the earlier
    timestamp) is shown at once, while the record of that very press is still not on disk."""
    from helpers.common import Clock
    from helpers.boxes import LatePin, late_box, late_first_press_until_the_window_is_due
    Clock.now, LatePin.held = 5.0, []
    box = late_box(tmp_path)
    disk = StalledDisk(box.store)
    box.store.wait_s = 30
    pin = lambda name: box.factory.pin(PINS[name])      # noqa: E731
    try:
        box.pump()
        late_first_press_until_the_window_is_due(box)   # it waits for P1's edge
        assert box.engine.settling and box.store.flush()
        disk.stall()
        Clock.now = 5.0035
        LatePin.deliver()                             # P1's edge lands, 3 ms late
        landed = threading.Thread(target=box.pump)
        landed.start()
        assert wait_for(lambda: disk.blocked.is_set())
        assert wait_for(lambda: box.leds.lit == {0} and pin("LED1").state == 1 and pin("LED2").state == 0)
        assert box.piezo.played == ["buzz:P1"] and box.store.durable < box.store.seq
        disk.release()
        landed.join(10)
        assert box.engine.report()["last_buzz"]["winner"] == "Ada"
    finally:
        disk.release()
        box.close()
        box.factory.reset()


def test_the_wake_up_that_decides_a_buzz_is_logged_right_after_its_lamp(tmp_path):
    """The loop's timer closes the window: the buzz's lamps first, then the wake-up's `advance`
    record (a resume must fire the window at the same time), and the log folds to the box."""
    from helpers.common import Clock
    from helpers.folds import fold, state
    from pi_companion.box import Wake
    Clock.now = 5.0
    box = virtual_box(tmp_path, seed=3)
    calls: list[tuple[str, object]] = []
    show, append = box.leds.show, box.store.append
    box.leds.show = lambda lit: (calls.append(("lamps", set(lit))), show(lit))[1]   # type: ignore[method-assign]
    box.store.append = lambda rec: (calls.append(("record", dict(rec))), append(rec))[1]  # type: ignore[method-assign]
    try:
        box.pump()
        box.factory.pin(PINS["P2"]).drive_low()
        box.pump()
        assert box.engine.settling and calls[-1] == ("record", {"t": 0.0, "press": "P2"})
        Clock.now = 5.01                              # the window is due: the loop wakes
        box.queue.put(Wake())
        box.pump()
        assert calls[-2:] == [("lamps", {1}), ("record", {"t": 0.01, "advance": 1})]
        assert box.store.flush() and box.store.load()[1][-1] == {"t": 0.01, "advance": 1}
        assert state(fold(box.store)) == state(box.engine)
    finally:
        box.close()
        box.factory.reset()
