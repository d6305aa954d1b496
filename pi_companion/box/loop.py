"""The live box: pins and the puck feed one queue; one loop thread owns the engine and the outputs.

The loop blocks on the queue until the next input or the next real timer - the engine's next
deadline, the watchdog's next ping, a failed display's retry - and nothing else (no polling, no
periodic redraw). It feeds the engine, then applies what changed: LEDs and sounds at once, the
OLED frame once nothing is pending and no fair-press settle window is open (a frame holds the
interpreter for a millisecond or more: a late press callback must not wait behind it). Before a
due settle window closes it reads the player buttons' levels: a press whose callback is still to
come keeps the window open for it (`_look`). The watchdog is pinged only by a pass that handled
its input.

`Box` is composed of its parts, one concept each: the clock (clock.py), the record and its
durability (recorder.py), the lamp rule (lamp.py), the frame pacer (frames.py), the live engine
(session.py) and the puck (puck.py).
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable

from ..config import Config
from ..core.events import HostCommand, InputEvent, Pending, Request, Sound
from ..core.frozen import realize_all, replace   # replace: dataclasses.replace without its field walk
from ..core.records import advance_record, quantize, to_record
from ..hw.display import Display
from ..hw.inputs import Inbox, RawEdge, reading_pressed
from ..gamelog import GameLog
from ..ui.screens import farewell
from .clock import BoxClock, precise_timers
from .frames import Frames
from .lamp import Lamp
from .puck import PuckFeed
from .recorder import Recorder
from .session import Session
from .wakes import TIMER, FrameWake, PuckWake, Wake
from .wiring import wire

log = logging.getLogger(__name__)
MAX_WAIT_S = 1.0       # the watchdog ping period when the caller gives none


class Box(BoxClock, Recorder, Lamp, Frames, Session, PuckFeed):
    """One box: inputs, engine, outputs. `start()` runs the loop on its own thread."""

    def __init__(self, config: Config, factory: Any, display: Display, *,
                 on_frame: Callable[[Any], None] | None = None,
                 on_request: Callable[[Request], None] | None = None,
                 watchdog: Callable[[], None] | None = None,
                 watchdog_s: float | None = None,
                 store: GameLog | None = None,
                 on_exit: Callable[[], None] | None = None) -> None:
        self.config = config
        self.factory = factory
        self.display = display
        self.on_frame = on_frame
        self.on_request = on_request
        self.watchdog = watchdog
        self._seen_game: Any = None
        self._told_over = None
        self.watchdog_s = watchdog_s if watchdog_s is not None else MAX_WAIT_S
        self._kick_due = 0.0                 # time.monotonic() of the next watchdog ping
        self.on_exit = on_exit               # called on the loop thread when the loop ends
        self.asked_to_stop = False
        self.on_draw = None                  # the web hub's snapshot: (engine, frame)
        self.web_links = ("", "")            # the big screen's address and the host's link (OLED QR)
        self._saving = []
        self._saving_lock = threading.Lock()
        self.inbox = Inbox()      # the loop's queue (hall edges may wait for the next frame)
        self.queue: "queue.SimpleQueue[RawEdge | Wake | None]" = self.inbox
        (self.seats, self.inputs, self.player_lines, self.start_levels,
         self.leds, self.piezo) = wire(config, factory, self.queue)
        self.t0 = factory.ticks()
        self.store = store
        if store is not None:   # its notice came or went: redraw now, not at the next input
            store.on_notice = lambda: self.queue.put(Wake())
        self.games_started = 0
        self.thread: threading.Thread | None = None
        self.handled = 0
        self.stale = True
        self._realized = False        # realize_all has run (first thing on the loop thread)
        self._init_frames()
        self.tick_offset = 0.0
        self.logged_clock = 0.0
        self.resumed_records = 0
        self._first_engine()
        self._init_puck()
        self.leds.show(self.engine.lit())    # the first frame: daemon.main draws it before READY

    def put_host_command(self, cmd: HostCommand, saved: Callable[[str | None], None] | None = None) -> None:
        """A command from the host's remote joins the queue like a press, stamped now; `saved`
        is told when its record is durable (any thread)."""
        self.queue.put(Wake(replace(cmd, t=self.now()), saved))

    def show_links(self, links: tuple[str, ...]) -> None:
        """What the QR screens carry from now on (any thread: the loop takes it in turn)."""
        self.queue.put(Wake(links=links))

    def pump(self) -> int:
        """Handle everything queued now, without waiting (tests and tools; the loop does this live)."""
        count = 0
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.handle(item)
                count += 1
        if self.stale:
            self.draw()
        return count

    def handle(self, item: RawEdge | Wake) -> None:
        """Log the input, feed it to the engine, then LEDs and sounds once what caused them is
        durable (the writer thread fsyncs meanwhile); the frame later."""
        if isinstance(item, PuckWake):
            self._puck_take()
            return
        if isinstance(item, FrameWake):       # the next pass draws the frame that waited
            return
        if isinstance(item, Wake) and item.links is not None:
            self.web_links = item.links
            self.stale = True
            return
        later: dict[str, Any] | None = None      # a record handed to the writer after the LEDs
        if isinstance(item, RawEdge):
            event: InputEvent | None = self.to_event(item)   # already at the log's precision
        else:
            event = item.event
            if event is not None:
                event = replace(event, t=quantize(event.t))   # decide on exactly what is logged
        if event is not None:
            early = self._look(event.t) if self.engine.window is not None else []
            if event.t < self.engine.clock and self.logged_clock < self.engine.clock:
                # An idle wake moved the clock past this (earlier stamped) event without a
                # record: log that move first, or the fold would start its timers earlier.
                self._log(advance_record(self.engine.clock))
            seq = self._log(to_record(event))
            window = self.engine.window
            asked = False
            if window is not None and window.due <= event.t and not isinstance(event, Pending):
                early, asked = self._decide_due(event.t, early)
            mark = self._mark() if self.engine.window is not None else None  # (no window: no buzz)
            effects = early + self.engine.feed(event)
            if asked:
                self.engine.restore_asked = True
            if mark is not None and self._decided(mark, effects):
                # An awaited press in flight arrived and closed the window: the lamp rule.
                self._show_now(effects)
                effects = []
            self.handled += 1
        else:
            now = quantize(self.now())
            early = self._look(now)
            seq = self.store.seq if self.store is not None else 0
            mark = self._mark() if self.engine.window is not None else None
            fired = self.engine.fired
            effects = early + self.engine.advance(now)
            if self.engine.fired != fired:     # a timer was due: the fold must fire it here too
                record = advance_record(now)
                if mark is not None and self._decided(mark, effects):
                    # A settle window closed on a buzz alone: the lamp rule shows it now. This
                    # wake-up's record is handed to the writer after the LEDs (the log's order
                    # is the same: nothing else is logged in between).
                    later = record
                    self._show_now(effects)
                    effects = []
                else:
                    seq = self._log(record)   # judgements and undos wait for their own
        if later is not None:
            # The decided buzz's lamps and tone are out, and nothing has changed since: log
            # its wake-up now.
            self._log(later)
        else:
            lit = self.engine.lit()
            if effects or lit != self.leds.lit:
                self._durable(seq)
                self.leds.show(lit)    # lights first: the sound's worker is woken after them
                if effects:
                    self.apply(effects)
        self.stale = True
        if self.store is not None and self.engine.table.game is not self._seen_game:
            self._game_over_to_history()
        if isinstance(item, Wake) and item.saved is not None:
            self._when_saved(seq, item.saved)

    def _look(self, upto: float) -> list[Any]:
        """About to move the engine to `upto`, past the open settle window's due time: read the
        player buttons' levels first. A button that reads pressed while its press edge has not
        arrived has an edge in flight (its callback is late: the line level is already down);
        the engine then keeps the window open for it, briefly (`Engine.look`). Logged like any
        input, so resume decides as the box did. The effects of timers due meanwhile."""
        window = self.engine.window
        if window is None or window.looked or window.due > upto:
            return []
        down = reading_pressed(self.player_lines)
        pending = self.engine.look(down, quantize(max(upto, self.engine.clock)))
        if pending is None:
            return []
        self._log(to_record(pending))
        return self.engine.feed(pending)

    def apply(self, effects: list[Any]) -> None:
        for effect in effects:
            if isinstance(effect, Sound):
                self.piezo.play(effect.name)
            elif isinstance(effect, Request):
                self.request(effect)

    # ---- the loop ----

    def start(self) -> None:
        self.thread = threading.Thread(target=self.loop, name="box-loop", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.asked_to_stop = True
        self.queue.put(None)
        if self.thread is not None:
            self.thread.join(timeout=5)

    def loop(self) -> None:
        if not precise_timers():
            log.debug("timer slack not set: settle windows may close up to 50 us late")
        if not self._realized:
            # Start-up work kept off the way to READY: the event classes not made yet are made
            # here on the loop thread (a press meanwhile waits in the queue, stamped).
            self._realized = True
            realize_all()
        try:
            while True:
                try:
                    if not self._turn():
                        return
                except Exception:  # a bug in one event must not stop the box
                    log.exception("error in the box loop")
                    time.sleep(0.05)
                    continue       # only a pass that handled its input feeds the watchdog
                self._kick()
        finally:
            if self.on_exit is not None:
                self.on_exit()

    def _kick(self) -> None:
        """Ping the watchdog when its period is up (the loop wakes for it: see `_wait`)."""
        if self.watchdog is not None:
            now = time.monotonic()
            if now >= self._kick_due:
                self._kick_due = now + self.watchdog_s
                self.watchdog()

    def _wait(self) -> tuple[float | None, bool]:
        """Seconds until the loop must wake with no input (None: only an input wakes it), and
        whether an engine timer is due by then."""
        deadline = self.engine.next_deadline()
        retry = self.display.retry_at()
        now = self.now() if deadline is not None or retry is not None else 0.0
        wait = None if deadline is None else deadline - now
        if retry is not None and (wait is None or retry - now < wait):
            wait = retry - now
        if self.watchdog is not None:
            kick = self._kick_due - time.monotonic()
            if wait is None or kick < wait:
                wait = kick
        if wait is None:
            return None, False
        wait = max(0.0, wait)
        return wait, deadline is not None and deadline - now <= wait

    def _turn(self) -> bool:
        """One pass of the loop: draw if idle, else wait for an input or the next timer and
        handle it. False when asked to stop."""
        wait, timer = self._wait()
        hold: float | None = None
        # Draw unless an engine timer is due this instant. A wait of 0 for the display's retry
        # must draw (the draw is the retry), or the retry stays due and the loop spins.
        if (self.stale and not (timer and wait == 0) and self.engine.window is None   # (settling)
                and self.queue.empty()):
            hold = self._frame_hold()
            if hold is None:
                self.draw()            # only when nothing is pending: a frame never delays a buzz
                return True
        elif self.spinning:            # a spin: its next edges wait for the next frame's time
            hold = self._spin_hold()
        if hold is not None:           # the frame's time or its records: the spin's edges wait
            if wait is None or hold < wait:   # the frame's time comes first: wake for it
                wait, timer = hold, False
            self.inbox.snooze()
        elif self.inbox.snoozing:      # edges left in the tray when a frame was drawn: now
            self.inbox.wake()
        try:
            item = self.queue.get(timeout=wait)
        except queue.Empty:
            if self.inbox.snoozing:        # a spin's frame time (or its end)
                self._frame_time(timer)
            if self.queue.empty():     # (an edge queued as the wait ran out still counts first)
                if timer:
                    self.handle(TIMER)
                retry = self.display.retry_at()
                if retry is not None and retry <= self.now():
                    self.stale = True  # the display may be back: draw to find out
                return True
            item = self.queue.get_nowait()
        else:
            # The log's word that a waiting frame's records are durable: draw that frame before
            # the edges in the tray (taking them first would make it wait again, and chase
            # the log's writer edge by edge).
            if self.inbox.snoozing and not isinstance(item, FrameWake):
                self.inbox.wake()
        if item is None:
            return False
        self.handle(item)
        return True

    def close(self) -> None:
        """Stop the loop, release the hardware, then close the game log. A part that fails to
        let go is logged and the others still close: on a real chip lgpio can refuse to reclaim
        a line whose edge alert is live ('GPIO busy'), and a MENU power-off must not end in a
        crash and a restart instead."""
        self.stop()
        parts: list[tuple[str, Callable[[], Any]]] = [
            ("the LEDs", self.leds.close), ("the piezo", self.piezo.close),
            ("the display", lambda: self.display.close(farewell())),
            *((f"input {name}", device.close) for name, device in self.inputs.items())]
        if self.puck is not None:
            parts.insert(0, ("the puck", self.puck.close))
        for what, close in parts:
            try:
                close()
            except Exception as err:
                log.error("closing %s: %s: %s", what, type(err).__name__, err)
        if self.store is not None:
            self.store.close()
