"""Folding the game log the live box wrote gives the state the live box has, field by field.

A box on gpiozero's mock pins (a virtual clock), with its real game log and hub, is driven
through random paths of the box's own buttons and encoder, the host's commands (parsed by the
hub's protocol, queued like a press) and the hotspot coming and going (the hub reading the
dispatcher's file). After each path the log is folded into a fresh engine, as a resume does,
and every field of the table's state must equal the live engine's: anything that changes what
an input does must itself be an input in the log."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import Clock, VirtualFactory, VirtualPin
from pi_companion.box import Box, Wake
from pi_companion.config import Config
from pi_companion.core.engine import fold_records
from pi_companion.core.events import Turn
from pi_companion.games import registry
from pi_companion.hub import Hub
from pi_companion.hub.protocol import CommandError, parse_command
from pi_companion.hw.display import Display
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.gamelog import GameLog, open_log

PINS = load_pinmap()
BOARD = "http://box.local:8080/"
# The engine's state that an input can change and a resume must bring back. Not compared: the
# clock (an idle box moves it without a record; the next record carries the time), the notice
# (what the screen says about the last input: no input reads it, and a new game or a resume
# says its own), the catalogue, tunes and colours (the config's, handed to both), and the
# fold's own counters.
FIELDS = ("table", "menu", "players", "options", "seed", "seats", "hotspot", "undo_stack",
          "games_played", "shutdown_requested", "window", "rules")

ACTIONS = st.one_of(
    st.sampled_from(["MENU", "YES", "NO", "P1", "P2", "P3", "YES-long", "NO-long"]).map(lambda b: ("press", b)),
    st.sampled_from([1, -1]).map(lambda d: ("turn", d)),
    st.just(("web-menu", None)),                     # MENU, the last entry (Show on TV / phone), YES
    st.sampled_from([None, ("games-table", "tabletop-2026", "10.42.0.1"),
                     ("other-net", "another-secret", "")]).map(lambda h: ("hotspot", h)),
    st.sampled_from([{"cmd": "yes"}, {"cmd": "no"}, {"cmd": "undo"}, {"cmd": "new"},
                     {"cmd": "dial", "delta": 1}, {"cmd": "rename", "player": 1, "name": "Bea"},
                     {"cmd": "switch", "game": "hands-up"}, {"cmd": "switch", "game": "grab-bag"},
                     {"cmd": "players", "names": ["Ada", "Ben", "Cy", "Dee"]},
                     {"cmd": "menu", "key": "pause"}]).map(lambda m: ("host", m)),
)


class Rig:
    def __init__(self, state: Path) -> None:
        Clock.now = 0.0
        self.factory = VirtualFactory(pin_class=VirtualPin)
        self.state = state
        self.hotspot_file = state / "net" / "hotspot.json"
        self.box = Box(Config(players=("Ada", "Ben", "Cy"), seed=3, sound=False), self.factory,
                       Display(None), store=GameLog(state))
        self.hub = Hub(state / "hub.sock", state, board_url=BOARD, hotspot_path=self.hotspot_file)
        self.hub.attach(self.box)
        self.box.pump()

    def close(self) -> None:
        self.box.close()
        self.factory.reset()

    def tick(self, seconds: float = 0.3) -> None:
        Clock.now += seconds
        self.box.queue.put(Wake())
        self.box.pump()

    def tap(self, button: str, hold: float = 0.05) -> None:
        pin = self.factory.pin(PINS[button])
        Clock.now += 0.2
        pin.drive_low()
        self.box.pump()
        Clock.now += hold
        self.box.queue.put(Wake())
        self.box.pump()
        pin.drive_high()
        self.box.pump()

    def act(self, kind: str, arg) -> None:
        box = self.box
        if kind == "press":
            button, _, long = arg.partition("-")
            self.tap(button, 1.2 if long else 0.05)
        elif kind == "turn":
            Clock.now += 0.1
            box.queue.put(Wake(Turn(box.now(), arg)))
            box.pump()
        elif kind == "web-menu":
            if box.engine.menu is None:
                self.tap("MENU")
            Clock.now += 0.1
            box.queue.put(Wake(Turn(box.now(), -1)))
            box.pump()
            self.tap("YES")
        elif kind == "hotspot":
            self.hotspot_file.parent.mkdir(exist_ok=True)
            if arg is None:
                self.hotspot_file.unlink(missing_ok=True)
            else:
                ssid, password, address = arg
                self.hotspot_file.write_text(json.dumps({"ssid": ssid, "password": password, "address": address}))
            self.hub.check_hotspot()
            box.pump()
        else:
            try:
                box.put_host_command(parse_command(arg, tuple(box.engine.players)))
            except CommandError:
                return                               # the hub refuses it: never logged
            box.pump()
        self.tick()

    def folded(self):
        assert self.box.store.flush()
        with open_log(self.box.store.path) as reader:
            engine = registry.engine_for(reader.header, debounce_s=self.box.config.debounce_ms / 1000.0)
            count, why, _ = fold_records(engine, reader.records())
        assert why is None, why
        return engine


def differences(live, folded) -> list[str]:
    return [f"{name}: live {getattr(live, name)!r:.200} folded {getattr(folded, name)!r:.200}"
            for name in FIELDS if getattr(live, name) != getattr(folded, name)]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(actions=st.lists(ACTIONS, min_size=1, max_size=14))
def test_folding_the_live_boxs_log_gives_its_state(tmp_path_factory, actions):
    rig = Rig(tmp_path_factory.mktemp("fold"))
    try:
        for kind, arg in actions:
            rig.act(kind, arg)
            assert not differences(rig.box.engine, rig.folded()), (kind, arg, differences(rig.box.engine, rig.folded()))
    finally:
        rig.close()


def test_the_wifi_entry_of_the_live_box_is_the_folds_too(tmp_path):
    """The path an outside tester found: with the hotspot up, MENU > Show on TV / phone >
    the first entry. Live and folded both end on the Wi-Fi QR."""
    rig = Rig(tmp_path)
    try:
        rig.act("hotspot", ("games-table", "tabletop-2026", "10.42.0.1"))
        assert rig.box.engine.menu.qr == "wifi"
        rig.act("press", "NO")
        rig.act("web-menu", None)
        rig.act("press", "YES")
        assert rig.box.engine.menu.qr == "wifi"
        assert rig.folded().menu == rig.box.engine.menu
        rig.act("host", {"cmd": "new"})                 # a new game (and log) on the same hotspot
        rig.act("web-menu", None)
        assert rig.box.engine.menu.items[0] == ("web:wifi", "Join box Wi-Fi")
        assert not differences(rig.box.engine, rig.folded())
    finally:
        rig.close()
