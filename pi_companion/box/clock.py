"""The box clock: seconds since the live game's start, as the engine and its log count them.

`now()` is the factory's ticks since `t0`. A pin edge is stamped by the GPIO layer on its own
clock; `to_event` turns it into the engine's event at the log's precision (`quantize`), so
what is decided is exactly what is logged. Edge ticks more than `CLOCK_SKEW_S` off the loop's
clock are on another epoch: their spacing is kept and their epoch moved (`tick_offset`).
`precise_timers` makes the loop thread's timed waits, its settle windows, end on time.
"""
from __future__ import annotations

import logging
import sys
from typing import Any

from ..core.events import Edge, EncoderLevel, HallLevel, InputEvent
from ..core.records import quantize
from ..hw.inputs import BUTTON_NAMES, QUIET_NAMES, RawEdge

log = logging.getLogger(__name__)
CLOCK_SKEW_S = 10.0    # edge ticks this far off the loop clock are on another epoch: re-based
PR_SET_TIMERSLACK = 29        # prctl(2) option: this thread's timer slack, in nanoseconds
# The loop's timer slack: a settle window closes within 1 us of its due time instead of Linux's
# default 50 us (the loop sleeps between inputs and wakes a few times per buzz: there is nothing
# to coalesce).
LOOP_TIMER_SLACK_NS = 1000


def precise_timers(slack_ns: int = LOOP_TIMER_SLACK_NS) -> bool:
    """Set the calling thread's timer slack (Linux; False where it cannot be set). Linux lets a
    timed wait end up to the thread's slack late to batch wake-ups; the loop's timed waits are
    its settle windows, whose lateness is the buzz's latency."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes          # deferred: ~7 ms at import; only the loop thread needs it, after READY
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(slack_ns), 0, 0, 0)) == 0
    except (ImportError, OSError, AttributeError):
        # No ctypes (a build without libffi), or no libc to call (a static or unusual build).
        return False


def game_time(t: float) -> str:
    """Game time as the OLED shows it: m:ss (minutes past 59 keep counting)."""
    whole = int(max(0.0, t))
    return f"{whole // 60}:{whole % 60:02d}"


class BoxClock:
    """The box's clock and its pin edges' times. An edge of a quiet sensor (the hall) also
    marks a spin (`spinning`) for the frame pacer."""
    factory: Any
    t0: Any                   # the factory's ticks at the live game's time 0
    tick_offset: float        # added to edge ticks on another epoch
    spinning: bool

    def now(self) -> float:
        return float(self.factory.ticks_diff(self.factory.ticks(), self.t0))

    def to_event(self, raw: RawEdge) -> InputEvent:
        """The engine's event for a pin edge, its time already at the log's precision."""
        factory, t0 = self.factory, self.t0
        t = float(factory.ticks_diff(raw.ticks, t0)) + self.tick_offset
        now = float(factory.ticks_diff(factory.ticks(), t0))       # self.now(), one call less
        if abs(t - now) > CLOCK_SKEW_S:
            # The backend stamps edges on another clock: keep their spacing, move their epoch.
            log.warning("edge ticks are %.1f s off the loop clock; re-basing them", t - now)
            self.tick_offset += now - t
            t = now
        t = quantize(t)
        if raw.name in BUTTON_NAMES:
            return Edge(t, raw.name, raw.active)
        sensor = raw.name[-1]
        if raw.name in QUIET_NAMES:
            self.spinning = True
        if raw.name.startswith("ENC"):
            return EncoderLevel(t, sensor, int(raw.active))  # type: ignore[arg-type]
        return HallLevel(t, sensor, int(raw.active))  # type: ignore[arg-type]
