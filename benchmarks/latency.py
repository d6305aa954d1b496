"""Figure 2, latency: a mock-pin edge to the decided buzz shown on the LEDs, in wall-clock time.

Headline, the daemon's own configuration: the real Box with its loop thread, the default 2 ms
settle window, the durable game log (fsync per record) on a real file on this machine's disk,
real screens, and at least 50 ms of idle before every press (cold caches, a sleeping loop).
Beside the latency, the loop thread's CPU time (`time.thread_time()` read on the loop thread:
as it enters its blocking wait before the press, and when the decision's last LED changes):
the press, the window's close, two log records with their fsyncs, the LEDs. The frame drawn
after the decision is reported apart (from that LED change to the loop's next wait). CPU time
does not depend on the machine's load; it is the figure a verdict rests on, and the one scaled
to a Pi Zero 2 W.

Second row, warm and bare (as this figure was measured before): settle window 0, no log,
0.2 ms between presses.

Ours: the real Box with its loop thread, Grab Bag (all seekers). The clock
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

import os
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
    ROOT,
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
DAEMON_PRESSES = int(os.environ.get("BENCH_DAEMON_PRESSES", "1000"))
IDLE_BEFORE_PRESS_S = 0.050
LEDS = tuple(PINS[f"LED{i}"] for i in range(1, 5))


@dataclass(frozen=True)
class Reset:
    """Put on a BenchBox's queue: release nothing, start a new game, say so."""
    done: threading.Event


class CpuQueue:
    """The box's queue, noting the loop thread's CPU time each time the loop starts a wait."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.cpu_at_wait = 0.0

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        self.cpu_at_wait = time.thread_time()
        return self.real.get(block, timeout)

    def get_nowait(self) -> Any:
        return self.real.get_nowait()

    def put(self, item: Any) -> None:
        self.real.put(item)

    def empty(self) -> bool:
        return bool(self.real.empty())


class BenchBox(Box):
    """The Box, plus one queue item the benchmark uses to reset the game between presses."""

    def idle(self) -> bool:
        return not self.stale and self.queue.empty() and self.engine.window is None

    def handle(self, item: Any) -> None:
        if isinstance(item, Reset):
            self.engine.new_game()
            self.refresh()
            item.done.set()
            return
        super().handle(item)


class LedWatch:
    """Stamps the moment the four LED pins first show `want` (called on the loop thread)."""

    def __init__(self, factory: JumpFactory, blank_after: bool = True) -> None:
        self.blank_after = blank_after
        self.pins = [factory.pin(n) for n in LEDS]
        self.want: tuple[int, ...] | None = None
        self.at = 0.0
        self.hit = threading.Event()
        self.real_render = app.render
        WatchedPin.on_change = self.changed

    def changed(self, _pin: Any, _value: bool) -> None:
        if self.want is not None and tuple(int(p.state) for p in self.pins) == self.want:
            self.at = time.perf_counter()
            self.cpu = time.thread_time()      # on the loop thread
            self.want = None
            if self.blank_after:
                app.render = lambda view: BLANK     # the rest of this round is not measured
            self.hit.set()

    def arm(self, winner: int) -> None:
        self.want = tuple(int(i == winner) for i in range(4))
        self.hit.clear()
        app.render = self.real_render

    def close(self) -> None:
        WatchedPin.on_change = None
        app.render = self.real_render


def ours(presses: int, *, daemon: bool = False, cpu: list[float] | None = None,
         frame_cpu: list[float] | None = None) -> list[float]:
    """`daemon`: the daemon's configuration (2 ms settle, the log on a real file, 50 ms idle
    before each press, real screens throughout); else settle 0, no log, warm."""
    factory = JumpFactory(pin_class=WatchedPin)
    # On this repository's disk (not a tmpfs /tmp): fsync must reach a real device.
    store_dir = tempfile.TemporaryDirectory(prefix="bench-latency-", dir=ROOT) if daemon else None
    store = GameLog(store_dir.name) if store_dir is not None else None
    box = make_box(grab_bag(settle_ms=2.0 if daemon else 0.0), factory, store=store)
    box.__class__ = BenchBox
    cpu_queue = CpuQueue(box.queue)
    box.queue = cpu_queue                            # type: ignore[assignment]
    for device in box.inputs.values():
        device.sink = cpu_queue
    watch = LedWatch(factory, blank_after=not daemon)
    rng = random.Random(11)
    out: list[float] = []
    box.start()
    try:
        for _ in range(presses):
            winner = rng.randrange(4)
            button = pin(factory, f"P{winner + 1}")
            watch.arm(winner)
            time.sleep(IDLE_BEFORE_PRESS_S if daemon else 0.0002)   # let the loop block on its queue
            cpu0 = cpu_queue.cpu_at_wait                # the loop is waiting since then
            start = time.perf_counter()
            button.drive_low()
            if not watch.hit.wait(5.0):
                raise RuntimeError("the buzz was never shown")
            out.append(watch.at - start)
            if cpu is not None and frame_cpu is not None:
                cpu.append(watch.cpu - cpu0)
                end = time.monotonic() + 5
                while not box.idle() and time.monotonic() < end:
                    time.sleep(0.0005)
                time.sleep(0.001)                         # the loop is back in its wait
                frame_cpu.append(cpu_queue.cpu_at_wait - watch.cpu)
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
    cpu: list[float] = []
    frame: list[float] = []
    daemon = summary(ours(DAEMON_PRESSES, daemon=True, cpu=cpu, frame_cpu=frame))
    cpu_ms, frame_ms = [c * 1000 for c in cpu], [c * 1000 for c in frame]
    daemon.update(settle_ms=2.0, idle_before_ms=1000 * IDLE_BEFORE_PRESS_S,
                  cpu_p50_ms=median(cpu_ms), cpu_p99_ms=percentile(cpu_ms, 99),
                  cpu_mean_ms=sum(cpu_ms) / len(cpu_ms),
                  frame_cpu_p50_ms=median(frame_ms), frame_cpu_p99_ms=percentile(frame_ms, 99))
    return {
        "daemon": daemon,
        "warm_settle0": summary(ours(PRESSES)),
        "floor": summary(floor(PRESSES)),
    }

