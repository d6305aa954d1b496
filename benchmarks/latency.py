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
import queue
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
    QueueProxy,
    WatchedPin,
    grab_bag,
    make_box,
    median,
    percentile,
    pin,
)

from pi_companion.box import Box, Wake, frames
from pi_companion.gamelog import GameLog
from pi_companion.hw.inputs import RawEdge

PRESSES = 10_000
DAEMON_PRESSES = int(os.environ.get("BENCH_DAEMON_PRESSES", "1000"))
IDLE_BEFORE_PRESS_S = 0.050
WARM_IDLE_S = 0.0005              # the same presses, warm: the share of the CPU that is cold caches
WARM_PRESSES = 300
FLOOR_PRESSES = 200
SETTLE_MS = 2.0                   # the daemon's default settle window
LEDS = tuple(PINS[f"LED{i}"] for i in range(1, 5))


@dataclass(frozen=True)
class Reset:
    """Put on a BenchBox's queue: release nothing, start a new game, say so."""
    done: threading.Event


class CpuQueue(QueueProxy):
    """The box's queue, noting the loop thread's CPU time each time the loop starts a wait.

    `frame_done`, once armed (on the loop thread, at the decision's last LED change), is set at
    the first wait the loop starts with its frame drawn (`box.stale` false): `frame_end` is the
    loop's CPU time then. The frame is drawn between the two, after the decision."""

    def __init__(self, real: Any, box: Box) -> None:
        super().__init__(real)
        self.box = box
        self.cpu_at_wait = 0.0
        self.frame_done: threading.Event | None = None
        self.frame_end = 0.0

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        self.cpu_at_wait = cpu = time.thread_time()
        if self.frame_done is not None and not self.box.stale:
            self.frame_end = cpu
            done, self.frame_done = self.frame_done, None
            done.set()
        return self.real.get(block, timeout)


class BenchBox(Box):
    """The Box, plus one queue item the benchmark uses to reset the game between presses, and
    wall-clock stamps of where a decision's time goes: the loop taking the press (`edge`), the
    loop taking the window's close (`close`), the wait for the presses' records to be durable
    before the LEDs (`durable`, `durable_end`)."""
    stamps: dict[str, float]

    def handle(self, item: Any) -> None:
        if isinstance(item, Reset):
            self.engine.new_game()
            self.refresh()
            item.done.set()
            return
        if isinstance(item, RawEdge):
            self.stamps.setdefault("edge", time.perf_counter())
        elif self.engine.window is not None and isinstance(item, Wake) and item.event is None:
            self.stamps.setdefault("close", time.perf_counter())
        super().handle(item)

    def _durable(self, seq: int) -> None:
        self.stamps.setdefault("durable", time.perf_counter())
        super()._durable(seq)
        self.stamps.setdefault("durable_end", time.perf_counter())


class WaitingLampBox(BenchBox):
    """The lamp as it was before #27 item 1 (the same run's baseline): a decided buzz's LEDs
    and tone wait until every record handed so far (the presses that decided it) is durable."""

    def _show_now(self, effects: list[Any]) -> None:
        self._durable(self.store.seq if self.store is not None else 0)
        super()._show_now(effects)


class LedWatch:
    """Stamps the moment the four LED pins first show `want` (called on the loop thread).

    The stamps are taken first, before the check, so the CPU window ends at the last LED write
    and the check itself (the benchmark's own work) stays out of it as far as it can."""

    def __init__(self, factory: JumpFactory, blank_after: bool = True,
                 cpu_queue: CpuQueue | None = None) -> None:
        self.blank_after = blank_after
        self.cpu_queue = cpu_queue
        self.pins = [factory.pin(n) for n in LEDS]
        self.index = {p: i for i, p in enumerate(self.pins)}
        self.state = [0, 0, 0, 0]
        self.want: list[int] | None = None
        self.at = 0.0
        self.cpu = 0.0
        self.hit = threading.Event()
        self.frame = threading.Event()
        self.real_render = frames.render
        WatchedPin.on_change = self.changed

    def changed(self, pin: Any, value: bool) -> None:
        at, cpu = time.perf_counter(), time.thread_time()     # on the loop thread
        i = self.index.get(pin)
        if i is None:
            return
        self.state[i] = int(value)
        if self.want is not None and self.state == self.want:
            self.at, self.cpu = at, cpu
            self.want = None
            if self.blank_after:
                frames.render = lambda *_: BLANK     # the rest of this round is not measured
            elif self.cpu_queue is not None:
                self.cpu_queue.frame_done = self.frame  # the loop's next wait with a frame drawn
            self.hit.set()

    def arm(self, winner: int) -> None:
        self.state = [int(p.state) for p in self.pins]
        self.want = [int(i == winner) for i in range(4)]
        self.hit.clear()
        self.frame.clear()
        frames.render = self.real_render

    def close(self) -> None:
        WatchedPin.on_change = None
        frames.render = self.real_render


