"""The live box: pins and the puck feed one queue; one loop thread owns the engine and the outputs.

The loop blocks on the queue until the next input or the next real timer - the engine's next
deadline, the watchdog's next ping, a failed display's retry - and nothing else (no polling, no
periodic redraw). It feeds the engine, then applies what changed: LEDs and sounds at once, the
OLED frame once nothing is pending and no fair-press settle window is open (a frame holds the
interpreter for a millisecond or more: a late press callback must not wait behind it). Before a
due settle window closes it reads the player buttons' levels: a press whose callback is still to
come keeps the window open for it (`_look`).
"""
from __future__ import annotations

import json
import logging
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from PIL import ImageDraw

from .config import Config
from .core.controls import BUTTONS
from .core.records import SEATS
from .core.engine import Engine, fold_records
from .core.events import (Edge, EncoderLevel, HallCounts, HallLevel, HostCommand, HotspotState, InputEvent, Pending,
                          PuckStatus, Request, Resume, Sound)
from .core.game import players_problem
from .core.frozen import realize_all, replace   # replace: dataclasses.replace without its field
                                                # walk (per input)
from .core.records import advance_record, quantize, to_record
from .gamelog import Damaged, GameLog, open_log
from .games import registry
from .hw.display import Display
from .hw.inputs import (BUTTON_NAMES, LEVEL_NAMES, QUIET_NAMES, Inbox, RawEdge, build_inputs, player_lines,
                        reading_levels, reading_pressed)
from .hw.outputs import Leds, Piezo
from .link.mailbox import PuckMailbox
from .core.table import GameBefore
from .ui.canvas import banner
from .ui.screens import farewell, render

log = logging.getLogger(__name__)
MAX_WAIT_S = 1.0       # the watchdog ping period when the caller gives none
CLOCK_SKEW_S = 10.0    # edge ticks this far off the loop clock are on another epoch: re-based
PUCK_EDGE_AGE_MAX_MS = 1000   # a puck's since_edge_ms beyond this is taken as this (a report
                              # on change comes within 20 ms of the edge)
PR_SET_TIMERSLACK = 29        # prctl(2) option: this thread's timer slack, in nanoseconds
FRAME_S = 1 / 30              # the OLED's refresh: at most one frame per 1/30 s, however fast the
                              # inputs come (a full SSD1306 frame takes ~25 ms at 400 kHz)
LOOP_TIMER_SLACK_NS = 1000    # the loop's: a settle window closes within 1 us of its due time
                              # instead of Linux's default 50 us (the loop sleeps between inputs
                              # and wakes a few times per buzz: there is nothing to coalesce)


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
    except (ImportError, OSError, AttributeError):   # no ctypes (a build without libffi), no
        return False                                  # libc to call (a static or unusual build)


def game_time(t: float) -> str:
    """Game time as the OLED shows it: m:ss (minutes past 59 keep counting)."""
    whole = int(max(0.0, t))
    return f"{whole // 60}:{whole % 60:02d}"


@dataclass(frozen=True)
class Wake:
    """Put on the queue to make the loop look again: an event from outside the pins (`saved`,
    if given, is told once the event's record is durable: None, or why it is not), or the
    links the QR screens show (`links`)."""
    event: InputEvent | None = None
    saved: Callable[[str | None], None] | None = None
    links: tuple[str, ...] | None = None


TIMER = Wake()          # the loop's own wake-up for a due engine timer (immutable: one will do)


class FrameWake(Wake):
    """Put on the queue by the log's writer thread: the records a waiting frame shows are
    durable now (or the log has a problem): draw."""


FRAME_WAKE = FrameWake()


class PuckWake(Wake):
    """The puck's one wake token: the loop takes what the puck mailbox holds (at most one
    of these is ever queued, however fast the puck talks)."""


