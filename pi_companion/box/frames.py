"""The frame pacer: when the OLED frame is drawn, and the frame itself.

A frame shows only what is durable (a score is shown only once it is saved), at most one per
`frame_s` (a full SSD1306 frame takes ~25 ms at 400 kHz), and never ahead of a buzz: the loop
draws only when nothing is pending and no settle window is open. A frame that must wait, for
its time or for the log, is waited for on the loop's queue, not in `store.wait`: an input
meanwhile is handled at once, and the log's writer puts `FRAME_WAKE` on the queue once the
records are durable. If the disk does not answer within the log's `wait_s` the frame is drawn
from memory.

During a spin (hall edges since the last frame: `spinning`) the hall's edges wait in the
inbox's tray until the next frame's time (the inbox `snooze`s), so a spin costs the loop one
wake a frame, not one an edge.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from PIL import ImageDraw

from ..hw.display import Display
from ..hw.inputs import Inbox
from ..hw.outputs import Leds
from ..gamelog import GameLog
from ..ui.canvas import banner
from ..ui.screens import render
from .wakes import FRAME_WAKE

FRAME_S = 1 / 30              # the OLED's refresh: at most one frame per 1/30 s, however fast inputs come


class Frames:
    """The OLED frame's pacing and drawing."""
    engine: Any
    store: GameLog | None
    display: Display
    leds: Leds
    inbox: Inbox
    queue: Any
    on_frame: Callable[[Any], None] | None
    on_draw: Callable[[Any, Any], None] | None
    web_links: tuple[str, ...]
    stale: bool                   # the frame shown is not the engine's state
    frame_s: float
    _frame_next: float            # time.monotonic() before which no frame is drawn
    _frame_waits: bool            # a frame waits for the log: the writer wakes the loop
    _frame_give_up: float | None  # ... until then (the disk is not responding)
    spinning: bool                # hall edges came since the last frame: the next ones wait
    now: Callable[[], float]
    _tell_saved: Callable[[], None]

    def _init_frames(self) -> None:
        self.frame_s = FRAME_S
        self._frame_next = 0.0
        self._frame_waits = False
        self._frame_give_up = None
        self.spinning = False
        if self.store is not None:
            self.store.on_settled = self._log_settled

    def _frame_hold(self) -> float | None:
        """None: draw the stale frame now. Else the seconds it waits at most: until the
        display's next refresh (one frame per `frame_s`: a spin's edges share frames), or
        until the log has made durable what the frame shows. The writer puts `FRAME_WAKE` on
        the queue when the records are durable."""
        now = time.monotonic()
        if now < self._frame_next:
            return self._frame_next - now
        store = self.store
        if store is None or store.problem is not None or store.durable >= store.seq:
            self._frame_give_up = None
            return None
        if self._frame_give_up is None:
            self._frame_give_up = now + store.wait_s
        if now >= self._frame_give_up:        # "disk not responding": draw from memory
            store.wait(timeout=0)
            self._frame_give_up = None
            return None
        self._frame_waits = True
        if store.durable >= store.seq:        # it came as the flag went up: no wake will
            self._frame_waits = False
            self._frame_give_up = None
            return None
        return self._frame_give_up - now

    def _spin_hold(self) -> float | None:
        """During a spin: the seconds until the next frame's time, which its next edges wait
        for; None if that time has come (the spin is over: the next edge wakes the loop)."""
        hold = self._frame_next - time.monotonic()
        if hold > 0:
            return hold
        self.spinning = False
        return None

    def _frame_time(self, timer: bool) -> None:
        """The loop's wait ran out while the hall's edges waited in the tray: a spin's frame
        time (or its end). Draw the frame if it is due, then take the edges."""
        due = not timer and self.engine.window is None and self.queue.empty()
        if due and self.stale and self._frame_hold() is None:
            # What the frame shows is durable (its edges' records were synced while the loop
            # slept): draw it before taking the edges that waited in the tray.
            self.draw()
        taken = self.inbox.wake()
        if taken and due and not self.stale:
            # Those edges are shown by the next frame, and their records are synced during its
            # wait: a spin costs the loop one wake a frame, not two (one for the frame's time,
            # one for the log's "durable now").
            self._frame_next = time.monotonic() + self.frame_s
        elif not taken and not self.stale:
            self.spinning = False  # the spin has stopped: the next edge wakes the loop

    def _log_settled(self) -> None:
        """On the log's writer thread: records became durable (or the log has a problem)."""
        self._tell_saved()
        if self._frame_waits:
            self._frame_waits = False
            self.inbox.ring(FRAME_WAKE)       # not an input: the hall's tray stays

    def refresh(self) -> None:
        self.leds.show(self.engine.lit())
        self.draw()

    def draw(self) -> None:
        """Render the engine's state once every logged record is durable (a score is shown only
        once it is saved); the display sends it only if it changed."""
        self.stale = False
        self._frame_next = time.monotonic() + self.frame_s
        if self.store is not None:
            self.store.wait()
            self._tell_saved()
        frame = render(self.engine, self.web_links)
        if self.store is not None and self.store.notice:
            banner(ImageDraw.Draw(frame), self.store.notice)
        if self.on_draw is not None:
            self.on_draw(self.engine, frame)
        if self.display.show(frame, self.now()) and self.on_frame is not None:
            self.on_frame(frame)