def ours(presses: int, *, daemon: bool = False, cpu: list[float] | None = None,
         frame_cpu: list[float] | None = None,
         phases: dict[str, list[float]] | None = None, idle_s: float | None = None,
         sync_delay_s: float = 0.0, lamp_waits: bool = False) -> list[float]:
    """`daemon`: the daemon's configuration (2 ms settle, the log on a real file, 50 ms idle
    before each press, real screens throughout); else settle 0, no log, warm. `idle_s`: another
    idle time before each press. `sync_delay_s`: every sync of the log takes that much longer."""
    if idle_s is None:
        idle_s = IDLE_BEFORE_PRESS_S if daemon else 0.0002
    factory = JumpFactory(pin_class=WatchedPin)
    # On this repository's disk (not a tmpfs /tmp): fsync must reach a real device.
    store_dir = tempfile.TemporaryDirectory(prefix="bench-latency-", dir=ROOT) if daemon else None
    store = GameLog(store_dir.name) if store_dir is not None else None
    if store is not None and sync_delay_s:
        store.sync = slow_sync(store.sync, sync_delay_s)
    box = make_box(grab_bag(settle_ms=SETTLE_MS if daemon else 0.0), factory, store=store)
    box.__class__ = WaitingLampBox if lamp_waits else BenchBox
    assert isinstance(box, BenchBox)
    box.stamps = {}
    cpu_queue = CpuQueue(box.queue, box)
    box.queue = cpu_queue                            # type: ignore[assignment]
    for device in box.inputs.values():
        device.post = cpu_queue.put                  # (the hall: no tray; Grab Bag has no spin)
    watch = LedWatch(factory, blank_after=not daemon, cpu_queue=cpu_queue)
    rng = random.Random(11)
    out: list[float] = []
    box.start()
    try:
        for _ in range(presses):
            winner = rng.randrange(4)
            button = pin(factory, f"P{winner + 1}")
            watch.arm(winner)
            time.sleep(idle_s)                          # let the loop block on its queue
            cpu0 = cpu_queue.cpu_at_wait                # the loop is waiting since then
            box.stamps = {}
            start = time.perf_counter()
            button.drive_low()
            if not watch.hit.wait(5.0):
                raise RuntimeError("the buzz was never shown")
            out.append(watch.at - start)
            if phases is not None:
                note_phases(phases, box.stamps, start, watch.at)
            if cpu is not None and frame_cpu is not None:
                cpu.append(watch.cpu - cpu0)
                if not watch.frame.wait(5.0):
                    raise RuntimeError("the frame after the buzz was never drawn")
                frame_cpu.append(cpu_queue.frame_end - watch.cpu)
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


def slow_sync(sync: Any, delay_s: float) -> Any:
    """The log's fdatasync with `delay_s` added to every call (an SD card's slow sync; the
    benchmark's own injection: #27 item 1)."""
    def slow(fd: int) -> None:
        time.sleep(delay_s)
        sync(fd)
    return slow


SYNC_DELAYS_MS = (0, 5, 20, 100)
SYNC_DELAY_PRESSES = int(os.environ.get("BENCH_SYNC_DELAY_PRESSES", "150"))


