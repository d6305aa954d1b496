"""The engine: the fold that timestamped inputs drive, on whatever clock feeds it.

Inputs in, game actions and effects out. It never reads a clock: `feed(event)` moves its clock to
the event's time, `advance(now)` fires timers due by `now`, and `next_deadline()` says when the
caller should call `advance` next. The live loop, `replay`, `simulate`, resume after a power cut
and undo all drive this one object. Its parts, each its own module:

- core/controls.py: edges -> actions (debounce, long presses and holds, encoder detents, hall
  and puck counts);
- core/arbiter.py: the settle window and the fair first press (earliest timestamp wins);
- core/table.py: the table (the game, undo, the menu, the host's commands), which `Engine` is.

The engine owns the clock and the timers (contact settles, long presses, the settle window, the
game's timer) and fires them in due order before each input.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from .arbiter import PENDING_GRACE_S, Window, complete, decide
from .controls import BUTTONS, HOLD_S, LONG_S, STEPS_PER_DETENT, Controls
from .debounce import DEBOUNCE_S, Debouncer
from .events import (Buzz, BuzzOpened, Edge, Effect, EncoderLevel, HallCounts, HallLevel, HallStep,
                     HostCommand, HotspotState, InputEvent, Pending, PuckReset, PuckStatus, Resume, Sound,
                     Tick, Turn)
from .frozen import replace
from .game import Catalogue, Game
from .quadrature import Quadrature
from .names import NAME_MAX
from .records import SEATS, Record, from_record, quantize
from .table import Table, Tabletop
from .tunes import buzz_sound

# Where they were defined before the engine was split (hub.py, tests and tools import them here).
__all__ = ["BUTTONS", "HOLD_S", "LONG_S", "NAME_MAX", "PENDING_GRACE_S", "STEPS_PER_DETENT", "Engine",
           "Table", "Window", "fold_records"]

COUNTDOWN_AFTER_S = 0.5     # MENU held this long: the screen counts down to the power-off
_BUZZ_TUNES: dict[int, Sound] = {}   # player -> their buzz's (immutable) effect, made once
                                     # (a frozen event costs ~3 000 instructions to make)


class Engine(Tabletop):
    def __init__(self, rules: Game, players: tuple[str, ...], options: Mapping[str, Any], seed: int,
                 *, debounce_s: float = DEBOUNCE_S, catalogue: Catalogue | None = None,
                 seats: int = SEATS) -> None:
        super().__init__(rules, players, options, seed, catalogue, seats)
        self.debounce_s = debounce_s
        self.clock = 0.0
        self.controls = Controls(debounce_s)
        self.window: Window | None = None
        self.unheard: set[str] = set()    # read pressed, waited for, no edge came: not waited for
                                          # again until an edge of theirs arrives
        self._spent_tick: float | None = None             # the game timer that last fired
        self.fired = 0                    # timers fired so far (the box logs a wake-up that fired one)
        # A game with no timer of its own (it keeps `Game.next_timer`) is not asked for one in
        # the engine's scan of its timers (which runs several times an input).
        self._game_timer = getattr(type(rules), "next_timer", None) is not Game.next_timer

    # ---- driving ----

    def feed(self, event: InputEvent) -> list[Effect]:
        """Handle one input: first fire every timer due by its time, then act on it. (A
        `Pending` acts first: the box looked at the pins before the window could close.)"""
        self.restore_asked = False
        if isinstance(event, Pending):
            self._pend(event)
        self._fire_due(max(self.clock, event.t))
        self._handle(event)
        return self._take_effects()

    def advance(self, now: float) -> list[Effect]:
        """Let the clock run on to `now`, firing timers due by then."""
        self._fire_due(max(self.clock, now))
        return self._take_effects()

    def next_deadline(self) -> float | None:
        """When to call `advance` next: the first timer, or the next step of the power-off
        countdown on screen (a step fires nothing: the driver only redraws)."""
        due = self._next_timer()
        step = self._countdown_step() if "MENU" in self.controls.holds else None
        if step is not None and (due is None or step < due[0]):
            return step
        return None if due is None else due[0]

    def power_off_in(self) -> int | None:
        """MENU is being held towards the power-off: the whole seconds left (3, 2, 1), shown
        once it has been down `COUNTDOWN_AFTER_S` (a tap that opens the menu shows nothing).
        None otherwise; letting go of MENU cancels it."""
        due = self.controls.holds.get("MENU")
        if due is None or self.clock < due - LONG_S["MENU"] + COUNTDOWN_AFTER_S:
            return None
        return max(1, math.ceil(due - self.clock - 1e-6))    # 3 .. 1 (a microsecond's slack)

    def _countdown_step(self) -> float | None:
        """The next time the countdown's number changes (or it appears), if MENU is held."""
        due = self.controls.holds.get("MENU")
        if due is None:
            return None
        steps = (due - LONG_S["MENU"] + COUNTDOWN_AFTER_S,) + tuple(due - s for s in range(int(LONG_S["MENU"]) - 1, 0, -1))
        return next((at for at in steps if at > self.clock), None)

    # ---- views ----

    @property
    def settling(self) -> bool:
        """A fair-press settle window is open: presses still being collected, no winner yet.
        (A live loop should keep the CPU free meanwhile: a late press callback must run.)"""
        return self.window is not None

    def look(self, down: Iterable[str], t: float) -> Pending | None:
        """What the live box feeds (and logs) when the open settle window is due and the buttons
        in `down` read pressed on the pins at `t`: the eligible players who have not pressed in
        this window and whose press edge has not arrived (their debounced contact is open) -
        edges in flight. None if there are none, or the window was looked at already: it is
        then decided as it is. Pure: the caller reads the pins."""
        window = self.window
        if window is None or window.looked:
            return None
        pending = tuple(b for b in BUTTONS[:len(self.players)] if b in down and self._in_flight(b, window))
        return Pending(t, pending, quantize(t + PENDING_GRACE_S)) if pending else None

    def held(self) -> list[str]:
        """The buttons down right now (debounced)."""
        return self.controls.down()

    def lit(self) -> frozenset[int]:
        menu = self.menu           # (`testing`, `game`: the box asks on every input)
        if menu is not None and menu.button_test:
            return frozenset(int(b[1:]) - 1 for b in self.held() if b.startswith("P"))
        return self.rules.lit(self.table.game)

    # The controls' state, under the names it had on the engine.
    @property
    def buttons(self) -> dict[str, Debouncer]:
        return self.controls.buttons

    @property
    def holds(self) -> dict[str, float]:
        return self.controls.holds

    @property
    def hall(self) -> Quadrature:
        return self.controls.hall

    @property
    def encoder(self) -> Quadrature:
        return self.controls.encoder

    @property
    def encoder_steps(self) -> int:
        return self.controls.encoder_steps

    @property
    def puck(self) -> tuple[str, int, int] | None:
        return self.controls.puck

    @property
    def puck_connected(self) -> bool | None:
        return self.controls.puck_connected

    @property
    def _bouncing(self) -> bool:
        return self.controls.bouncing

    # ---- timers ----

    def _next_timer(self) -> tuple[float, int, str] | None:
        """The timer to fire first: the earliest due time, then the lowest kind (0 a button's
        debounce settle, 1 a long press, 2 the settle window, 3 the game's timer), then the
        first in button order. One scan, nothing allocated per timer: it runs on every input.
        The buttons are scanned only after an edge (only an edge starts a contact settle), until
        a scan finds none due: a hall spin or a dial turn never looks at them."""
        controls = self.controls
        best: tuple[float, int, str] | None = None
        if controls.bouncing:
            for name, deb in controls.buttons.items():
                at = deb.settle_due
                if at is not None and (best is None or at < best[0]):
                    best = (at, 0, name)
            controls.bouncing = best is not None
        for name, at in controls.holds.items():
            if best is None or at < best[0]:
                best = (at, 1, name)
        window = self.window
        if window is not None and (best is None or window.due < best[0]):
            best = (window.due, 2, "")
        game_due = self.rules.next_timer(self.table.game) if self._game_timer else None
        if game_due is not None and game_due != self._spent_tick and (best is None or game_due < best[0]):
            best = (game_due, 3, "")
        return best

    def _fire(self, kind: int, name: str, at: float) -> None:
        if kind == 0:
            self.controls.settle(name, self)
        elif kind == 1:
            self.controls.held(name, at, self)
        elif kind == 2:
            self._close_window(at)
        else:
            self._tick(at)

    def _tick(self, t: float) -> None:
        """The game's timer fired; a game that leaves the same due time is not fired again."""
        self._spent_tick = t
        self._step(Tick(t))

    def _fire_due(self, now: float) -> None:
        while True:
            due = self._next_timer()
            if due is None or due[0] > now:
                break
            at, kind, name = due
            self.clock = max(self.clock, at)
            self.fired += 1
            self._fire(kind, name, at)
        self.clock = now

    def _cleared(self) -> None:
        self.window = None
        self._spent_tick = None

    # ---- inputs ----

    def _handle(self, event: InputEvent) -> None:
        if isinstance(event, Edge):
            if self.controls.edge(event.button, event.t, event.pressed, self):
                self.unheard.discard(event.button)
                self._heard(event.button)
        elif isinstance(event, Turn):
            self._dial(event.t, event.delta)
        elif isinstance(event, EncoderLevel):
            delta = self.controls.encoder_level(event.sensor, event.level)
            if delta:
                self._dial(event.t, delta)
        elif isinstance(event, HallLevel):
            step = self.controls.hall_level(event.sensor, int(event.level))
            if step is not None:
                self._step(HallStep(event.t, *step))
        elif isinstance(event, HallCounts):
            step = self.controls.hall_counts(event)
            if step is not None:
                self._step(HallStep(event.t, *step))
        elif isinstance(event, PuckStatus):
            reset, changed = self.controls.puck_status(event)
            if reset:
                self._step(PuckReset(event.t))
            if changed:
                self.notice = "" if event.connected else "puck disconnected"
        elif isinstance(event, Resume):
            self._resume(event)
        elif isinstance(event, HostCommand):
            self._host(event)
        elif isinstance(event, HotspotState):
            self._hotspot(event)

    def _resume(self, event: Resume) -> None:
        """The box (re)started: nothing from before the cut is in flight any more (see `Resume`).

        A button the log left down was released at the cut, without effect (its short press
        needs a release that never came, its long press a hold nobody can prove); a button down
        now is ignored until released, like any button held at start. The hall and encoder
        decoders take the levels read at start, if given: a magnet resting on a latch, an
        encoder contact resting closed, a turntable moved while the power was off. Taken as
        they are, with no step and no missed edge (nobody saw how they got there), so the first
        edge after is decoded from where the sensors really are."""
        held = [b for b in event.held if b in self.controls.buttons]
        self.controls.cut(held, event.hall, event.encoder)
        if self.window is not None:                # no press can join it any more: decide it now
            self._close_window(self.clock)
        self.unheard.clear()                       # the pins were read afresh (`held`)
        self.shutdown_requested = False
        if held:
            self.notice = f"{', '.join(held)} held down: ignored"

    # ---- the fair first press (core/arbiter.py) ----

    def _player_press(self, player: int, t: float) -> None:
        window = self.window
        if window is not None:
            if player in window.eligible and player not in window.presses:
                window.presses[player] = t
            return
        table = self.table
        eligible = self.rules.buzzers(table.game)
        if table.judging and table.last_buzz is not None and not eligible:
            if player in table.eligible:
                self.table = replace(table, last_buzz=table.last_buzz.with_press(player, t))
            return
        # A game that takes buzzes again has finished with the last one (All Wound Up: a check
        # closed by its settle timer, not by a judgement): this press opens the next window.
        if player in eligible:
            self.window = Window(self.clock + self.rules.settle_s(table.game), eligible, {player: t})
            if self.rules.hears_buzz_opened:
                self._step(BuzzOpened(self.clock))
        else:
            super()._player_press(player, t)

    def _in_flight(self, button: str, window: Window) -> bool:
        """`button` reads pressed: is its press edge still to come for this window? (Not if it
        pressed in it already, is not eligible, its contact is known closed, or it was waited
        for before and no edge of its came since.)"""
        player = int(button[1:]) - 1
        return (player in window.eligible and player not in window.presses
                and not self.controls.buttons[button].raw and button not in self.unheard)

    def _pend(self, event: Pending) -> None:
        """The box looked at the pins as the window came due: it waits for the edges in flight
        until `event.until` at the latest (a window is looked at once)."""
        window = self.window
        if window is None or window.looked:
            return
        window.looked = True
        window.waiting = {b: False for b in event.buttons if b in BUTTONS[:len(self.players)]
                          and self._in_flight(b, window)}
        if window.waiting:
            window.due = max(window.due, event.until)

    def _heard(self, button: str) -> None:
        """An edge (or a contact settle) of `button`: close a window that waited for it once
        every button it waits for has joined it, or has been heard from and is not bouncing."""
        window = self.window
        if window is None or button not in window.waiting:
            return
        window.waiting[button] = True
        if complete(window, self.controls.buttons):
            self._close_window(self.clock)

    def _close_window(self, _at: float) -> None:
        window, self.window = self.window, None
        assert window is not None
        if window.waiting:
            self.unheard.update(b for b, heard in window.waiting.items() if not heard)
        buzz, rng = decide(window.presses, self.table.rng)
        tune = _BUZZ_TUNES.get(buzz.winner)                       # each player's own tune
        if tune is None:
            tune = _BUZZ_TUNES[buzz.winner] = Sound(buzz_sound(buzz.winner))
        self._effects.append(tune)
        self._step(Buzz(buzz.winner_t, buzz.winner), rng=rng, judging=True, eligible=window.eligible,
                   last_buzz=buzz, earlier=self._earlier())


def fold_records(engine: Engine, records: Iterable[Record]) -> tuple[int, str | None, bool]:
    """Feed logged records to `engine` in order, as a resume does, up to the first one that is
    not an input (`from_record` refuses it) or that the engine refuses: the end of the valid
    prefix. Returns how many were folded, why it stopped there (None: every record folded) and
    whether the engine may be half-changed by the refused record (then fold a new engine
    through the good ones again)."""
    count = 0
    for rec in records:
        try:
            event = from_record(rec)
        except Exception as err:          # a record of the wrong shape: damage
            return count, f"{type(err).__name__}: {str(err)[:60]}", False
        try:
            engine.advance(event) if isinstance(event, float) else engine.feed(event)
        except Exception as err:
            return count, f"cannot fold ({type(err).__name__}: {str(err)[:60]})", True
        count += 1
    return count, None, False