class Box:
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
        self._seen_game: Any = None          # the game state last looked at for its game over
        self._told_over: tuple[Any, bool] | None = None     # (engine, over) the writer was told
        self.watchdog_s = watchdog_s if watchdog_s is not None else MAX_WAIT_S
        self._kick_due = 0.0                 # time.monotonic() of the next watchdog ping
        self.on_exit = on_exit               # called on the loop thread when the loop ends
        self.asked_to_stop = False
        self.on_draw: Callable[["Box", Any], None] | None = None   # the web hub's snapshot
        self.web_links: tuple[str, ...] = ("", "")      # the big screen's address and the host's link (OLED QR)
        self._saving: list[tuple[int, Callable[[str | None], None]]] = []   # host commands awaiting durability
        self._saving_lock = threading.Lock()
        self.inbox = Inbox()      # the loop's queue (hall edges may wait for the next frame)
        self.queue: "queue.SimpleQueue[RawEdge | Wake | None]" = self.inbox
        pins = config.pin_map()
        # Every player button and LED the pin map has, not only the config's players': the
        # players can change (MENU > Players, a resumed log); a button beyond them does nothing.
        n = sum(1 for b in BUTTONS if b[0] == "P")
        self.seats = sum(1 for i in range(1, n + 1) if f"P{i}" in pins)   # its engines are told
        if config.wind_source == "puck":      # the turntable is on the puck, not on our pins
            pins = {k: v for k, v in pins.items() if not k.startswith("HALL")}
        self.inputs = build_inputs(pins, n, self.queue, factory)
        self.player_lines = player_lines(self.inputs)     # read as each settle window closes
        self.start_levels = reading_levels(self.inputs, LEVEL_NAMES)   # before the fold: an edge
                                                                        # meanwhile is queued
        self.leds = Leds(pins, n, factory)
        self.piezo = Piezo(pins.get("PIEZO") if config.sound else None, factory, config.tunes)
        self.t0 = factory.ticks()
        self.store = store
        if store is not None:   # its notice came or went: redraw now, not at the next input
            store.on_notice = lambda: self.queue.put(Wake())
        self.games_started = 0
        self.thread: threading.Thread | None = None
        self.handled = 0
        self.stale = True
        # --- frames (#27 items 1 and 3)
        self.frame_s = FRAME_S
        self._frame_next = 0.0        # time.monotonic() before which no frame is drawn
        self._frame_waits = False     # a frame waits for the log: the writer wakes the loop
        self._frame_give_up: float | None = None   # ... until then (the disk is not responding)
        self._realized = False        # realize_all has run (first thing on the loop thread)
        self.spinning = False         # hall edges came since the last frame: the next ones wait
                                      # for the next frame's time instead of waking the loop
        if store is not None:
            store.on_settled = self._log_settled
        # --- end frames
        self.tick_offset = 0.0
        self.logged_clock = 0.0       # the engine's clock as a fold of the log would have it
        self.resumed_records = 0
        self.resumed = self._resume()
        if self.resumed and self.engine.restore_asked:
            self._restore()          # a power cut came between an undo and the game it brings back
        if self.resumed and store is not None:
            store.drop_restored_copy()
        self.resumed_other = self._resumed_over_config() if self.resumed else ""
        if not self.resumed:
            self._use(self._new_engine(config.game))
        self._reconcile_buttons()
        self.puck: Any = None
        self._puck_last: tuple[str, int, int] | None = None
        self._puck_hello: str | None = None
        self.puck_mail = PuckMailbox(lambda: self.queue.put(PuckWake()))
        if config.wind_source == "puck":
            self._start_puck()
        self.leds.show(self.engine.lit())    # the first frame: daemon.main draws it before READY

    # ---- the wind puck (its reader thread only posts to the mailbox) ----

    def _start_puck(self) -> None:
        from .link.serial_port import PuckLink   # deferred: pyserial costs ~35 ms; only with a puck
        self.puck = PuckLink(self.config.puck_port or None, self._puck_message, self._puck_status)
        self.puck.start()

    def _puck_message(self, msg: Any) -> None:
        from .link import proto       # deferred: only a box with a puck (its CRC table: #27 item 4)
        now = self.now()
        if isinstance(msg, proto.Hello):
            if msg.boot_id == self._puck_hello:    # asked again, same boot: nothing new
                return
            self._puck_hello = msg.boot_id
            self.puck_mail.post(PuckStatus(now, True, msg.boot_id))
        elif isinstance(msg, proto.Counts):
            key = (msg.boot_id, msg.net, msg.invalid)
            if key == self._puck_last:         # a heartbeat with nothing new: nothing to log
                return
            self._puck_last = key
            age_ms = min(max(msg.since_edge_ms, 0), PUCK_EDGE_AGE_MAX_MS)
            self.puck_mail.post(HallCounts(now - age_ms / 1000.0, msg.boot_id, msg.net,
                                           msg.invalid))

    def _puck_status(self, connected: bool) -> None:
        if not connected:
            self._puck_last = self._puck_hello = None
            self.puck_mail.post(PuckStatus(self.now(), False))

    def _puck_take(self) -> None:
        """The loop reached the puck's wake token: handle what the mailbox holds, in order."""
        for event in self.puck_mail.take():
            self.handle(Wake(event))

    def _reconcile_buttons(self, new_game: bool = False) -> None:
        """Make the engine's buttons the real ones at start, and log that as a `resume` record.

        After a power cut the log may leave buttons down (a press whose release was never
        logged) and timers running (long presses, holds, contact settles): none of that is
        happening any more. A `Resume` at the last logged time releases every button without
        effect, stops those timers, closes an open settle window on the presses it holds and
        drops a shutdown request; buttons down now are ignored until released. A fresh log
        only needs it when a button is down, and so does a new game (`new_game`: a new engine,
        which without it read a button stuck down with its edge lost as a press in flight and
        held the first settle window of every game for it).

        The same record carries the hall sensors' and encoder contacts' levels when the
        engine's decoders do not have them (`hall`/`encoder`: a magnet resting on a latch, a
        turntable moved while the power was off; a new engine starts at 00): the decoders take
        them without a step, so the first turn counts 4 steps, not 1. At power-up they were read
        as the pins were set up, before the fold: an edge during the fold is queued and decoded
        from there. A new game reads them then: an edge still queued happened before the
        read, and once the queue is through the decoders have the pins' levels."""
        held = tuple(name for name, down in reading_levels(self.inputs, BUTTON_NAMES).items() if down)
        for name in held:
            log.warning("button %s is held down at start (stuck?): ignored until released", name)
        levels = reading_levels(self.inputs, LEVEL_NAMES) if new_game else self.start_levels
        hall = self._changed(self.engine.hall, levels.get("HALL_A"), levels.get("HALL_B"))
        encoder = self._changed(self.engine.encoder, levels.get("ENC_A"), levels.get("ENC_B"))
        if (self.resumed and not new_game) or held or hall or encoder:
            event = Resume(self.engine.clock, held, hall, encoder)
            self._log(to_record(event))
            self.engine.feed(event)

    @staticmethod
    def _changed(decoder: Any, a: int | None, b: int | None) -> tuple[int, int] | None:
        """The (A, B) levels `decoder` must take to match the pins read (a pin not in the pin
        map keeps the decoder's level); None if it has them already."""
        levels = (decoder.a if a is None else a, decoder.b if b is None else b)
        return None if levels == (decoder.a, decoder.b) else levels

    def _new_engine(self, game: str) -> Engine:
        """A fresh engine; its clock starts at 0 now (callers install it with `_use`)."""
        rules = registry.get(game)
        problem = players_problem(rules, len(self.config.players))
        if problem is not None:
            # Never start (and log) a game its players cannot play: resume would refuse that log.
            raise ValueError(problem)
        seed = (self.config.seed or 0) + self.games_started
        self.games_started += 1
        return registry.new_engine(rules, tuple(self.config.players), self.config.options_for(game),
                                   seed, debounce_s=self.config.debounce_ms / 1000.0, seats=self.seats)

    def _resumed_over_config(self) -> str:
        """The saved game goes on, whatever the config (or simulate's flags) asks for: a game is
        never thrown away at start. If they differ, the config takes the saved game and players
        (so New game, the side panel and the keys agree with what is played) and the one line
        that says so is returned (empty if they agree)."""
        engine, config = self.engine, self.config
        if (engine.rules.name, tuple(engine.players)) == (config.game, tuple(config.players)):
            return ""
        self.config = replace(config.with_game(engine.rules.name), players=tuple(engine.players))
        line = (f"Resumed the saved {engine.rules.title} ({len(engine.players)} players), "   # fits 80
                f"not {config.game} for {', '.join(config.players)}")                     # columns
        log.warning("%s", line)
        return line

    def _use(self, engine: Engine) -> None:
        """Install a new game's engine: its clock starts now, and so does its log. The box's
        own Wi-Fi carries over from the game before (its header says so)."""
        if getattr(self, "engine", None) is not None:
            engine.hotspot = self.engine.hotspot
        engine.tunes, engine.colours = self.config.tunes, self.config.colours
        self.engine = engine
        self.t0 = self.factory.ticks()
        self.tick_offset = 0.0
        self.logged_clock = engine.clock
        self._start_log()

    # ---- the durable log ----

    def _start_log(self) -> None:
        if self.store is not None:
            e = self.engine
            header = {"game": e.rules.name, "players": list(e.players), "options": e.options, "seed": e.seed}
            if e.seats < SEATS:             # a box with fewer player buttons: MENU > Players knows
                header["seats"] = e.seats
            if e.hotspot is not None:       # the box's own Wi-Fi is up as the game starts
                header["hotspot"] = to_record(HotspotState(0.0, *e.hotspot))["hotspot"]
            self.store.start(header)

    def _resume(self) -> bool:
        """Fold the logged game in progress back into an engine while reading it (no list of
        records is held); False if there is none. A damaged record ends the valid prefix."""
        reader = self.store.read() if self.store is not None else None
        if reader is None:
            return False
        assert self.store is not None
        with reader:
            try:
                engine = self._engine_for(reader.header)
            except Exception as err:  # any bad header content: keep the file, start afresh
                self.store.move_aside(f"cannot resume ({type(err).__name__}: {str(err)[:80]})")
                return False
            _, why, broken = fold_records(engine, reader.records())
            if why is not None:
                reader.reject(why)
            if broken:                        # the engine may be half-changed: fold again
                engine = self._refold(reader, reader.count)
            self.store.resumed(reader)
        engine.tunes, engine.colours = self.config.tunes, self.config.colours
        self.engine = engine
        self.logged_clock = engine.clock
        self.t0 = self.factory.ticks() - engine.clock   # our clock carries on from the log's
        self.resumed_records = reader.count
        if reader.damage is not None:
            engine.notice = f"recovered to {game_time(engine.clock)}"
        log.info("resumed %s after %d logged inputs", engine.rules.name, reader.count)
        return True

    def _engine_for(self, header: dict[str, Any]) -> Engine:
        return registry.engine_for(header, debounce_s=self.config.debounce_ms / 1000.0)

    def _refold(self, reader: Any, good: int) -> Engine:
        """A fresh engine folded through the first `good` records (after a record broke the fold)."""
        engine = self._engine_for(reader.header)
        damage = reader.damage
        reader.count, reader.good_end = 0, reader.header_end
        fold_records(engine, reader.records(limit=good))
        reader.damage = damage
        return engine

    def _log(self, record: dict[str, Any]) -> int:
        """Hand a record to the log's writer; its sequence number (0: no log)."""
        self.logged_clock = max(self.logged_clock, record["t"])
        return self.store.append(record) if self.store is not None else 0

    def _durable(self, seq: int) -> None:
        """Show nothing a record caused before the record is on disk (unless the disk refuses)."""
        if self.store is not None and seq:
            self.store.wait(seq)

    # --- lamp (#27 item 1)
    def _mark(self) -> tuple[Any, Any, int]:
        """What tells a buzz decision apart: the open window, the last buzz, the undo depth."""
        engine = self.engine
        return engine.window, engine.table.last_buzz, len(engine.undo_stack)

    def _decided(self, mark: tuple[Any, Any, int], effects: list[Any]) -> bool:
        """Did the engine's step since `mark` only decide a buzz (a settle window closed on a
        new winner; no judgement, no undo, no request)? Its lamp and tone need no record to be
        durable: nobody has acted on that buzz yet."""
        window, buzz, undo = mark
        engine = self.engine
        last = engine.table.last_buzz
        if (window is None or engine.window is window or last is None or last is buzz
                or undo != len(engine.undo_stack)):
            return False
        for effect in effects:
            if isinstance(effect, Request):
                return False
        return True

    def _show_now(self, effects: list[Any]) -> None:
        """A decided buzz: its lamp (lights first), then its tone, without waiting for the log."""
        self.leds.show(self.engine.lit())
        self.apply(effects)
    # --- end lamp

    # ---- time ----

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

    def put_host_command(self, cmd: HostCommand, saved: Callable[[str | None], None] | None = None) -> None:
        """A command from the host's remote joins the queue like a press, stamped now; `saved`
        is told when its record is durable (any thread)."""
        self.queue.put(Wake(replace(cmd, t=self.now()), saved))

    def show_links(self, links: tuple[str, ...]) -> None:
        """What the QR screens carry from now on (any thread: the loop takes it in turn)."""
        self.queue.put(Wake(links=links))

    def _when_saved(self, seq: int, saved: Callable[[str | None], None]) -> None:
        """Tell `saved` once record `seq` is durable, or at once why it will not be soon."""
        store = self.store
        if store is None or not seq:
            saved(None)
            return
        with self._saving_lock:
            if store.durable < seq and store.problem is None:
                self._saving.append((seq, saved))
                return
        saved(None if store.durable >= seq else f"not saved: {store.problem}")

    def _tell_saved(self) -> None:
        """Answer the waiting commands whose records are durable now, and, while the log has a
        problem, the others with it (the box plays on from memory)."""
        store = self.store
        if store is None or not self._saving:
            return
        with self._saving_lock:
            problem = store.problem
            done = [(seq, saved) for seq, saved in self._saving if seq <= store.durable or problem is not None]
            if not done:
                return
            self._saving = [item for item in self._saving if item not in done]
        for seq, saved in done:
            saved(None if seq <= store.durable else f"not saved: {problem}")

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
        if not self._realized:        # start-up work kept off the way to READY (#27 item 4): the
            self._realized = True     # event classes not made yet, made here on the loop thread
            realize_all()             # (a press meanwhile waits in the queue, stamped)
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
        snooze = False
        # Draw unless an engine timer is due this instant. A wait of 0 for the display's retry
        # must draw (the draw is the retry): skipping it left the retry due forever, and the
        # loop spun a whole core whenever the display was missing.
        if (self.stale and not (timer and wait == 0) and self.engine.window is None   # (settling)
                and self.queue.empty()):
            hold = self._frame_hold()
            if hold is None:
                self.draw()            # only when nothing is pending: a frame never delays a buzz
                return True
            if wait is None or hold < wait:   # the frame's time comes first: wake for it
                wait, timer = hold, False
            snooze = True              # (#27 item 3) the spin's edges wait for the frame
        elif self.spinning:            # a spin: its next edges wait for the next frame's time
            hold = self._frame_next - time.monotonic()
            if hold > 0:
                if wait is None or hold < wait:
                    wait, timer = hold, False
                snooze = True
            else:
                self.spinning = False
        if snooze:
            self.inbox.snooze()
        elif self.inbox.snoozing:      # edges left in the tray when a frame was drawn: now
            self.inbox.wake()
        try:
            item = self.queue.get(timeout=wait)
        except queue.Empty:
            if self.inbox.snoozing:        # a spin's frame time (or its end)
                due = not timer and self.engine.window is None and self.queue.empty()
                if due and self.stale and self._frame_hold() is None:
                    # What the frame shows is durable (its edges' records were synced while
                    # the loop slept): draw it before taking the edges that waited in the tray.
                    self.draw()
                taken = self.inbox.wake()
                if taken and due and not self.stale:
                    # Those edges are shown by the next frame, and their records are synced
                    # during its wait: a spin costs the loop one wake a frame, not two (one for
                    # the frame's time, one for the log's "durable now").
                    self._frame_next = time.monotonic() + self.frame_s
                elif not taken and not self.stale:
                    self.spinning = False  # the spin has stopped: the next edge wakes the loop
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

    # --- frames (#27 items 1 and 3)
    def _frame_hold(self) -> float | None:
        """None: draw the stale frame now. Else the seconds it waits at most: until the
        display's next refresh (one frame per `frame_s`: a spin's edges share frames), or
        until the log has made durable what the frame shows (a score is shown only once it is
        saved). The loop waits for either on its queue, not in `store.wait`: an input that
        comes meanwhile is handled at once (a buzz's lamp never waits behind a frame's sync);
        the writer puts `FRAME_WAKE` on the queue when the records are durable."""
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

    def _log_settled(self) -> None:
        """On the log's writer thread: records became durable (or the log has a problem)."""
        self._tell_saved()
        if self._frame_waits:
            self._frame_waits = False
            self.inbox.ring(FRAME_WAKE)       # not an input: the hall's tray stays (#27 item 3)
    # --- end frames

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
        if isinstance(item, FrameWake):       # a waiting frame's records are durable: the next
            return                            # pass draws it (#27 item 1)
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
            # --- lamp (#27 item 1): a window due by this input's time is decided first, alone
            # (`feed` would fire it first too), so its buzz is shown at once and this input's
            # own effects wait for its record as usual.
            window = self.engine.window
            asked = False
            if window is not None and window.due <= event.t and not isinstance(event, Pending):
                mark = self._mark()
                # `feed` clears the engine's "undo found nothing" flag, then fires the timers
                # due: one of them (a long NO) may set it. Fired here instead, the flag they set
                # must outlive the `feed` below, as the fold of this input's record has it.
                self.engine.restore_asked = False
                early += self.engine.advance(event.t)
                asked = self.engine.restore_asked
                if self._decided(mark, early):
                    self._show_now(early)
                    early = []
            mark = self._mark() if self.engine.window is not None else None  # (no window: no buzz)
            effects = early + self.engine.feed(event)
            if asked:
                self.engine.restore_asked = True
            if mark is not None and self._decided(mark, effects):   # an awaited press in flight
                                                                     # arrived and closed it
                self._show_now(effects)
                effects = []
            # --- end lamp
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
                    # --- lamp (#27 item 1): a settle window closed on a buzz alone. Its LEDs
                    # and sound go out now, before any record is durable (the presses that
                    # decided it were handed to the writer as they came; a power cut before
                    # they are on disk loses a buzz nobody could act on yet). This wake-up's
                    # record is handed to the writer after the LEDs (the log's order is the
                    # same: nothing else is logged in between).
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

    def _game_over_to_history(self) -> None:
        """At game over the writer copies the game into history/ (the big screen lists it at
        once); an undo out of it takes the copy back. Looked at only when the game state
        changed (an identity test per input), told only when it goes over or back."""
        engine = self.engine
        game = self._seen_game = engine.table.game
        over = bool(engine.rules.is_over(game))
        if self._told_over != (engine, over):
            if over or (self._told_over is not None and self._told_over[0] is engine):
                self.store.finished(over)     # type: ignore[union-attr]
            self._told_over = (engine, over)

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

    def request(self, req: Request) -> None:
        if req.name == "restore":
            self._restore()
            self.leds.show(self.engine.lit())
        if req.name == "rename":       # a new game keeps the names the host gave
            self.config = replace(self.config, players=self.engine.players)
        if req.name == "players":      # checked by the table (core/table.py: names_problem)
            self.config = replace(self.config, players=tuple(json.loads(req.arg)))
        before = self.config
        if req.name == "switch" and req.arg and req.options:
            try:
                options = json.loads(req.options)
                assert isinstance(options, dict)
            except (ValueError, AssertionError):
                self.engine.notice = "bad game options"
                return
            self.config = replace(self.config, games={**self.config.games, req.arg: options})
        if req.name == "switch" and req.arg:
            try:
                engine = self._new_engine(req.arg)
            except (ValueError, LookupError) as err:   # e.g. more players than that game takes
                self.config = before                   # refused options are not kept for later
                self.engine.notice = str(err).split(":")[-1].strip()[:40]
                return
            log.info("switching to %s", req.arg)
            self.config = self.config.with_game(req.arg)
            self._use(engine)
            self._reconcile_buttons(new_game=True)
        elif req.name in ("new", "players"):     # other players: a new game (its log) with them
            said = self.engine.notice
            self._use(self._new_engine(self.engine.rules.name))
            self._reconcile_buttons(new_game=True)
            if req.name == "players":
                self.engine.notice = said             # "New game: 3 players" stays on screen
        if req.name in ("switch", "new", "players"):
            self.leds.show(self.engine.lit())   # every lamp as the new game's first screen has it
        if self.on_request is not None:
            self.on_request(req)

    def _restore(self) -> None:
        """Undo with nothing left to undo, in a game that New game, Change game or Players
        started: the game before comes back exactly as it was. Its log (history/, found by the
        number in this game's header) is folded into a fresh engine, which then takes a
        `resume` record (the buttons down now, as at any start) and the undo of the step that
        ended it (`{"host": "undo"}`: New game's own undo step, core/table.py `GameBefore`).
        Those two records are appended to a copy of that log, which becomes current.log in one
        rename: a power cut before it resumes this game, whose last record is the undo, and
        does this again; after it, the game before. Refused with a notice (this game plays
        on) if the game before is not kept, damaged, or its log does not end in that step."""
        store = self.store
        if store is None:
            return
        store.wait()                          # this game's header, and its `previous`, on disk
        number = store.previous
        if number is None:
            return                            # the first game here: "Nothing to undo" stands
        source = store.history_file(number)
        if source is None:
            self.engine.notice = "Game before: not kept"
            return
        try:
            with open_log(source) as reader:
                engine = self._engine_for(reader.header)
                _, why, _ = fold_records(engine, reader.records())
                if why is not None or reader.damage is not None:
                    raise ValueError(why or reader.damage)
                steps = engine.undo_stack
                if not steps or not isinstance(steps[-1][0], GameBefore):
                    raise ValueError("it does not end in New game, Change game or Players")
                held = tuple(n for n, down in reading_levels(self.inputs, BUTTON_NAMES).items() if down)
                levels = reading_levels(self.inputs, LEVEL_NAMES)
                resume = Resume(engine.clock, held,
                                self._changed(engine.hall, levels.get("HALL_A"), levels.get("HALL_B")),
                                self._changed(engine.encoder, levels.get("ENC_A"), levels.get("ENC_B")))
                undo = HostCommand(engine.clock, "undo")
                engine.feed(resume)
                engine.feed(undo)
                store.restore(source, reader, [to_record(resume), to_record(undo)])
        except (OSError, ValueError, LookupError, Damaged) as err:
            log.error("undo: cannot bring back %s: %s", source.name, err)
            self.engine.notice = "Cannot undo: game before damaged"[:40]
            return
        log.info("undo: %s is back (%s)", engine.rules.title, source.name)
        engine.tunes, engine.colours = self.config.tunes, self.config.colours
        self.engine = engine
        self.logged_clock = engine.clock
        self.t0 = self.factory.ticks() - engine.clock   # our clock carries on from its log's
        self.tick_offset = 0.0
        self.config = replace(self.config.with_game(engine.rules.name), players=tuple(engine.players))

    def refresh(self) -> None:
        self.leds.show(self.engine.lit())
        self.draw()

    def draw(self) -> None:
        """Render the engine's state once every logged record is durable (a score is shown only
        once it is saved); the display sends it only if it changed."""
        self.stale = False
        self._frame_next = time.monotonic() + self.frame_s       # (#27 item 3)
        if self.store is not None:
            self.store.wait()
            self._tell_saved()
        frame = render(self.engine, self.web_links)
        if self.store is not None and self.store.notice:
            banner(ImageDraw.Draw(frame), self.store.notice)
        if self.on_draw is not None:
            self.on_draw(self, frame)
        if self.display.show(frame, self.now()) and self.on_frame is not None:
            self.on_frame(frame)

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