def sync_delay() -> dict[str, Any]:
    """Press -> LED in the daemon's configuration with every sync of the log delayed by 0, 5, 20,
    100 ms, and the loop's CPU from its wait before the press to the LED; beside each, the same
    with the lamp waiting for the press's sync as before #27 item 1 (`WaitingLampBox`). The
    cells are interleaved in blocks, so the machine's load drifts hit every cell alike."""
    cells = [(d, w) for d in SYNC_DELAYS_MS for w in (False, True)]
    samples: dict[tuple[int, bool], list[float]] = {c: [] for c in cells}
    cpus: dict[tuple[int, bool], list[float]] = {c: [] for c in cells}
    blocks = 3
    for _ in range(blocks):
        for delay, waits in cells:
            samples[delay, waits] += ours(SYNC_DELAY_PRESSES // blocks, daemon=True,
                                          cpu=cpus[delay, waits], frame_cpu=[],
                                          sync_delay_s=delay / 1000, lamp_waits=waits)
    out: dict[str, Any] = {}
    for delay, waits in cells:
        row = summary(samples[delay, waits])
        cpu_ms = [c * 1000 for c in cpus[delay, waits]]
        row.update(cpu_p50_ms=median(cpu_ms), cpu_p99_ms=percentile(cpu_ms, 99))
        out[f"{delay}{' lamp waits' if waits else ''}"] = row
    return out


def wait_floor(presses: int) -> list[float]:
    """The loop CPU a buzz costs with no work at all: a thread blocked on a SimpleQueue is woken
    by a put from another thread after the same idle as the headline's presses, then waits on
    the queue for the settle window until it times out - the two waits every decision needs.
    Its CPU time (`time.thread_time`, which counts the kernel's share) from before the first
    wait to after the second, per press. On this VM a timed wait is charged CPU time that grows
    with its length (about 15 us for 0.1 ms, 50 us for 2 ms, 100 us for 10 ms)."""
    q: "queue.SimpleQueue[int | None]" = queue.SimpleQueue()
    done = threading.Event()
    out: list[float] = []

    def loop() -> None:
        while True:
            cpu0 = time.thread_time()
            if q.get() is None:
                return
            try:
                q.get(timeout=SETTLE_MS / 1000)
            except queue.Empty:
                pass
            out.append(time.thread_time() - cpu0)
            done.set()

    thread = threading.Thread(target=loop, name="floor-loop")
    thread.start()
    try:
        for _ in range(presses):
            time.sleep(IDLE_BEFORE_PRESS_S)
            done.clear()
            q.put(1)
            if not done.wait(5.0):
                raise RuntimeError("the floor loop did not wake")
    finally:
        q.put(None)
        thread.join()
    return out


def note_phases(phases: dict[str, list[float]], stamps: dict[str, float], start: float, lit: float) -> None:
    """Split one press's latency: until the loop takes the press; the window's close after its
    due time (the press's tick, taken just after `start`, plus the settle window); the wait
    for the presses' records to be durable; the rest (the decision and the LED writes)."""
    edge, close = stamps.get("edge", start), stamps.get("close", lit)
    durable = stamps.get("durable_end", close) - stamps.get("durable", close)
    for key, value in (("wake", edge - start), ("close_late", close - start - SETTLE_MS / 1000),
                       ("durable_wait", durable), ("decide_and_leds", lit - close - durable)):
        phases.setdefault(key, []).append(value)


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
    phases: dict[str, list[float]] = {}
    daemon = summary(ours(DAEMON_PRESSES, daemon=True, cpu=cpu, frame_cpu=frame, phases=phases))
    cpu_ms, frame_ms = [c * 1000 for c in cpu], [c * 1000 for c in frame]
    daemon.update(settle_ms=SETTLE_MS, idle_before_ms=1000 * IDLE_BEFORE_PRESS_S,
                  cpu_p50_ms=median(cpu_ms), cpu_p99_ms=percentile(cpu_ms, 99),
                  cpu_mean_ms=sum(cpu_ms) / len(cpu_ms),
                  frame_cpu_p50_ms=median(frame_ms), frame_cpu_p99_ms=percentile(frame_ms, 99),
                  phases_ms={k: {"p50": 1000 * median(v), "p99": 1000 * percentile(v, 99)}
                             for k, v in phases.items()})
    warm_cpu: list[float] = []
    ours(WARM_PRESSES, daemon=True, cpu=warm_cpu, frame_cpu=[], idle_s=WARM_IDLE_S)
    daemon["cpu_warm_p50_ms"] = 1000 * median(warm_cpu)
    daemon["warm_idle_ms"] = 1000 * WARM_IDLE_S
    daemon["cpu_wait_floor_p50_ms"] = 1000 * median(wait_floor(FLOOR_PRESSES))
    return {
        "daemon": daemon,
        "warm_settle0": summary(ours(PRESSES)),
        "floor": summary(floor(PRESSES)),
        "sync_delay": sync_delay(),
    }

