"""The fair first press: the settle window and who won it.

A settle window opens at the first eligible press and collects the presses of the other eligible
players until it is due; then the earliest press *timestamp* wins (never the order the presses
arrived in), and an exact tie goes to the seeded random source, so replay, resume and undo
decide it the same way. When the window is due the live box reads the player buttons' levels: a
button that reads pressed while its press edge has not arrived has an edge in flight, and the
window waits for it (`PENDING_GRACE_S` at most; `Engine.look` and `Engine._in_flight` find those
buttons). The engine (core/engine.py) keeps the window and feeds it; this module holds the
window's data and the rules, with no clock and no state of its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from . import rand
from .debounce import Debouncer
from .events import BuzzOrder

PENDING_GRACE_S = 0.020      # how long a settle window waits for a press edge still in flight


@dataclass
class Window:
    """An open settle window: the presses that arrived while it was open; once the box has
    looked at the pins (`looked`), the buttons whose press edge it waits for, each with whether
    an edge of it has arrived since."""
    due: float
    eligible: frozenset[int]
    presses: dict[int, float] = field(default_factory=dict)
    looked: bool = False
    waiting: dict[str, bool] = field(default_factory=dict)


def decide(presses: dict[int, float], rng: int) -> tuple[BuzzOrder, int]:
    """The buzz a closed window's presses make - the earliest timestamp first; an exact tie drawn
    from the random source `rng` - and the random source after it (unchanged unless drawn)."""
    if len(presses) == 1:                 # the usual buzz: one press, nothing to order
        (winner, first), = presses.items()
        return BuzzOrder(winner, first, ()), rng
    first = min(presses.values())
    tied = sorted(p for p, t in presses.items() if t == first)
    winner, rng = rand.choice(rng, tied) if len(tied) > 1 else (tied[0], rng)
    return BuzzOrder(winner, first, tuple((p, t) for p, t in presses.items() if p != winner)), rng


def complete(window: Window, buttons: Mapping[str, Debouncer]) -> bool:
    """Every button the window waits for has joined it, or has been heard from and its contact
    has settled (no contact settle due)."""
    return all(int(b[1:]) - 1 in window.presses or (heard and buttons[b].settle_due is None)
               for b, heard in window.waiting.items())
