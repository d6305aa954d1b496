"""Figure 7, resume: building the Box from a 10 000-record game log, as after a power cut.

The log is written by a real Box with a real GameLog (fsync per input) playing a scripted
4-player All Wound Up evening on virtual time: wind checks of presses, dial (encoder) edges and
hall edges, the longest logs a box writes (Grab Bag ends at 200 cards, about 2 000 records).
Screens are blanked while writing: they are not logged.
Then, RUNS times on a fresh copy: the time to construct a Box that resumes it (read, parse,
fold every record through the engine, set up pins, draw the first frame), beside a Box
constructed over an empty state directory, and beside only parsing the log's JSON lines.
The resumed game must report exactly what the writing box reported.
"""
from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import (
    PLAYERS,
    BlankScreens,
    Clock,
    VirtualFactory,
    VirtualPin,
    make_box,
    median,
)

from pi_companion.app import Wake
from pi_companion.config import Config
from pi_companion.core.events import Edge, EncoderLevel, HallLevel, InputEvent
from pi_companion.store import GameLog

RECORDS = 10_000
RUNS = 3
CONFIG = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False)


FORWARD = (("A", 1), ("B", 1), ("A", 0), ("B", 0))   # quadrature, one step per edge


class Quadrant:
    """Where a two-channel sensor pair is in its cycle, to emit consistent edges."""

    def __init__(self) -> None:
        self.phase = 0

    def step(self, forward: bool) -> tuple[str, int]:
        if forward:
            edge = FORWARD[self.phase % 4]
            self.phase += 1
            return edge
        self.phase -= 1
        sensor, level = FORWARD[self.phase % 4]
        return sensor, 1 - level


HALL, ENCODER = Quadrant(), Quadrant()


def script(rng: random.Random) -> list[InputEvent]:
    """One wind check: a player presses, the dial sets 1-3 turns, the turntable is wound
    (with a little rocking back), and it is left still until the 1.5 s settle gives the verdict."""
    t = Clock.now
    player = f"P{rng.randint(1, 4)}"
    events: list[InputEvent] = [Edge(t, player, True), Edge(t + 0.08, player, False)]
    t += 0.3
    for _ in range(4 * (rng.randint(1, 3) - 1)):            # each detent is 4 encoder edges
        t += rng.uniform(0.004, 0.02)
        events.append(EncoderLevel(t, *ENCODER.step(True)))  # type: ignore[arg-type]
    t += 0.3
    for _ in range(4 * rng.randint(1, 4) + rng.randint(-2, 2)):
        t += rng.uniform(0.01, 0.05)
        events.append(HallLevel(t, *HALL.step(rng.random() > 0.08)))  # type: ignore[arg-type]
    Clock.now = t + 2.0                                      # past the settle: the verdict
    return events


def write_log(state: Path) -> dict[str, Any]:
    """Play until the log holds RECORDS records; returns the box's final report."""
    Clock.now, VirtualPin.defer = 1.0, False
    factory = VirtualFactory(pin_class=VirtualPin)
    box = make_box(CONFIG, factory, store=GameLog(state))
    rng = random.Random(12)
    try:
        with BlankScreens():
            while box.store is not None and box.store.lines < RECORDS:
                for event in script(rng):
                    box.queue.put(Wake())            # timers due by now (the loop's wake-up)
                    box.queue.put(Wake(event))
                    box.pump()
                    if box.store.lines >= RECORDS:
                        break
        return box.engine.report()
    finally:
        box.close()
        factory.reset()


def resume_once(source: Path, work: Path) -> tuple[float, dict[str, Any], int]:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work)
    factory = VirtualFactory(pin_class=VirtualPin)
    start = time.perf_counter()
    box = make_box(CONFIG, factory, store=GameLog(work))
    elapsed = time.perf_counter() - start
    try:
        assert box.resumed
        return elapsed, box.engine.report(), box.resumed_records
    finally:
        box.close()
        factory.reset()


def fresh_once(work: Path) -> float:
    shutil.rmtree(work, ignore_errors=True)
    factory = VirtualFactory(pin_class=VirtualPin)
    start = time.perf_counter()
    box = make_box(CONFIG, factory, store=GameLog(work))
    elapsed = time.perf_counter() - start
    box.close()
    factory.reset()
    return elapsed


def parse_once(source: Path) -> float:
    start = time.perf_counter()
    lines = (source / "current.log").read_bytes().splitlines()
    [json.loads(line) for line in lines]
    return time.perf_counter() - start


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-resume-") as base:
        source, work = Path(base) / "log", Path(base) / "work"
        written = write_log(source)
        resumes, reports, records = [], [], 0
        for _ in range(RUNS):
            elapsed, report, records = resume_once(source, work)
            resumes.append(elapsed)
            reports.append(report)
        fresh = median([fresh_once(work) for _ in range(RUNS)])
        parse = median([parse_once(source) for _ in range(RUNS)])
    return {"records": records, "resume_s": median(resumes), "resume_max_s": max(resumes),
            "fresh_start_s": fresh, "json_parse_s": parse,
            "same_game": all(r == written for r in reports),
            "wind_checks": len(written["attempts"])}
