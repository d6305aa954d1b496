"""Figure 1, fairness: close press pairs whose callbacks arrive late and in reverse order.

Pumped (the decision logic): 10 000 pairs, a first press and a second 0.05-2 ms later on a
virtual clock, the second's callback delivered first, both inside the 2 ms settle window; the
real Box on mock pins, pumped synchronously. Baseline on the same pairs: gpiozero
`when_pressed` callbacks where the first to arrive wins.

Live (the box as it runs): the Box's own loop thread, the default 2 ms settle window, the real
screens. Each race: both buttons go down (the pins' levels change at the edges, as the lines
do), the later press's callback runs on one thread, the earlier press's on another 0.5, 1.5
or 3 ms later (edge ticks on the real clock, as a GPIO backend stamps them), while a thread
keeps a core busy hashing (CPU load that does not hold the interpreter lock). The same races,
interleaved, on two baselines: `NoLook`, this loop with the look at the pins patched out (the
window closes when due on the presses that have arrived), and `OldLoop`, the loop as it was
before issue 15 (a frame drawn inside the window, the window closed on a timeout without a
last look at the queue, no look at the pins). Without the look a callback that runs after the
2 ms window is due cannot count: every 3 ms one, and on a loaded machine many 0.5 ms ones
(a woken thread starts late); the figures record how late the callbacks really ran.

Polling baseline: a real thread that reads P1..P4 every 10 ms (in that order) while the main
thread presses two buttons 0.05-2 ms apart on mock pins, as many hobby buzzers do.
"""
from __future__ import annotations

import hashlib
import queue
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

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

from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin

from pi_companion.box import Box, Wake
from pi_companion.core.engine import PENDING_GRACE_S

PAIRS = 10_000
POLL_S = 0.010
POLL_PAIRS = 300
LIVE_DELAYS_MS = (0.5, 1.5, 3.0)
LIVE_RACES = 120                 # per delay and per loop


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


@dataclass(frozen=True)
class Call:
    fn: Callable[[Box], None]
    done: threading.Event


class LiveBox(Box):
    """The Box; a `Call` on its queue runs on the loop thread (the benchmark's reset)."""

    def handle(self, item: Any) -> None:
        if isinstance(item, Call):
            item.fn(self)
            item.done.set()
            return
        super().handle(item)


class NoLook(LiveBox):
    """This loop without the look at the pins when a window is due (the same-run baseline)."""

    def _look(self, upto: float) -> list[Any]:
        return []


class OldLoop(NoLook):
    """The loop before issue 15, for the same-run baseline."""

    def _turn(self) -> bool:
        deadline = self.engine.next_deadline()
        wait = 1.0 if deadline is None else min(1.0, max(0.0, deadline - self.now()))
        if self.stale and wait > 0 and self.queue.empty():
            self.draw()
            return True
        try:
            item = self.queue.get(timeout=wait)
        except queue.Empty:
            item = Wake()
        if item is None:
            return False
        self.handle(item)
        return True


def deliver(p: Any, ticks: float, pressed: bool) -> None:
    super(MockPin, p)._call_when_changed(ticks, 0 if pressed else 1)


class Callback(threading.Thread):
    def __init__(self, p: Any, delay_s: float, go: threading.Event) -> None:
        super().__init__(daemon=True)
        self.p, self.delay_s, self.go, self.ticks, self.at = p, delay_s, go, 0.0, 0.0

    def run(self) -> None:
        self.go.wait()
        if self.delay_s:
            time.sleep(self.delay_s)
        deliver(self.p, self.ticks, True)
        self.at = time.monotonic()


def hog(stop: threading.Event) -> None:
    block = bytes(1 << 20)
    while not stop.is_set():
        hashlib.sha256(block).digest()


def live_race(box: Box, factory: Any, first: int, second: int, gap: float,
              delay_s: float) -> tuple[bool, float]:
    """Whether the box decided for `first`, and how late (s) the earlier press's callback ran
    after the later edge."""
    a, b = pin(factory, f"P{first + 1}"), pin(factory, f"P{second + 1}")
    go = threading.Event()
    early, late = Callback(b, 0.0, go), Callback(a, delay_s, go)
    early.start()
    late.start()
    early.ticks = factory.ticks()
    late.ticks = early.ticks - gap
    a._change_state(False)               # both lines are down from their edges (pressed: low);
    b._change_state(False)               # the callbacks come later
    go.set()
    early.join()
    late.join()
    end = time.monotonic() + 5
    while not (box.engine.table.judging and box.engine.window is None):
        if time.monotonic() > end:
            raise RuntimeError("no decision")
        time.sleep(0.0005)
    buzz = box.engine.table.last_buzz
    right = buzz is not None and buzz.winner == first
    time.sleep(0.008)
    a._change_state(True)
    b._change_state(True)
    deliver(a, factory.ticks(), False)
    deliver(b, factory.ticks(), False)
    done = threading.Event()
    box.queue.put(Call(lambda bx: bx.engine.new_game(), done))  # type: ignore[arg-type]
    done.wait(5)
    time.sleep(0.008)
    return right, late.at - early.ticks


