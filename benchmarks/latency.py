"""Figure 2, latency: a mock-pin edge to the decided buzz shown on the LEDs, in wall-clock time.

Ours: the real Box with its loop thread, settle window 0, Grab Bag (all seekers). The clock
starts just before `drive_low()` on the main thread and stops when the loop thread has set the
LED pins to the decision (the winner's LED on, every other seeker's off) - the state changed
first, since the LEDs are drawn from it. Between presses the box is reset from inside its own
loop (a `Reset` item on its queue) and the screens of the reset are blanked, so only the
measured press draws real screens. The pins' clock (`Jump`) skips 10 ms at each release and
reset, so no edge falls in a 5 ms debounce window without the benchmark sleeping through it.

Floor: a bare gpiozero `Button.when_pressed` that turns an LED on, on the same mock pins (it
runs on the caller's thread, no queue, no thread switch).
"""
from __future__ import annotations

import random
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

from gpiozero import LED, Button
from harness import (
    BLANK,
    PINS,
    Jump,
    JumpFactory,
    WatchedPin,
    grab_bag,
    make_box,
    median,
    percentile,
    pin,
)

from pi_companion import app
from pi_companion.app import Box
from pi_companion.store import GameLog

PRESSES = 10_000
LOGGED_PRESSES = 1_000
LEDS = tuple(PINS[f"LED{i}"] for i in range(1, 5))


@dataclass(frozen=True)
class Reset:
    """Put on a BenchBox's queue: release nothing, start a new game, say so."""
    done: threading.Event


class BenchBox(Box):
    """The Box, plus one queue item the benchmark uses to reset the game between presses."""

    def handle(self, item: Any) -> None:
        if isinstance(item, Reset):
            self.engine.new_game()
            self.refresh()
            item.done.set()
            return
        super().handle(item)


class LedWatch:
    """Stamps the moment the four LED pins first show `want` (called on the loop thread)."""

    def __init__(self, factory: JumpFactory) -> None:
        self.pins = [factory.pin(n) for n in LEDS]
        self.want: tuple[int, ...] | None = None
        self.at = 0.0
        self.hit = threading.Event()
        self.real_render = app.render
        WatchedPin.on_change = self.changed

    def changed(self, _pin: Any, _value: bool) -> None:
        if self.want is not None and tuple(int(p.state) for p in self.pins) == self.want:
            self.at = time.perf_counter()
            self.want = None
            app.render = lambda view: BLANK     # the rest of this round is not measured
            self.hit.set()

    def arm(self, winner: int) -> None:
        self.want = tuple(int(i == winner) for i in range(4))
        self.hit.clear()
        app.render = self.real_render

    def close(self) -> None:
        WatchedPin.on_change = None
        app.render = self.real_render


def ours(presses: int, logged: bool = False) -> list[float]:
    factory = JumpFactory(pin_class=WatchedPin)
    store_dir = tempfile.TemporaryDirectory(prefix="bench-latency-") if logged else None
    store = GameLog(store_dir.name) if store_dir is not None else None
    box = make_box(grab_bag(settle_ms=0.0), factory, store=store)
    box.__class__ = BenchBox
    watch = LedWatch(factory)
    rng = random.Random(11)
    out: list[float] = []
    box.start()
    try:
        for _ in range(presses):
            winner = rng.randrange(4)
            button = pin(factory, f"P{winner + 1}")
            watch.arm(winner)
            time.sleep(0.0002)                       # let the loop block on its queue
            start = time.perf_counter()
            button.drive_low()
            if not watch.hit.wait(5.0):
                raise RuntimeError("the buzz was never shown")
            out.append(watch.at - start)
            buzz = box.engine.table.last_buzz
            assert buzz is not None and buzz.winner == winner and box.engine.game.phase == "judging"
            done = threading.Event()
            Jump.offset += 0.010                     # the box sees a 10 ms press: no bounce
            button.drive_high()
            box.queue.put(Reset(done))
            if not done.wait(5.0):
                raise RuntimeError("the box did not reset")
            Jump.offset += 0.010
    finally:
        watch.close()
        box.close()
        factory.reset()
        if store_dir is not None:
            store_dir.cleanup()
    return out


def floor(presses: int) -> list[float]:
    factory = JumpFactory(pin_class=WatchedPin)
    led = LED(PINS["LED1"], pin_factory=factory)
    button = Button(PINS["P1"], pin_factory=factory)
    lit = [0.0]
    WatchedPin.on_change = lambda _p, value: lit.__setitem__(0, time.perf_counter()) if value else None
    button.when_pressed = led.on
    out: list[float] = []
    try:
        for _ in range(presses):
            start = time.perf_counter()
            button.pin.drive_low()
            out.append(lit[0] - start)
            button.pin.drive_high()
            led.off()
    finally:
        WatchedPin.on_change = None
        button.close()
        led.close()
        factory.reset()
    return out


def summary(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"n": len(ms), "p50_ms": median(ms), "p99_ms": percentile(ms, 99), "max_ms": max(ms)}


def run() -> dict[str, Any]:
    return {
        "ours": summary(ours(PRESSES)),
        "ours_with_log": summary(ours(LOGGED_PRESSES, logged=True)),
        "floor": summary(floor(PRESSES)),
    }

