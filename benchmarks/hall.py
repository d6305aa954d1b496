"""Figure 3, hall decoding: quadrature edges per second, with every step counted.

Three depths: the pure decoder (`core.quadrature`), the engine fed `HallLevel` events (debounce,
timers, the All Wound Up check), and end to end: gpiozero mock pins driven as fast as the main
thread can, through the edge queue and the Box's loop thread into an open wind check - without
a game log, and with the durable log on a real file (the daemon's configuration; one fsync per
edge until the log's writer group-commits). The
yardstick is a fast hand: 10 turns a second of a 4-step-per-turn turntable = 40 edges/s.
"""
from __future__ import annotations

import queue
import tempfile
import threading
import time
from typing import Any

from harness import ROOT, Jump, JumpFactory, WatchedPin, make_box, pin

from pi_companion.box import FRAME_S
from pi_companion.config import Config
from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, HallLevel
from pi_companion.core.quadrature import Quadrature
from pi_companion.gamelog import GameLog
from pi_companion.games import registry

HAND_EDGES_PER_S = 40
DECODER_EDGES = 400_000
ENGINE_EDGES = 100_000
BOX_EDGES = 2_000
# Fewer with the log on: at a few hundred fsyncs a second, 2 000 edges would put the loop more
# than 10 s behind the pins, and the box takes edges that old for a clock that jumped.
LOGGED_EDGES = 500
# Clockwise seen from above: (A, B) = 00 -> 10 -> 11 -> 01 -> 00, one step per edge.
FORWARD = (("A", 1), ("B", 1), ("A", 0), ("B", 0))
PLAYERS = ("Ada", "Ben", "Cy", "Di")


def decoder(n: int) -> dict[str, Any]:
    q = Quadrature()
    edges = [FORWARD[i % 4] for i in range(n)]
    start = time.perf_counter()
    for sensor, level in edges:
        q.set_level(sensor, level)
    elapsed = time.perf_counter() - start
    return {"edges": n, "edges_per_s": n / elapsed, "lost_steps": n - q.net, "invalid": q.invalid}


def engine(n: int) -> dict[str, Any]:
    e = Engine(registry.get("all-wound-up"), PLAYERS, {}, 1)
    e.feed(Edge(1.0, "P1", True))
    e.feed(Edge(1.1, "P1", False))
    events = [HallLevel(2.0 + i * 1e-4, *FORWARD[i % 4]) for i in range(n)]
    start = time.perf_counter()
    for event in events:
        e.feed(event)
    elapsed = time.perf_counter() - start
    steps = e.game.check.steps
    return {"edges": n, "edges_per_s": n / elapsed, "lost_steps": n - steps, "invalid": e.hall.invalid}


def open_check(factory: Any) -> dict[tuple[str, int], Any]:
    """P1 pressed and released (it opens the wind check); the hall pins' drivers by (sensor, level)."""
    a, b = pin(factory, "HALL_A"), pin(factory, "HALL_B")
    p1 = pin(factory, "P1")
    p1.drive_low()
    Jump.offset += 0.05
    p1.drive_high()
    return {("A", 1): a.drive_high, ("A", 0): a.drive_low, ("B", 1): b.drive_high, ("B", 0): b.drive_low}


def box(n: int, logged: bool = False) -> dict[str, Any]:
    """Mock pins -> edge queue -> the Box's loop thread -> the engine; wall clock throughout."""
    factory = JumpFactory(pin_class=WatchedPin)
    # The longest settle wait: a loaded machine may stall the driving thread for a second or
    # more, and the check must stay open however slowly the edges come.
    config = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False,
                    games={"all-wound-up": {"settle_ms": 10000}})
    store_dir = tempfile.TemporaryDirectory(prefix="bench-hall-", dir=ROOT) if logged else None
    store = GameLog(store_dir.name) if store_dir is not None else None
    b = make_box(config, factory, store=store)
    b.start()
    drive = open_check(factory)
    try:
        wait_for(lambda: b.handled >= 2)            # the press opened the check; the release is in
        assert b.engine.game.check is not None
        before = b.handled
        start = time.perf_counter()
        for i in range(n):
            drive[FORWARD[i % 4]]()
        wait_for(lambda: b.handled - before >= n, timeout=120)
        elapsed = time.perf_counter() - start
        check = b.engine.game.check
        steps = check.steps if check is not None else 0
        return {"edges": n, "edges_per_s": n / elapsed, "lost_steps": n - steps,
                "invalid": b.engine.hall.invalid}
    finally:
        b.close()
        factory.reset()
        if store_dir is not None:
            store_dir.cleanup()


HAND_FAST_EDGES_PER_S = 80    # a fast spin (#27 item 3)
PACED_EDGES = 400             # 5 s of it
SPIN_ROUNDS = 3               # interleaved: every edge / coalesced / no frames, three times


def loop_cpu(box: Any) -> float:
    """The Box's loop thread's CPU time so far (read from another thread)."""
    return time.clock_gettime(time.pthread_getcpuclockid(box.thread.ident))


