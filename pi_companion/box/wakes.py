"""The wake kinds: what the loop's queue carries besides a pin edge (`RawEdge`).

Every item on the queue makes the loop look again; a wake is how anything outside the pins
gets the loop's attention, and the loop alone acts on it. A wake holds no state the loop
keeps: `TIMER` and `FRAME_WAKE` are shared instances, and the puck's `PuckWake` carries
nothing (its events wait in the puck's mailbox).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.events import InputEvent


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
