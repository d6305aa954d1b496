"""The lamp rule: a decided buzz's LED and tone go out at once, before its records are durable.

A buzz is decided when a settle window closes on a new winner, and nothing else happened in
that step: no judgement, no undo, no request (`_decided`, against the `_mark` taken before the
step). Nobody can have acted on such a buzz yet, so its lamp (lights first) and tone are shown
without waiting for the log (`_show_now`); a power cut before its presses are on disk loses a
buzz nobody could act on. Everything else the engine does is shown only once its record is
durable (recorder.py).
"""
from __future__ import annotations

from typing import Any, Callable

from ..core.events import Request
from ..hw.outputs import Leds


class Lamp:
    """The buzz decision's fast path to the LEDs and the piezo."""
    engine: Any
    leds: Leds
    apply: Callable[[list[Any]], None]      # the loop's: sounds and requests

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

    def _decide_due(self, t: float, early: list[Any]) -> tuple[list[Any], bool]:
        """An input at `t` finds the open settle window due: decide it first, alone (`feed`
        would fire it first too), so its buzz is shown at once and the input's own effects wait
        for its record as usual. The effects still to apply, and whether a timer fired here
        asked to bring the game before back (`restore_asked`, which the input's `feed` clears
        and must be set again after it, as the fold of the input's record has it)."""
        mark = self._mark()
        self.engine.restore_asked = False
        early += self.engine.advance(t)
        asked = self.engine.restore_asked
        if self._decided(mark, early):
            self._show_now(early)
            early = []
        return early, asked
