"""Figure 2b, instructions per buzz: the loop's work counted by callgrind, which no load moves.

The loop's CPU per decision (figure 2) is a CPU time: on this shared VM it moved 15-40 % within
an hour at a load average of 0.3, so a change of a few per cent cannot be seen in it. This
figure counts the machine instructions instead, with valgrind's callgrind: the same count on
every run of the same code, whatever else the machine does (it does not see cache misses or
the kernel: it is a yardstick for the loop's own work, not a time).

Ours: the real Box on gpiozero MockFactory pins with the durable game log on a real file, Grab
Bag, the default 2 ms settle window; each buzz is a press edge (the pin's callback that stamps
the edge and queues it), the press and its window's close, driven through the loop's own `_turn`
on one thread (the frame and the reset between buzzes are not counted). Until December 2026 the
press edge was driven before the counted region while the baseline's was inside it: ~47 000
instructions of ours left out, x3.7 of the baseline instead of x4.5. The window's close jumps
the clock past its due time, so the loop's wait for it is 0: under valgrind a timed wait of a
few microseconds on the queue could block for good and hang the child (the turns between
buzzes sleep such waits out instead, `NoShortWaits`). The reset is the engine's `new_game` with the lamps set to its
first screen, as the box sets them for a new game (`Box.request`): until December 2026 they were
left as the last buzz had them, so every counted press also relit three seekers' lamps and
waited for its own record to be durable first, ~11 % of the count that no real press pays.
Callgrind collects only while `functools.reduce` runs, which calls the measured turns
(`--toggle-collect`). Baseline, same run, same way: a bare gpiozero
`Button.when_pressed = led.on` press. Needs valgrind (Debian: `apt-get install valgrind`; `make
bench` does not install it). Skipped without it, or when the interpreter has no symbol for
`functools_reduce` (a stripped build: nothing is collected).

`--spin` counts a fast spin instead (issue 27 item 3, `spin`): instructions per hall edge at
80 edges a second with a frame every 1/30 s, the edges' handling and the frames apart.
"""
from __future__ import annotations

import functools
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from harness import QueueProxy  # noqa: E402  (benchmarks/ is not a package)
BUZZES = 100
WARM_UP = 5                       # buzzes before counting: imports, caches, the first frame


SHORTEST_WAIT_S = 0.001           # shorter timed waits may never end under valgrind: slept out


class NoShortWaits(QueueProxy):
    """The loop's queue for the uncounted turns between buzzes. Under valgrind a timed wait of a
    few microseconds on the queue (a frame's time about to come) can block for good; such a
    wait is slept out instead, then the queue looked at without blocking. Nothing else puts on
    the queue meanwhile but the log's writer, whose word the look still finds."""

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if block and timeout is not None and timeout < SHORTEST_WAIT_S:
            time.sleep(timeout)
            return self.real.get(False)
        return self.real.get(block, timeout)


def buzzes(count: int) -> None:
    """In the child under callgrind: `count` counted buzzes on the real Box."""
    sys.path.insert(0, str(HERE))
    from harness import ROOT, Jump, JumpFactory, WatchedPin, grab_bag, make_box, pin

    from pi_companion.gamelog import GameLog
    factory = JumpFactory(pin_class=WatchedPin)
    config = grab_bag(settle_ms=2.0)
    past_window = config.games["grab-bag"]["settle_ms"] / 1000 + 0.001
    with tempfile.TemporaryDirectory(prefix="bench-instructions-", dir=ROOT) as state:
        store = GameLog(state)
        box = make_box(config, factory, store=store)
        inbox, between = box.queue, NoShortWaits(box.queue)
        rng = random.Random(3)

        def buzz(_a: Any, _b: Any) -> None:
            button.drive_low()                     # the press edge: stamped and queued
            box._turn()                            # the press
            while box.engine.window is not None:
                Jump.offset += past_window         # its due time has come: the wait is 0
                box._turn()                        # the window's close

        try:
            for i in range(WARM_UP + count):
                button = pin(factory, f"P{rng.randrange(4) + 1}")
                box.queue = between
                while box.stale or not box.queue.empty():
                    box._turn()                    # the frame before: not counted
                store.wait()
                box.queue = inbox
                if i >= WARM_UP:
                    functools.reduce(buzz, [0, 1])
                else:
                    buzz(0, 0)
                box.queue = between
                while box.stale:
                    box._turn()
                Jump.offset += 0.010
                button.drive_high()
                box._turn()
                box.engine.new_game()
                box.leds.show(box.engine.lit())    # as the box does for a new game
                box.stale = True
                Jump.offset += 0.010
        finally:
            box.queue = inbox
            box.close()
            factory.reset()