def live(races: int = LIVE_RACES, seed: int = 15) -> dict[str, Any]:
    rng = random.Random(seed)
    boxes = {}
    for name, cls in (("ours", LiveBox), ("no_look", NoLook), ("old_loop", OldLoop)):
        factory = MockFactory(pin_class=MockPWMPin)
        box = make_box(grab_bag(settle_ms=2.0), factory)
        box.__class__ = cls
        box.start()
        boxes[name] = (box, factory)
    stop = threading.Event()
    spinner = threading.Thread(target=hog, args=(stop,), daemon=True)
    spinner.start()
    right = {name: {d: 0 for d in LIVE_DELAYS_MS} for name in boxes}
    late: dict[float, list[float]] = {d: [] for d in LIVE_DELAYS_MS}
    try:
        for delay_ms in LIVE_DELAYS_MS:
            for _ in range(races):
                first, second = rng.sample(range(4), 2)
                gap = rng.uniform(0.05e-3, 2e-3)
                for name, (box, factory) in boxes.items():
                    ok, late_s = live_race(box, factory, first, second, gap, delay_ms / 1000)
                    right[name][delay_ms] += ok
                    late[delay_ms].append(late_s)
    finally:
        stop.set()
        spinner.join()
        for box, factory in boxes.values():
            box.close()
            factory.reset()
    def lateness(xs: list[float]) -> dict[str, float]:
        xs = sorted(xs)
        return {"p50_ms": 1000 * xs[len(xs) // 2], "p99_ms": 1000 * xs[int(0.99 * (len(xs) - 1))],
                "max_ms": 1000 * xs[-1], "past_window": sum(x > 0.002 for x in xs) / len(xs)}
    return {"races_per_delay": races, "settle_ms": 2.0, "grace_ms": 1000 * PENDING_GRACE_S,
            **{name: {str(d): n / races for d, n in per.items()} for name, per in right.items()},
            "callback_late": {str(d): lateness(xs) for d, xs in late.items()}}


def polling(pairs_n: int = POLL_PAIRS, seed: int = 7) -> float:
    """A real thread reading P1..P4 every 10 ms; the first pass that sees a press decides."""
    rng = random.Random(seed)
    factory = MockFactory(pin_class=MockPWMPin)
    buttons = [Button(PINS[f"P{i}"], pin_factory=factory) for i in range(1, 5)]
    decided: list[int] = []
    seen = threading.Event()
    stop = threading.Event()

    def poll() -> None:
        armed = True
        while not stop.is_set():
            states = [b.is_pressed for b in buttons]
            if armed and any(states):
                decided.append(states.index(True))
                armed = False
                seen.set()
            elif not any(states):
                armed = True
            time.sleep(POLL_S)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    right = 0
    try:
        for _ in range(pairs_n):
            first, second = rng.sample(range(4), 2)
            gap = rng.uniform(0.05e-3, 2e-3)
            time.sleep(rng.uniform(0, POLL_S))          # the press comes at any phase of the poll
            seen.clear()
            buttons[first].pin.drive_low()
            t = time.perf_counter() + gap
            while time.perf_counter() < t:
                pass
            buttons[second].pin.drive_low()
            seen.wait(1)
            right += bool(decided) and decided[-1] == first
            buttons[first].pin.drive_high()
            buttons[second].pin.drive_high()
            time.sleep(2.5 * POLL_S)
    finally:
        stop.set()
        poller.join()
        for b in buttons:
            b.close()
        factory.reset()
    return right / pairs_n


def run() -> dict[str, Any]:
    trials = pairs(PAIRS)
    return {
        "pairs": PAIRS,
        "ours_correct": ours(trials) / PAIRS,
        "callback_order_correct": callback_order(trials) / PAIRS,
        "polling_10ms_correct": polling(),
        "polling_pairs": POLL_PAIRS,
        "live": live(),
    }
