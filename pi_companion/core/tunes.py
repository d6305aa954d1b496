"""Each player's buzz tune: a few notes, so players who cannot tell button colours apart still
hear who buzzed. Pure text in, note steps out; the piezo (hw/outputs.py) plays them."""
from __future__ import annotations

import re

NOTE_S = 0.07            # each note of a buzz tune
GAP_S = 0.02             # a short rest between notes, so repeated notes are heard as two
MAX_NOTES = 4
# Eight tunes that differ in shape (up, down, leap, repeat), not only in pitch.
DEFAULT_TUNES = ("C5 E5", "E5 C5", "G4 G5", "A5 A4", "C5 C5 G5", "F4 A4 C5", "D5 B4 G4", "A4 E5 A4")
LOWEST, HIGHEST = 57, 81        # A3 .. A5: the piezo driver's default range (A4, one octave each way)
_NOTE = re.compile(r"([A-G])([#b]?)([0-9])")
_STEPS = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def midi(note: str) -> int:
    match = _NOTE.fullmatch(note)
    if match is None:
        raise ValueError(f"{note!r} is not a note (like C5, F#4, Bb4)")
    letter, accidental, octave = match.groups()
    return 12 * (int(octave) + 1) + _STEPS[letter] + {"#": 1, "b": -1, "": 0}[accidental]


def parse_tune(text: str) -> tuple[tuple[str | None, float], ...]:
    """"C5 E5" -> ((C5, 0.07), (None, 0.02), (E5, 0.07)); ValueError names what is wrong."""
    notes = text.split()
    if not 1 <= len(notes) <= MAX_NOTES:
        raise ValueError(f"a tune is 1 to {MAX_NOTES} notes separated by spaces, got {text!r}")
    steps: list[tuple[str | None, float]] = []
    for note in notes:
        if not LOWEST <= midi(note) <= HIGHEST:
            raise ValueError(f"{note} is outside the piezo's range A3 to A5")
        if steps:
            steps.append((None, GAP_S))
        steps.append((note, NOTE_S))
    return tuple(steps)


def buzz_sound(player: int) -> str:
    """The sound name of player `player`'s buzz (0-based): buzz:P1 .. buzz:P8."""
    return f"buzz:P{player + 1}"
