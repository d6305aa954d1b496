"""A power cut with a button down: resume acts on no press that is not happening.

The box runs on gpiozero mock pins stamped with a virtual clock and logs into a real state
directory; "the power goes" is the log closed without a clean shutdown, and the box that
comes back is a new Box (new pins: a button is down only if the test holds it) on that log.
"""
from __future__ import annotations

from typing import Any

import pytest

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers.boxes import make_box

from pi_companion.box import Box, Wake
from pi_companion.config import Config
from pi_companion.core.events import Request
from pi_companion.gamelog import GameLog
from pi_companion.hw.pinmap import load_pinmap

PINS = load_pinmap()
CONFIG = Config(players=("Ada", "Ben", "Cy"), seed=3, sound=False)
HEADER = {"game": "grab-bag", "players": ["Ada", "Ben", "Cy"], "options": {}, "seed": 3}


def power_up(state, held: tuple[str, ...] = (), requests: list[Request] | None = None) -> Box:
    """A box on fresh pins; the buttons in `held` are closed as it powers up."""
    stuck = {f"GPIO{PINS[name]}" for name in held}

    class Pin(VirtualPin):
        def _set_pull(self, value: str) -> None:
            super()._set_pull(value)
            if self.info.name in stuck:
                self.drive_low()

    factory = VirtualFactory(pin_class=Pin)
    box = make_box(factory, state, config=CONFIG,
                   on_request=None if requests is None else requests.append)
    box.piezo.play = box.piezo.played.append  # type: ignore[method-assign]
    return box


def cut(box: Box) -> None:
    """The power goes: nothing is closed cleanly, the log keeps what was fsynced."""
    box.store.close()
    box.factory.reset()


def drive(box: Box, button: str, down: bool) -> None:
    pin = box.factory.pin(PINS[button])
    pin.drive_low() if down else pin.drive_high()
    box.pump()


def idle(box: Box, seconds: float) -> None:
    """The loop with no input: it wakes (timers due fire) every 0.25 s of virtual time."""
    end = Clock.now + seconds
    while Clock.now < end:
        Clock.now = min(end, Clock.now + 0.25)
        box.queue.put(Wake())
        box.pump()


def logged(state) -> list[dict[str, Any]]:
    loaded = GameLog(state).load()
    assert loaded is not None
    return list(loaded[1])


def write_log(state, records: list[dict[str, Any]]) -> None:
    store = GameLog(state)
    store.start(HEADER)
    for rec in records:
        store.append(rec)
    store.close()


@pytest.fixture(autouse=True)
def clock():
    Clock.now = 100.0


PLAYED = [{"t": 1.0, "press": "P2"}, {"t": 1.05, "release": "P2"}, {"t": 1.5, "advance": 1},
          {"t": 2.0, "press": "YES"}, {"t": 2.05, "release": "YES"}]      # Ben scores a card


@pytest.mark.parametrize("button", ["MENU", "NO", "YES"])
def test_a_press_cut_before_its_release_does_nothing_after_restart(tmp_path, button):
    # The repro: a log ending in a press (MENU powered off after 3.3 s; NO undid
    # the last judgement; YES would judge). Now the press ends at the cut without effect.
    write_log(tmp_path, [*PLAYED, {"t": 5.0, "press": button}])
    requests: list[Request] = []
    box = power_up(tmp_path, requests=requests)
    try:
        at_cut = box.engine.report()
        assert box.resumed and box.engine.held() == [] and box.engine.next_deadline() is None
        idle(box, 5.0)                          # longer than any long press
        assert requests == [] and box.engine.report() == at_cut
        assert at_cut["scores"] == {"Ada": 0, "Ben": 1, "Cy": 0} and not at_cut["shutdown_requested"]
        assert box.store.flush()                 # the writer thread has it on disk
        assert logged(tmp_path)[-2:] == [{"t": 5.0, "press": button}, {"t": 5.0, "resume": 1}]
    finally:
        box.close()


def test_after_a_menu_hold_shutdown_the_next_boot_is_clean(tmp_path):
    requests: list[Request] = []
    box = power_up(tmp_path, requests=requests)
    Clock.now += 1.0
    drive(box, "MENU", True)
    idle(box, 3.2)
    assert requests == [Request("shutdown")]     # the box powers off, the finger still on MENU
    box.close()
    requests.clear()
    again = power_up(tmp_path, requests=requests)
    try:
        assert again.resumed and again.engine.held() == []
        assert not again.engine.report()["shutdown_requested"]
        idle(again, 4.0)
        assert requests == []
        drive(again, "MENU", True)               # MENU works as ever afterwards
        idle(again, 3.2)
        assert requests == [Request("shutdown")]
    finally:
        again.close()


def test_a_button_still_down_at_power_up_is_held_and_ignored_until_released(tmp_path):
    box = power_up(tmp_path)
    Clock.now += 1.0
    drive(box, "P2", True)                       # Ben buzzes ... and the power goes
    Clock.now += 0.001
    cut(box)
    Clock.now += 10.0
    again = power_up(tmp_path, held=("P2",))     # his finger is still on the button
    try:
        report = again.engine.report()
        assert report["phase"] == "judging" and report["last_buzz"]["winner"] == "Ben"
        assert again.engine.held() == ["P2"] and again.engine.next_deadline() is None
        assert again.store.flush()
        assert logged(tmp_path)[-1]["resume"] == 1 and logged(tmp_path)[-1]["held"] == ["P2"]
        assert again.engine.notice == "P2 held down: ignored"
        idle(again, 3.0)                         # no player hold from a press before the cut
        drive(again, "P2", False)
        assert again.engine.report() == report and again.engine.held() == []
        presses = again.engine.presses
        Clock.now += 0.5
        drive(again, "P2", True)                 # and then it is a button like any other
        assert again.engine.presses == presses + 1
    finally:
        again.close()


def test_an_open_settle_window_is_decided_at_the_cut_on_the_presses_it_holds(tmp_path):
    write_log(tmp_path, [{"t": 1.0, "press": "P3"}, {"t": 1.0004, "press": "P2"},
                         {"t": 1.001, "release": "P3"}])
    box = power_up(tmp_path)
    try:
        report = box.engine.report()
        assert report["last_buzz"] == {"winner": "Cy", "order": [
            {"player": "Cy", "after_ms": 0.0}, {"player": "Ben", "after_ms": 0.4}]}
        assert box.engine.next_deadline() is None
        assert box.store.flush()
        assert logged(tmp_path)[-1] == {"t": 1.001, "resume": 1}
        idle(box, 3.0)
        assert box.engine.report() == report
    finally:
        box.close()


def test_a_fresh_log_records_a_button_down_at_power_up(tmp_path):
    box = power_up(tmp_path, held=("YES",))
    try:
        assert not box.resumed and box.engine.held() == ["YES"]
        assert box.store.flush()                 # the writer thread has it on disk
        assert logged(tmp_path) == [{"t": 0.0, "resume": 1, "held": ["YES"]}]
        idle(box, 2.0)
        drive(box, "YES", False)
        assert box.engine.report()["scores"] == {"Ada": 0, "Ben": 0, "Cy": 0}
    finally:
        box.close()
