"""What every benchmark shares: virtual-time and deferring mock pins, boxes, statistics, the machine."""
from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin
from PIL import Image

from pi_companion.box import Box, frames
from pi_companion.assemble import assemble
from pi_companion.config import Config
from pi_companion.gamelog import GameLog
from pi_companion.hw.display import Display
from pi_companion.hw.pinmap import load_pinmap

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ("Ada", "Ben", "Cy", "Di")
PINS = load_pinmap()
BLANK = Image.new("1", (128, 64))


class Clock:
    """The virtual clock edges are stamped with (a benchmark moves it by hand)."""
    now = 0.0


class VirtualPin(MockPin):
    """A mock pin stamped on the virtual clock; with `defer`, its callbacks wait in `held`."""
    defer = False
    held: list[tuple[VirtualPin, float, bool]] = []

    def _change_state(self, value: bool) -> bool:
        if self._state == value:
            return False
        self._state = value
        self._last_change = Clock.now
        return True

    def _call_when_changed(self) -> None:
        if VirtualPin.defer:
            VirtualPin.held.append((self, self._last_change, self._state))
        else:
            super()._call_when_changed()

    @classmethod
    def deliver(cls, order: list[tuple[VirtualPin, float, bool]]) -> None:
        """Run held callbacks in the given order (as a late, reordering backend would)."""
        for pin, ticks, state in order:
            super(MockPin, pin)._call_when_changed(ticks, state)
        cls.held = []


class VirtualFactory(MockFactory):
    def ticks(self) -> float:  # type: ignore[override]
        return Clock.now


class Jump:
    """Real time plus an offset a benchmark may jump forward (past debounce windows, unwaited)."""
    offset = 0.0

    @staticmethod
    def now() -> float:
        return time.monotonic() + Jump.offset


class JumpFactory(MockFactory):
    def ticks(self) -> float:  # type: ignore[override]
        return Jump.now()


class WatchedPin(MockPWMPin):
    """A mock pin stamped with `Jump.now()` that reports each output change to `on_change`."""
    on_change: Callable[[WatchedPin, bool], None] | None = None

    def _change_state(self, value: bool) -> bool:
        if self._state == value:
            return False
        self._state = value
        self._last_change = Jump.now()
        if self._function == "output" and WatchedPin.on_change is not None:
            WatchedPin.on_change(self, bool(value))
        return True


def grab_bag(settle_ms: float = 2.0, cards: int = 200, variant: str = "all-seekers") -> Config:
    return Config(game="grab-bag", players=PLAYERS, seed=1, sound=False,
                  games={"grab-bag": {"variant": variant, "cards": cards, "settle_ms": settle_ms}})


def make_box(config: Config, factory: Any, display: Display | None = None, *,
             store: GameLog | None = None, **kw: Any) -> Box:
    """A box as `pi_companion.assemble` builds it, on `factory`'s pins, with `store` (a game log
    the benchmark made, or none); `box.close()` lets go of every part."""
    built = assemble(config, pins=factory, display=display or "dummy",
                     store=store if store is not None else False, **kw)
    box = built.box
    close = box.close

    def close_all() -> None:
        close()
        built.release()
    box.close = close_all  # type: ignore[method-assign]
    # With no piezo pin the worker still times each tune, and close() waits up to 2 s for the
    # queue: note the sounds instead (playing them is not what any figure measures).
    box.piezo.play = box.piezo.played.append  # type: ignore[method-assign]
    return box


class QueueProxy:
    """Stands between the box's pins and its loop in place of the queue, passing everything on;
    a benchmark overrides `get` to note what the loop does as it starts each wait."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        return self.real.get(block, timeout)

    def get_nowait(self) -> Any:
        return self.real.get_nowait()

    def put(self, item: Any) -> None:
        self.real.put(item)

    def empty(self) -> bool:
        return bool(self.real.empty())


class BlankScreens:
    """Within `with BlankScreens():` the box draws a blank frame instead of the real screens."""

    def __enter__(self) -> None:
        self.real = frames.render
        frames.render = lambda *_: BLANK

    def __exit__(self, *exc: object) -> None:
        frames.render = self.real


def pin(factory: MockFactory, name: str) -> MockPin:
    return factory.pin(PINS[name])


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def machine() -> dict[str, Any]:
    """Where and when the figures were taken: they mean little without it."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=5).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True,
                                    text=True, timeout=5).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", False
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Model")):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "python": sys.version.split()[0],
            "platform": platform.platform(), "cpu": model, "cores": os.cpu_count(),
            "load_before": os.getloadavg()[0], "commit": commit + ("+dirty" if dirty else "")}
