"""Player LEDs and the piezo: applied from what the engine says, never decided here."""
from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Iterable

from gpiozero import LED, TonalBuzzer
from gpiozero.tones import Tone

from ..core.tunes import DEFAULT_TUNES, parse_tune

log = logging.getLogger(__name__)

# name -> (note, seconds) steps; None is a rest. Kept inside TonalBuzzer's default A3..A5 range.
SOUNDS: dict[str, tuple[tuple[str | None, float], ...]] = {
    "buzz": (("A5", 0.08),),
    "correct": (("C5", 0.08), ("E5", 0.08), ("G5", 0.12)),
    "wrong": (("C4", 0.25),),
    "over": (("C5", 0.1), ("E5", 0.1), ("G5", 0.1), ("C5", 0.1), ("G5", 0.3)),
    "undo": (("G4", 0.06), (None, 0.04), ("G4", 0.06)),
    "tick": (("A4", 0.02),),
    "theft": (("E5", 0.08), ("A5", 0.15)),
    "false-alarm": (("D4", 0.2), ("A3", 0.2)),
    "police": (("A5", 0.1), ("D5", 0.1), ("A5", 0.1), ("D5", 0.1)),
    "target": (("A5", 0.15),),
    "overshoot": (("A3", 0.08), (None, 0.03), ("A3", 0.08), (None, 0.03), ("A3", 0.08)),
    "roll": (("E5", 0.03), ("G5", 0.03), ("E5", 0.03), ("A5", 0.05)),
}


class Leds:
    """The players' LEDs. `show` writes only the LEDs whose state changes, straight to their
    pins: an LED's `value` setter first stops a blink we never start (three guarded attribute
    writes per LED), which was most of the LED cost of a buzz on the loop thread. A write is
    the pin's own `_set_state`, which gpiozero's `state` property calls through a lambda."""

    def __init__(self, pins: dict[str, int], n_players: int, factory: Any) -> None:
        self.leds = {i: LED(pins[f"LED{i + 1}"], pin_factory=factory)
                     for i in range(n_players) if f"LED{i + 1}" in pins}
        # active high: state = lit
        self.writes = {i: led.pin._set_state for i, led in self.leds.items()}
        self.lit: frozenset[int] = frozenset()

    def show(self, lit: Iterable[int]) -> None:
        lit = frozenset(lit)
        if lit == self.lit:
            return
        writes = self.writes
        for i in lit ^ self.lit:
            if i in writes:
                writes[i](i in lit)
        self.lit = lit

    def close(self) -> None:
        for led in self.leds.values():
            led.off()
            led.close()


Steps = tuple[tuple[str | None, float], ...]


class Piezo:
    """Plays named sounds on a worker thread, so the loop never waits for a tune.
    `buzz:P1` .. `buzz:P8` are the players' own buzz tunes (`tunes`, from the config)."""

    def __init__(self, pin: int | None, factory: Any, tunes: tuple[str, ...] = DEFAULT_TUNES) -> None:
        self.buzzer = TonalBuzzer(pin, pin_factory=factory) if pin is not None else None
        self.tunes: dict[str, Steps] = {f"buzz:P{i + 1}": parse_tune(t) for i, t in enumerate(tunes)}
        self.queue: "queue.SimpleQueue[Steps | None]" = queue.SimpleQueue()
        self.played: list[str] = []
        self.thread = threading.Thread(target=self._work, name="piezo", daemon=True)
        self.thread.start()

    def play(self, name: str) -> None:
        self.played.append(name)
        steps = self.tunes.get(name) or SOUNDS.get(name) or (SOUNDS["buzz"] if name.startswith("buzz") else None)
        if steps:
            self.queue.put(steps)

    def _work(self) -> None:
        stop = threading.Event()
        while (steps := self.queue.get()) is not None:
            if self.buzzer is None:      # no piezo wired: nothing to wait out
                continue
            for note, seconds in steps:
                try:
                    self.buzzer.play(Tone(note)) if note else self.buzzer.stop()
                except Exception as err:  # a piezo fault must never reach the game
                    log.warning("piezo: %s", err)
                stop.wait(seconds)
            self.buzzer.stop()

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join(timeout=2)
        if self.buzzer is not None:
            self.buzzer.close()
