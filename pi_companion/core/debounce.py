"""Contact debouncing on edge timestamps: a chattering press is one press, stamped with its first edge.

Rule (replay contract): an edge less than `window` seconds after the button's previous edge is
bounce. It never delays a press: the first edge acts at once. When the edges stop, the button
follows its last level (`settle`, due `window` after the last edge).
"""
from __future__ import annotations

from dataclasses import dataclass

DEBOUNCE_S = 0.005


@dataclass
class Debouncer:
    """One button's raw and debounced (logical) state."""
    window: float = DEBOUNCE_S
    raw: bool = False
    logical: bool = False
    last_edge: float = float("-inf")
    settle_due: float | None = None

    def edge(self, t: float, pressed: bool) -> list[tuple[bool, float]]:
        """Feed one edge; return the logical transitions it causes as (pressed, t)."""
        bounce = t - self.last_edge < self.window
        if t >= self.last_edge:
            self.last_edge = t
            self.raw = pressed
        if bounce:
            self.settle_due = self.last_edge + self.window
            return []
        if pressed == self.logical:
            return []
        self.logical = pressed
        return [(pressed, t)]

    def settle(self) -> list[tuple[bool, float]]:
        """The edges stopped: follow the last level, stamped with the last edge."""
        self.settle_due = None
        if self.raw == self.logical:
            return []
        self.logical = self.raw
        return [(self.raw, self.last_edge)]
