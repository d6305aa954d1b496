"""Figure 8, durability: syncs per decision and per wind, hall edges/s with the log on, and
what one sync costs (fsync, fdatasync, fdatasync into a preallocated file).

All on the live Box: its loop thread, mock pins stamped with real time (`Jump`), the daemon's
default settle window (2 ms) and a real `GameLog` on a real file in a temporary directory.
Baseline, same run: the same Box with a log that waits for every record's own sync before the
loop goes on (the one-fsync-per-record design the group-committing writer replaced).

- decision: a seeker presses, the 2 ms window closes, the Grab Master's YES is judged; the
  figure is syncs per decision, and press -> winner's LED (ms) beside it.
- wind: All Wound Up: a press opens a check, 16 hall edges 1 ms apart, the settle verdict;
  syncs per wind.
- hall: five wind checks of 2 000 edges each, HALL_A/HALL_B driven as fast as the main thread
  can while the loop takes the edges, with the log on (goal >= 10 000 edges/s) and without it.
"""
from __future__ import annotations

import os
import tempfile
import threading
import time
from typing import Any

from harness import BLANK, PINS, Jump, JumpFactory, WatchedPin, grab_bag, make_box, median, percentile, pin

from pi_companion.box import Wake, frames
from pi_companion.config import Config
from pi_companion.gamelog import GameLog

DECISIONS = 150
WINDS = 40
HALL_ROUNDS = 5
HALL_EDGES_PER_CHECK = 2_000
SYNC_SAMPLES = 300
FORWARD = (("A", 1), ("B", 1), ("A", 0), ("B", 0))
PLAYERS = ("Ada", "Ben", "Cy", "Di")


class PerRecordLog(GameLog):
    """The baseline: every record waits for its own sync before the loop goes on."""

    def append(self, record: dict[str, Any]) -> int:
        seq = super().append(record)
        self.wait(seq)
        return seq


def wait_for(predicate: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise RuntimeError("timed out")
        time.sleep(0.0005)


def decisions(n: int, log_class: type[GameLog]) -> dict[str, Any]:
    factory = JumpFactory(pin_class=WatchedPin)
    leds = [factory.pin(PINS[f"LED{i}"]) for i in range(1, 5)]
    lit_at: list[float] = [0.0]
    want: list[tuple[int, ...] | None] = [None]

    def changed(_pin: Any, _value: bool) -> None:     # on the loop thread: the winner alone lit
        if want[0] is not None and tuple(int(p.state) for p in leds) == want[0]:
            lit_at[0], want[0] = time.perf_counter(), None
    WatchedPin.on_change = changed
    frames.render, real_render = (lambda *_: BLANK), frames.render
    with tempfile.TemporaryDirectory(prefix="bench-durability-") as state:
        store = log_class(state)
        box = make_box(grab_bag(settle_ms=2.0, variant="standard"), factory, store=store)
        box.start()
        latencies: list[float] = []
        try:
            wait_for(lambda: store.durable >= store.seq)
            syncs, lines = store.syncs, store.lines
            for i in range(n):
                master = box.engine.game.grab_master
                seeker = (master + 1 + i % 3) % 4
                lit_at[0] = 0.0
                want[0] = tuple(int(k == seeker) for k in range(4))
                p = pin(factory, f"P{seeker + 1}")
                time.sleep(0.005)
                start = time.perf_counter()
                p.drive_low()
                wait_for(lambda: box.engine.game.phase == "judging" and lit_at[0] > 0)
                latencies.append(lit_at[0] - start)
                Jump.offset += 0.05
                p.drive_high()
                yes = pin(factory, "YES")
                Jump.offset += 0.05
                yes.drive_low()
                Jump.offset += 0.05
                yes.drive_high()
                wait_for(lambda: box.engine.game.phase != "judging")
                Jump.offset += 0.05
            wait_for(lambda: store.durable >= store.seq)
            syncs, lines = store.syncs - syncs, store.lines - lines
        finally:
            box.close()
            factory.reset()
            WatchedPin.on_change = None
            frames.render = real_render
    return {"decisions": n, "records": lines, "syncs": syncs, "syncs_per_decision": syncs / n,
            "records_per_decision": lines / n, "press_to_led_p50_ms": 1000 * median(latencies),
            "press_to_led_p99_ms": 1000 * percentile(latencies, 99)}


def winds(n: int, log_class: type[GameLog]) -> dict[str, Any]:
    factory = JumpFactory(pin_class=WatchedPin)
    frames.render, real_render = (lambda *_: BLANK), frames.render
    config = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False)
    with tempfile.TemporaryDirectory(prefix="bench-durability-") as state:
        store = log_class(state)
        box = make_box(config, factory, store=store)
        box.start()
        a, b = pin(factory, "HALL_A"), pin(factory, "HALL_B")
        drive = {("A", 1): a.drive_high, ("A", 0): a.drive_low, ("B", 1): b.drive_high, ("B", 0): b.drive_low}
        phase = 0
        try:
            wait_for(lambda: store.durable >= store.seq)
            syncs, lines = store.syncs, store.lines
            for i in range(n):
                checks = len(box.engine.game.attempts)
                p = pin(factory, f"P{i % 4 + 1}")
                p.drive_low()
                Jump.offset += 0.08
                p.drive_high()
                wait_for(lambda: box.engine.game.check is not None)
                for _ in range(16):
                    time.sleep(0.001)
                    drive[FORWARD[phase % 4]]()
                    phase += 1
                Jump.offset += 2.0                      # past the settle: the verdict
                box.queue.put(Wake())
                wait_for(lambda: len(box.engine.game.attempts) > checks)
                Jump.offset += 0.5
            wait_for(lambda: store.durable >= store.seq)
            syncs, lines = store.syncs - syncs, store.lines - lines
        finally:
            box.close()
            factory.reset()
            frames.render = real_render
    return {"winds": n, "records": lines, "syncs": syncs, "syncs_per_wind": syncs / n,
            "records_per_wind": lines / n}


