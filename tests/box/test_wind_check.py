"""A wind check through gpiozero MockFactory pins end to end: player button, encoder, hall sensors, YES."""
from __future__ import annotations

import pytest

from helpers.common import Clock, VirtualFactory, VirtualPin
from helpers.boxes import make_box

from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.hw.pinmap import load_pinmap

CW = ((1, 0), (1, 1), (0, 1), (0, 0))      # hall (A, B) after each clockwise step from (0, 0)




@pytest.fixture
def rig():
    Clock.now = 0.0
    factory = VirtualFactory(pin_class=VirtualPin)
    pins = load_pinmap()
    config = Config(game="all-wound-up", players=("Ada", "Ben"), seed=2, sound=False)
    box = make_box(factory, config=config, display="dummy")
    factory.pin(pins["ENC_A"]).drive_high()
    factory.pin(pins["ENC_B"]).drive_high()
    box.pump()
    yield box, factory, pins
    box.close()
    factory.reset()


def at(box, t):
    Clock.now = t
    box.queue.put(Wake())
    box.pump()


def tap(box, factory, pins, name, t, hold=0.08):
    Clock.now = t
    factory.pin(pins[name]).drive_low()
    Clock.now = t + hold
    factory.pin(pins[name]).drive_high()
    box.pump()


def encoder_click(box, factory, pins, t):
    """One clockwise detent: A then B close, A then B open (contacts pull the pin low)."""
    for i, (name, low) in enumerate((("ENC_A", True), ("ENC_B", True), ("ENC_A", False), ("ENC_B", False))):
        Clock.now = t + i * 0.002
        pin = factory.pin(pins[name])
        pin.drive_low() if low else pin.drive_high()
    box.pump()


def wind(box, factory, pins, steps, t, gap=0.05, start=0):
    """Drive the two hall pins through `steps` quadrature steps (negative = backwards)."""
    position = start
    for i in range(abs(steps)):
        old = CW[(position - 1) % 4]
        position += 1 if steps > 0 else -1
        new = CW[(position - 1) % 4]
        Clock.now = t + i * gap
        for sensor, index in (("HALL_A", 0), ("HALL_B", 1)):
            if old[index] != new[index]:
                pin = factory.pin(pins[sensor])
                pin.drive_high() if new[index] else pin.drive_low()
    box.pump()
    return position


def test_wind_two_turns_on_a_wind_two_card(rig):
    box, factory, pins = rig
    tap(box, factory, pins, "P2", 1.0)
    report = box.engine.report()
    assert report["phase"] == "winding" and report["check"]["player"] == "Ben"
    encoder_click(box, factory, pins, 1.5)                 # target 1 -> 2
    pos = wind(box, factory, pins, 6, 2.0)
    pos = wind(box, factory, pins, -2, 2.5, start=pos)      # a regrip: back two steps
    pos = wind(box, factory, pins, 4, 3.0, start=pos)       # net 8 steps = 2 turns
    assert box.engine.report()["check"]["steps"] == 8
    tap(box, factory, pins, "YES", 3.5)
    attempt = box.engine.report()["attempts"][-1]
    assert attempt == {"player": "Ben", "target": 2, "steps": 8, "turns": 2.0, "verdict": "exact"}
    assert box.engine.report()["phase"] == "idle"


def test_rocking_on_a_sensor_edge_then_settling_gives_too_few(rig):
    box, factory, pins = rig
    tap(box, factory, pins, "P1", 1.0)
    hall_a = factory.pin(pins["HALL_A"])
    for i in range(20):                                    # rock over A's edge: +1, -1, ...
        Clock.now = 2.0 + i * 0.01
        hall_a.drive_high() if i % 2 == 0 else hall_a.drive_low()
    box.pump()
    wind(box, factory, pins, 2, 3.0)                         # half a turn
    at(box, 3.1 + 1.6)                                       # still for settle_ms: the verdict
    attempt = box.engine.report()["attempts"][-1]
    assert attempt["steps"] == 2 and attempt["verdict"] == "too-few"
