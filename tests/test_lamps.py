"""Every screen sets every lamp: the live box on MockFactory pins, read off the LED pins.

A new game (the host's New game, Change game) must not keep the lamps the old game's last
screen had: right after the input that started it (no later input or timer to mend them), the
LED pins are what the new game's first screen lights.
"""
from __future__ import annotations

import pytest

from pi_companion.app import Box, Wake
from pi_companion.config import Config
from pi_companion.core.events import Edge, HostCommand
from pi_companion.hw.display import Display, open_device
from pi_companion.hw.pinmap import load_pinmap

PLAYERS = ("Ada", "Ben", "Cy")


def lamps(factory, n=len(PLAYERS)):
    pins = load_pinmap()
    return frozenset(i for i in range(n) if factory.pin(pins[f"LED{i + 1}"]).state)


def feed(box, *events):
    for event in events:
        box.queue.put(Wake(event))
    box.pump()


@pytest.fixture
def box(mock_factory, tmp_path):
    from pi_companion.gamelog import GameLog
    box = Box(Config(players=PLAYERS, seed=3, sound=False), mock_factory,
              Display(lambda: open_device("dummy")), store=GameLog(tmp_path))
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
    box = Box(Config(players=PLAYERS, seed=3, sound=False), factory,
              Display(lambda: open_device("dummy")), on_request=requests.append)
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
