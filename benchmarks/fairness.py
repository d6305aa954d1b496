"""Figure 1, fairness: 10 000 close press pairs whose callbacks arrive in reverse order.

Each pair: a first press, a second 0.05-2 ms later (virtual clock), the second's callback
delivered first, both inside the 2 ms settle window. Ours: the real Box on mock pins (the
screens are blanked: drawing is not part of the decision). Baselines on the same pairs:
gpiozero `when_pressed` callbacks where the first to arrive wins, and (simulated from the same
timestamps) a 10 ms polling loop that scans P1..P4 in order, as many hobby buzzers do.
"""
from __future__ import annotations

import random
from typing import Any

from gpiozero import Button
from harness import (
    PINS,
    BlankScreens,
    Clock,
    VirtualFactory,
    VirtualPin,
    grab_bag,
    make_box,
    pin,
)

from pi_companion.app import Wake

PAIRS = 10_000
POLL_S = 0.010


def pairs(n: int, seed: int = 2026) -> list[tuple[int, int, float]]:
    rng = random.Random(seed)
    return [(*rng.sample(range(4), 2), rng.uniform(0.05e-3, 2e-3)) for _ in range(n)]  # type: ignore[misc]


def press_pair(factory: Any, first: int, second: int, gap: float) -> None:
    """Both presses on the virtual clock, the later one's callback delivered first."""
    pin(factory, f"P{first + 1}").drive_low()
    Clock.now += gap
    pin(factory, f"P{second + 1}").drive_low()
    VirtualPin.deliver(list(reversed(VirtualPin.held)))


def release_pair(factory: Any, first: int, second: int) -> None:
    Clock.now += 0.1
    pin(factory, f"P{first + 1}").drive_high()
    pin(factory, f"P{second + 1}").drive_high()
    VirtualPin.deliver(VirtualPin.held)


def ours(trials: list[tuple[int, int, float]]) -> int:
    Clock.now, VirtualPin.defer, VirtualPin.held = 0.0, True, []
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(grab_bag(settle_ms=2.0), factory)
    VirtualPin.held = []
    right = 0
    try:
        with BlankScreens():
            for i, (first, second, gap) in enumerate(trials):
                Clock.now = 10.0 + i
                press_pair(factory, first, second, gap)
                box.pump()
                Clock.now += 0.0025                     # past the 2 ms settle window
                box.queue.put(Wake())
                box.pump()
                buzz = box.engine.table.last_buzz
                right += buzz is not None and buzz.winner == first and box.leds.lit == {first}
                release_pair(factory, first, second)
                box.pump()
                box.engine.new_game()
    finally:
        box.close()
        factory.reset()
        VirtualPin.defer = False
    return right


def callback_order(trials: list[tuple[int, int, float]]) -> int:
    """gpiozero Buttons on the same deferring pins: the first `when_pressed` to run wins."""
    Clock.now, VirtualPin.defer, VirtualPin.held = 0.0, True, []
    factory = VirtualFactory(pin_class=VirtualPin)
    arrived: list[int] = []
    buttons = [Button(PINS[f"P{i}"], pin_factory=factory) for i in range(1, 5)]
    for i, button in enumerate(buttons):
        button.when_pressed = lambda i=i: arrived.append(i)
    VirtualPin.held = []
    right = 0
    try:
        for k, (first, second, gap) in enumerate(trials):
            Clock.now = 10.0 + k
            arrived.clear()
            press_pair(factory, first, second, gap)
            right += bool(arrived) and arrived[0] == first
            release_pair(factory, first, second)
    finally:
        for button in buttons:
            button.close()
        factory.reset()
        VirtualPin.defer = False
    return right


def polling(trials: list[tuple[int, int, float]], seed: int = 7) -> int:
    """A loop reading every button each 10 ms (random phase), lowest-numbered button first."""
    rng = random.Random(seed)
    right = 0
    for first, second, gap in trials:
        phase = rng.uniform(0.0, POLL_S)           # time from the first press to the next pass
        if gap < phase:                            # both seen in the same pass: scan order decides
            right += first < second
        else:
            right += 1
    return right


def run() -> dict[str, Any]:
    trials = pairs(PAIRS)
    return {
        "pairs": PAIRS,
        "ours_correct": ours(trials) / PAIRS,
        "callback_order_correct": callback_order(trials) / PAIRS,
        "polling_10ms_correct": polling(trials) / PAIRS,
    }