def paced(n: int, rate: float, *, coalesce: bool, frames_drawn: bool = True,
          tray: bool = True) -> dict[str, Any]:
    """The daemon's configuration (the log on a real file, luma's dummy OLED) fed `rate` hall
    edges a second: the loop thread's CPU time per edge, from before the first edge to the frame
    that shows the last count. `coalesce` False: every edge draws its own frame and renders
    its count afresh, as before #27 item 3 (the same run's baseline). `frames_drawn` False: no
    frame is rendered or sent at all (the floor: what the edges alone cost the loop)."""
    from pi_companion.ui import canvas
    factory = JumpFactory(pin_class=WatchedPin)
    config = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False,
                    games={"all-wound-up": {"settle_ms": 10000}})
    store_dir = tempfile.TemporaryDirectory(prefix="bench-hall-", dir=ROOT)
    b = make_box(config, factory, store=GameLog(store_dir.name))
    frames: list[int] = []
    b.on_frame = lambda _: frames.append(b.engine.game.check.steps if b.engine.game.check else -1)
    saved_digits = canvas.DIGIT_CACHE
    if not tray:
        b.inbox.snooze = lambda: None  # type: ignore[method-assign]
    if not coalesce:
        b.frame_s = 0.0
        canvas.DIGIT_CACHE = False
    if not frames_drawn:
        def no_frame() -> None:
            b.stale = False
            b.on_frame(None)
        b.draw = no_frame  # type: ignore[method-assign]
        b._frame_hold = lambda: None  # type: ignore[method-assign]   # no frame waits for anything
    b.start()
    drive = open_check(factory)
    try:
        wait_for(lambda: b.handled >= 2 and not b.stale)
        time.sleep(0.1)
        before, shown, cpu0 = b.handled, len(frames), loop_cpu(b)
        pin_cpu = 0.0
        start = time.perf_counter()
        for i in range(n):
            due = start + i / rate
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            c = time.thread_time()
            drive[FORWARD[i % 4]]()
            pin_cpu += time.thread_time() - c
        wait_for(lambda: b.handled - before >= n and not b.stale and frames and frames[-1] == n,
                 timeout=60)
        cpu = loop_cpu(b) - cpu0
        steps = b.engine.game.check.steps
        return {"edges": n, "rate": rate, "loop_cpu_per_edge_ms": 1000 * cpu / n,
                "pin_cpu_per_edge_ms": 1000 * pin_cpu / n,
                "frames": len(frames) - shown, "last_frame_count": frames[-1], "lost_steps": n - steps}
    finally:
        canvas.DIGIT_CACHE = saved_digits
        b.close()
        factory.reset()
        store_dir.cleanup()


WAKES = 150                   # 5 s of frame periods


def wake_floor() -> dict[str, Any]:
    """What waking at every frame's time costs a Python thread on this machine, whatever it
    does once awake: a bare thread waiting on a queue with the frame period as its timeout,
    `WAKES` times, doing nothing, and the same thread drawing one of our live-count frames a
    wake (All Wound Up's check at 10.25 turns: render and the display's compare), beside both
    done back to back without sleeping (warm). CPU time of that thread per wake; the floor
    under `spin_coalesced`, which wakes once a frame as well."""
    factory = JumpFactory(pin_class=WatchedPin)
    config = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False,
                    games={"all-wound-up": {"settle_ms": 10000}})
    b = make_box(config, factory)
    try:
        drive = open_check(factory)
        for i in range(41):
            drive[FORWARD[i % 4]]()
        b.pump()

        def frame() -> None:
            b.stale = True
            b.draw()

        def per_wake(period: float, work: Any) -> float:
            inbox: queue.Queue[None] = queue.Queue()
            out: list[float] = []

            def run() -> None:
                start = time.thread_time()
                for _ in range(WAKES):
                    try:
                        inbox.get(timeout=period)
                    except queue.Empty:
                        pass
                    work()
                out.append((time.thread_time() - start) / WAKES)
            thread = threading.Thread(target=run)
            thread.start()
            thread.join()
            return 1e6 * out[0]
        return {"period_s": FRAME_S, "wakes": WAKES,
                "nothing_us": per_wake(FRAME_S, lambda: None),
                "frame_us": per_wake(FRAME_S, frame),
                "nothing_warm_us": per_wake(0.0, lambda: None),
                "frame_warm_us": per_wake(0.0, frame)}
    finally:
        b.close()
        factory.reset()


def wait_for(predicate: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise RuntimeError("timed out")
        time.sleep(0.001)


def run() -> dict[str, Any]:
    return {
        "hand_edges_per_s": HAND_EDGES_PER_S,
        "decoder": decoder(DECODER_EDGES),
        "engine": engine(ENGINE_EDGES),
        "box": box(BOX_EDGES),
        "box_logged": box(LOGGED_EDGES, logged=True),
        **spin(),
    }


def spin() -> dict[str, Any]:
    """A fast hand's spin, before and after #27 item 3, interleaved in the same run: every
    edge drawn (before), frames coalesced with the hall edges waiting for them (now), frames
    coalesced but every edge waking the loop (before the inbox's tray), no frames at all."""
    runs: dict[str, list[dict[str, Any]]] = {"spin_every_edge": [], "spin_coalesced": [],
                                             "spin_no_tray": [], "spin_no_frames": []}
    for _ in range(SPIN_ROUNDS):
        runs["spin_every_edge"].append(paced(PACED_EDGES, HAND_FAST_EDGES_PER_S, coalesce=False))
        runs["spin_coalesced"].append(paced(PACED_EDGES, HAND_FAST_EDGES_PER_S, coalesce=True))
        runs["spin_no_tray"].append(paced(PACED_EDGES, HAND_FAST_EDGES_PER_S, coalesce=True, tray=False))
        runs["spin_no_frames"].append(paced(PACED_EDGES, HAND_FAST_EDGES_PER_S, coalesce=True,
                                            frames_drawn=False))
    out: dict[str, Any] = {}
    for key, rows in runs.items():      # the median round (each round is 5 s of a loaded machine)
        rows.sort(key=lambda r: r["loop_cpu_per_edge_ms"])
        out[key] = {**rows[len(rows) // 2], "rounds_ms": [round(r["loop_cpu_per_edge_ms"], 3) for r in rows]}
    out["spin_frame_s"] = FRAME_S
    out["spin_wake_floor"] = wake_floor()
    return out
