"""A box playing a scripted Grab Bag game into a game log, printing each acknowledged input.

Run as: python crash_child.py STATE_DIR (or forked by zygote.py). It resumes whatever the log holds and carries on with
the script from there; the parent SIGKILLs it at random moments.
"""
from __future__ import annotations

import json
import random
import sys

from gpiozero.pins.mock import MockFactory, MockPWMPin

from pi_companion.box import Box, Wake
from pi_companion.config import Config
from pi_companion.core.events import Edge
from pi_companion.gamelog import GameLog
from pi_companion.hw.display import Display

CONFIG = Config(players=("Ada", "Ben", "Cy"), seed=5, sound=False,
                games={"grab-bag": {"cards": 200}})


def script(n: int = 3000) -> list[Edge]:
    rng = random.Random(42)
    events, t = [], 1.0
    for _ in range(n // 2):
        button = rng.choice(["P1", "P2", "P3", "YES", "NO", "P2", "P3"])
        hold = 1.2 if button == "NO" and rng.random() < 0.1 else 0.05
        events += [Edge(round(t, 6), button, True), Edge(round(t + hold, 6), button, False)]
        t += hold + 0.2
    return events


def warm() -> None:
    """Import what the box needs before the first fork (tests/helpers/zygote.py)."""
    script()


def main(argv: list[str]) -> int:
    box = Box(CONFIG, MockFactory(pin_class=MockPWMPin), Display(None), store=GameLog(argv[0]))
    loaded = GameLog(argv[0]).load()
    done = sum(1 for r in loaded[1] if "resume" not in r) if loaded else 0   # script inputs
    print(f"start {done} {json.dumps(box.engine.report())}", flush=True)
    for index, event in enumerate(script()[done:], start=done + 1):
        box.queue.put(Wake(event))
        box.pump()
        print(f"ack {index} {json.dumps(box.engine.report())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
