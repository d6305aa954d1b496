"""Edges in, actions out: the box's controls as the table sees them.

A contact's edges become presses and releases (`core/debounce.py`: an edge within the window of
the previous one is bounce; a press acts at its first edge); a press held long enough becomes a
long press (YES/NO 1 s, MENU 3 s) or a player's hold (2 s); the encoder's contact levels become
detents (4 quadrature steps each) and the hall sensors' levels, or the wind puck's absolute
counters, become turntable steps. No clock: the engine finds the contact settles
(`buttons[...].settle_due`, scanned while `bouncing`) and long presses (`holds`) due, in its
one scan of every timer, and fires them (`settle`, `held`).

What the presses mean is the table's business (`core/table.py`): `Controls` calls the
receiver it is handed (`Actions`: the engine) with `_down`, `_short`, `_held` and `_heard`, and
returns detents and steps for the caller to act on. It keeps no reference to the receiver, so
its state is plain data (a resume compares it field by field).
"""
from __future__ import annotations

from typing import Protocol

from .debounce import DEBOUNCE_S, Debouncer
from .events import HallCounts, PuckStatus
from .quadrature import Quadrature

LONG_S = {"YES": 1.0, "NO": 1.0, "MENU": 3.0}
HOLD_S = 2.0                 # a player button held this long is a PlayerHold
STEPS_PER_DETENT = 4         # encoder quadrature steps per click
BUTTONS = tuple(f"P{i}" for i in range(1, 9)) + ("YES", "NO", "MENU")


class Actions(Protocol):
    """What the controls tell: the table's button actions, and the arbiter's edge news."""

    def _down(self, button: str, t: float) -> bool:
        """A player's button went down at `t` (debounced); True: time its hold."""

    def _short(self, button: str, t: float) -> None:
        """A button came up before its long-press time (YES, NO, MENU: a short press)."""

    def _held(self, button: str, t: float) -> None:
        """A button stayed down its long-press (or hold) time, and is still down."""

    def _heard(self, button: str) -> None:
        """An edge or a contact settle of `button` arrived (a settle window may wait for it)."""


class Controls:
    """The buttons' contacts and long presses, the encoder's and the hall sensors' decoders, and
    the wind puck's last counters."""

    def __init__(self, debounce_s: float = DEBOUNCE_S) -> None:
        self.buttons = {b: Debouncer(debounce_s) for b in BUTTONS}
        self.holds: dict[str, float] = {}                 # button -> when its long press is due
        self.hall = Quadrature()
        self.encoder = Quadrature()
        self.encoder_steps = 0
        self.puck: tuple[str, int, int] | None = None     # boot id, net, invalid last seen
        self.puck_connected: bool | None = None           # None: no puck in use
        self.bouncing = False     # a button may have a contact settle due: scan them for timers

    # ---- buttons ----

    def edge(self, button: str, t: float, pressed: bool, actions: Actions) -> bool:
        """One contact edge; False if `button` is no button of ours."""
        deb = self.buttons.get(button)
        if deb is None:
            return False
        for down, at in deb.edge(t, pressed):
            self._transition(button, down, at, actions)
        if deb.settle_due is not None:     # a bounce: a contact settle is due
            self.bouncing = True
        return True

    def settle(self, button: str, actions: Actions) -> None:
        """`button`'s contact settle is due: it follows its last level."""
        for pressed, t in self.buttons[button].settle():
            self._transition(button, pressed, t, actions)
        actions._heard(button)

    def _transition(self, button: str, pressed: bool, t: float, actions: Actions) -> None:
        if pressed:
            if button in LONG_S:
                self.holds[button] = t + LONG_S[button]
            elif actions._down(button, t):
                self.holds[button] = t + HOLD_S
        elif button in self.holds:
            del self.holds[button]
            actions._short(button, t)

    def held(self, button: str, t: float, actions: Actions) -> None:
        """`button`'s long press is due: act now if it is still down; its release does nothing."""
        del self.holds[button]
        if self.buttons[button].logical:
            actions._held(button, t)

    def down(self) -> list[str]:
        """The buttons down right now (debounced)."""
        return [name for name, deb in self.buttons.items() if deb.logical]

    def cut(self, held: list[str], hall: tuple[int, int] | None, encoder: tuple[int, int] | None) -> None:
        """The box (re)started (a `Resume`): every button is up without effect except those in
        `held` (down now, ignored until released), no long press or contact settle is pending,
        and the decoders take the levels read at start, if given, with no step."""
        for name, deb in self.buttons.items():
            deb.raw = deb.logical = name in held
            deb.last_edge = float("-inf")          # the cut separates edges: no bounce across it
            deb.settle_due = None
        self.holds.clear()
        for decoder, levels in ((self.hall, hall), (self.encoder, encoder)):
            if levels is not None:
                decoder.a, decoder.b = (1 if levels[0] else 0), (1 if levels[1] else 0)
        self.encoder_steps = 0                     # half a detent before + half after is no detent

    # ---- the encoder, the hall sensors, the puck ----

    def encoder_level(self, sensor: str, level: int) -> int:
        """An encoder contact's level: the detent it completes (+1, -1), else 0."""
        self.encoder_steps += self.encoder.set_level(sensor, level)
        if abs(self.encoder_steps) >= STEPS_PER_DETENT:
            delta = 1 if self.encoder_steps > 0 else -1
            self.encoder_steps -= delta * STEPS_PER_DETENT
            return delta
        return 0

    def hall_level(self, sensor: str, level: int) -> tuple[int, bool] | None:
        """A hall sensor's level: (steps, an edge was missed), or None if the level is the one
        the decoder has (no edge)."""
        hall = self.hall
        if level == (hall.a if sensor == "A" else hall.b):
            return None
        invalid = hall.invalid
        delta = hall.set_level(sensor, level)
        return delta, hall.invalid != invalid

    def hall_counts(self, event: HallCounts) -> tuple[int, bool] | None:
        """The puck's absolute counters: (steps since its last report, an edge was missed), or
        None for its first report of a boot or one with nothing new."""
        last = self.puck
        self.puck = (event.boot_id, event.net, event.invalid)
        if last is None or last[0] != event.boot_id:
            return None
        delta, invalid = event.net - last[1], event.invalid - last[2]
        return (delta, invalid > 0) if delta or invalid else None

    def puck_status(self, event: PuckStatus) -> tuple[bool, bool]:
        """The puck came or went: (its counts start afresh: a wind check in progress is void,
        its connection changed)."""
        rebooted = self.puck is not None and self.puck[0] != event.boot_id
        reset = not event.connected or rebooted
        if reset:
            self.puck = None
        changed = event.connected != self.puck_connected
        self.puck_connected = event.connected
        return reset, changed