def hall(rounds: int, logged: bool) -> dict[str, Any]:
    """`rounds` wind checks of HALL_EDGES_PER_CHECK edges each, driven as fast as possible."""
    factory = JumpFactory(pin_class=WatchedPin)
    config = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False)
    edges = steps = syncs = 0
    elapsed = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-durability-") as state:
        store = GameLog(state) if logged else None
        box = make_box(config, factory, store=store)
        box.start()
        a, b = pin(factory, "HALL_A"), pin(factory, "HALL_B")
        drive = {("A", 1): a.drive_high, ("A", 0): a.drive_low, ("B", 1): b.drive_high, ("B", 0): b.drive_low}
        phase = 0
        try:
            for r in range(rounds):
                p = pin(factory, f"P{r % 4 + 1}")
                p.drive_low()
                Jump.offset += 0.05
                p.drive_high()
                wait_for(lambda: box.engine.game.check is not None)
                before = box.handled
                done = syncs if store is None else store.syncs
                start = time.perf_counter()
                for _ in range(HALL_EDGES_PER_CHECK):
                    drive[FORWARD[phase % 4]]()
                    phase += 1
                wait_for(lambda: box.handled - before >= HALL_EDGES_PER_CHECK, timeout=120)
                if store is not None:
                    wait_for(lambda: store.durable >= store.seq)
                elapsed += time.perf_counter() - start
                check = box.engine.game.check
                steps += check.steps if check is not None else 0
                edges += HALL_EDGES_PER_CHECK
                syncs = syncs if store is None else syncs + store.syncs - done
                Jump.offset += 2.0                      # past the settle: the verdict
                box.queue.put(Wake())
                wait_for(lambda: box.engine.game.check is None)
        finally:
            box.close()
            factory.reset()
    return {"edges": edges, "edges_per_s": edges / elapsed, "lost_steps": edges - steps, "syncs": syncs}


def sync_costs(samples: int) -> dict[str, float]:
    """Microseconds per appended 40-byte line made durable, three ways, on this disk."""
    line = b'{"t":12.345678,"hall":"A","level":1} 0a1b2c3d\n'
    out: dict[str, float] = {}
    names = ("fsync", "fdatasync", "prealloc_fdatasync")
    times: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as d:
        fds = {name: os.open(os.path.join(d, name), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
               for name in names}
        try:
            pre = fds["prealloc_fdatasync"]
            os.write(pre, b"\0" * (len(line) * samples))
            os.fsync(pre)
            os.lseek(pre, 0, os.SEEK_SET)
            for _ in range(samples):                    # interleaved: the same disk moments
                for name in names:
                    sync = os.fsync if name == "fsync" else os.fdatasync
                    start = time.perf_counter()
                    os.write(fds[name], line)
                    sync(fds[name])
                    times[name].append(time.perf_counter() - start)
        finally:
            for fd in fds.values():
                os.close(fd)
    return {name + "_us": 1e6 * median(times[name]) for name in names}


def run() -> dict[str, Any]:
    return {
        "decision": decisions(DECISIONS, GameLog),
        "decision_per_record": decisions(DECISIONS, PerRecordLog),
        "wind": winds(WINDS, GameLog),
        "wind_per_record": winds(WINDS, PerRecordLog),
        "hall_logged": hall(HALL_ROUNDS, True),
        "hall_unlogged": hall(HALL_ROUNDS, False),
        "sync": sync_costs(SYNC_SAMPLES),
    }


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=2))