def gpiozero_presses(count: int) -> None:
    """In the child under callgrind: `count` counted presses of a bare when_pressed -> LED."""
    sys.path.insert(0, str(HERE))
    from gpiozero import LED, Button
    from harness import PINS, JumpFactory, WatchedPin
    factory = JumpFactory(pin_class=WatchedPin)
    led = LED(PINS["LED1"], pin_factory=factory)
    button = Button(PINS["P1"], pin_factory=factory)
    button.when_pressed = led.on

    def press(_a: Any, _b: Any) -> None:
        button.pin.drive_low()

    try:
        for i in range(WARM_UP + count):
            if i >= WARM_UP:
                functools.reduce(press, [0, 1])
            else:
                press(0, 0)
            button.pin.drive_high()
            led.off()
    finally:
        button.close()
        led.close()
        factory.reset()


SPIN_PERIODS = 30                 # frame periods of a spin at 80 edges/s: 3, 3, 2 edges each


def spin(periods: int, part: str) -> None:
    """In the child under callgrind: a fast spin (#27 item 3), one thread. All Wound Up's check
    open, the log on a real file, luma's dummy OLED; each 1/30 s frame period the hall pins give
    3, 3 or 2 edges (80 a second), the loop takes them (`Box.handle`, as `_turn` does once the
    frame's time has come) and draws one frame. `part` says what is counted: the edges' handling
    (`edges`) or the frames (`frames`); 10 periods first, not counted."""
    import queue
    sys.path.insert(0, str(HERE))
    from hall import FORWARD, open_check
    from harness import PLAYERS, ROOT, Jump, JumpFactory, WatchedPin, make_box

    from pi_companion.config import Config
    from pi_companion.gamelog import GameLog
    factory = JumpFactory(pin_class=WatchedPin)
    config = Config(game="all-wound-up", players=PLAYERS, seed=1, sound=False,
                    games={"all-wound-up": {"settle_ms": 10000}})
    with tempfile.TemporaryDirectory(prefix="bench-instructions-", dir=ROOT) as state:
        store = GameLog(state)
        box = make_box(config, factory, store=store)
        drive = open_check(factory)

        def take(_a: Any = 0, _b: Any = 0) -> None:
            if box.inbox.snoozing:
                box.inbox.wake()
            while True:
                try:
                    item = box.queue.get_nowait()
                except queue.Empty:
                    return
                if item is not None:
                    box.handle(item)

        def frame(_a: Any = 0, _b: Any = 0) -> None:
            box.draw()

        try:
            take()
            frame()
            edge = 0
            for k in range(10 + periods):
                for _ in range((3, 3, 2)[k % 3]):
                    drive[FORWARD[edge % 4]]()
                    edge += 1
                functools.reduce(take, [0, 1]) if k >= 10 and part == "edges" else take()
                store.wait()
                functools.reduce(frame, [0, 1]) if k >= 10 and part == "frames" else frame()
                Jump.offset += 1 / 30
        finally:
            box.close()
            factory.reset()


def counted(kind: str, count: int) -> int | None:
    """Instructions callgrind counted inside `functools.reduce` for the child `kind`."""
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no",
                        "--toggle-collect=functools_reduce", f"--callgrind-out-file={out}",
                        sys.executable, str(Path(__file__).resolve()), "--child", *kind.split(), str(count)],
                       check=True, capture_output=True, timeout=900)
        match = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
        total = int(match.group(1)) if match else 0
    return total or None


def run() -> dict[str, Any]:
    if shutil.which("valgrind") is None:
        return {"skipped": "valgrind not installed (Debian: apt-get install valgrind)"}
    ours = counted("buzz", BUZZES)
    floor = counted("gpiozero", BUZZES)
    if ours is None or floor is None:
        return {"skipped": "callgrind counted nothing (an interpreter without symbols)"}
    return {"buzzes": BUZZES, "per_buzz": ours / BUZZES, "gpiozero_per_press": floor / BUZZES}


def run_spin() -> dict[str, Any]:
    """Instructions per hall edge of a spin at 80 edges/s (not in `make bench`'s table: issue 27
    item 3's load-independent figure): the edges' handling, the frames, and their sum."""
    if shutil.which("valgrind") is None:
        return {"skipped": "valgrind not installed"}
    edges = sum((3, 3, 2)[k % 3] for k in range(10, 10 + SPIN_PERIODS))
    handling, frames = counted("spin edges", SPIN_PERIODS), counted("spin frames", SPIN_PERIODS)
    if handling is None or frames is None:
        return {"skipped": "callgrind counted nothing (an interpreter without symbols)"}
    return {"edges": edges, "frames": SPIN_PERIODS, "handling_per_edge": handling / edges,
            "frames_per_edge": frames / edges, "per_frame": frames / SPIN_PERIODS,
            "per_edge": (handling + frames) / edges}


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        {"buzz": buzzes, "gpiozero": gpiozero_presses}[sys.argv[2]](int(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "--child" and sys.argv[2] == "spin":
        spin(int(sys.argv[4]), sys.argv[3])
    elif sys.argv[1:] == ["--spin"]:
        print(run_spin())
    else:
        print(run())
