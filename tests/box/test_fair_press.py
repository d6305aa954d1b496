"""The fair first press through real gpiozero mock pins whose callbacks arrive late and reordered."""
from __future__ import annotations

import random

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from helpers.boxes import make_box
from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.hw.pinmap import load_pinmap


class VirtualTime:
    now = 0.0


class DeferredPin(MockPin):
    """A mock pin stamped on a virtual clock whose edge callbacks are held until released."""
    held: list[tuple["DeferredPin", float, bool]] = []

    def _change_state(self, value):
        if self._state == value:
            return False
        self._state = value
        self._last_change = VirtualTime.now
        return True

    def _call_when_changed(self):
        DeferredPin.held.append((self, self._last_change, self._state))

    @classmethod
    def deliver(cls, order):
        for pin, ticks, state in order:
            super(MockPin, pin)._call_when_changed(ticks, state)
        cls.held = []


class VirtualFactory(MockFactory):
    def ticks(self):  # type: ignore[override]
        return VirtualTime.now


@pytest.fixture
def box():
    VirtualTime.now = 0.0
    DeferredPin.held = []
    factory = VirtualFactory(pin_class=DeferredPin)
    config = Config(game="grab-bag", players=("Ada", "Ben", "Cy", "Di"), seed=1, sound=False,
                    games={"grab-bag": {"variant": "all-seekers", "cards": 200}})
    b = make_box(factory, config=config, display="dummy")
    yield b, factory
    b.close()
    factory.reset()


PINS = load_pinmap()              # read once: the test presses 5 000 times


def pin(factory, name):
    return factory.pin(PINS[name])


def settle(b, seconds):
    VirtualTime.now += seconds
    b.queue.put(Wake())
    b.pump()


def test_reordered_callbacks_earliest_timestamp_wins_1000_pairs(box):
    b, factory = box
    rng = random.Random(2026)
    for trial in range(1000):
        first, second = rng.sample(range(4), 2)
        gap = rng.uniform(0.05e-3, 1.5e-3)
        VirtualTime.now = trial * 1.0 + 10.0
        pin(factory, f"P{first + 1}").drive_low()
        VirtualTime.now += gap
        pin(factory, f"P{second + 1}").drive_low()
        DeferredPin.deliver(list(reversed(DeferredPin.held)))   # the later press arrives first
        b.pump()
        settle(b, 0.003)                                          # the 2 ms settle window closes
        buzz = b.engine.table.last_buzz
        assert buzz is not None and buzz.winner == first, f"trial {trial}: gap {gap * 1e3:.3f} ms"
        assert b.leds.lit == {first}
        assert abs(buzz.ordered()[1][1] - gap * 1e3) < 1e-3
        assert pin(factory, f"LED{first + 1}").state == 1
        VirtualTime.now += 0.1
        pin(factory, f"P{first + 1}").drive_high()
        pin(factory, f"P{second + 1}").drive_high()
        DeferredPin.deliver(DeferredPin.held)
        b.pump()
        b.engine.new_game()


def test_callback_order_would_have_been_wrong(box):
    """The same reversed delivery, decided by arrival order, picks the later press: the test can fail."""
    b, factory = box
    VirtualTime.now = 5.0
    pin(factory, "P1").drive_low()
    VirtualTime.now += 0.0005
    pin(factory, "P2").drive_low()
    arrivals = list(reversed(DeferredPin.held))
    assert arrivals[0][0] is pin(factory, "P2")     # arrival order says P2
    DeferredPin.deliver(arrivals)
    b.pump()
    settle(b, 0.003)
    assert b.engine.table.last_buzz.winner == 0     # the timestamp says P1


def test_press_after_the_window_is_recorded_not_decisive(box):
    b, factory = box
    VirtualTime.now = 5.0
    pin(factory, "P3").drive_low()
    DeferredPin.deliver(DeferredPin.held)
    b.pump()
    settle(b, 0.003)
    VirtualTime.now = 5.012
    pin(factory, "P4").drive_low()
    DeferredPin.deliver(DeferredPin.held)
    b.pump()
    report = b.engine.report()["last_buzz"]
    assert report["winner"] == "Cy"
    assert report["order"][1]["player"] == "Di" and report["order"][1]["after_ms"] == pytest.approx(12.0)


def test_chattering_edges_give_one_press_and_60ms_apart_give_two(box):
    b, factory = box
    rng = random.Random(5)
    p2 = pin(factory, "P2")
    VirtualTime.now = 2.0
    for _ in range(9):                       # a chattering press: 0.1-4 ms between edges
        p2.drive_low()
        VirtualTime.now += rng.uniform(0.1e-3, 4e-3)
        p2.drive_high()
        VirtualTime.now += rng.uniform(0.1e-3, 4e-3)
    p2.drive_low()
    DeferredPin.deliver(DeferredPin.held)
    b.pump()
    settle(b, 0.05)
    assert b.engine.presses == 1
    VirtualTime.now += 0.06
    p2.drive_high()
    VirtualTime.now += 0.06
    p2.drive_low()
    DeferredPin.deliver(DeferredPin.held)
    b.pump()
    assert b.engine.presses == 2
