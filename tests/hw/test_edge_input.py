"""A pin edge reaches the box's queue as one `RawEdge`: the input's name, the pin's ticks and
whether it now reads active, on gpiozero's MockFactory pins (buttons pulled up: low is pressed;
the hall latches floating with external pull-ups: high is active)."""
from __future__ import annotations

import queue

from pi_companion.core.frozen import realize_all
from pi_companion.hw.inputs import Inbox, RawEdge, build_inputs
from pi_companion.hw.pinmap import load_pinmap

PINS = load_pinmap()


def drained(sink: queue.SimpleQueue) -> list[RawEdge]:
    items = []
    while not sink.empty():
        items.append(sink.get_nowait())
    return items


def test_a_button_edge_is_queued_with_its_ticks_and_whether_it_is_pressed(mock_factory):
    realize_all()
    sink = Inbox()
    devices = build_inputs(PINS, 2, sink, mock_factory)
    drained(sink)
    pin = devices["P2"].pin
    pin.drive_low()
    pressed_at = pin._last_change
    pin.drive_high()
    released_at = pin._last_change
    assert drained(sink) == [RawEdge("P2", pressed_at, True), RawEdge("P2", released_at, False)]
    assert pressed_at < released_at
    pin.drive_low()
    assert devices["P2"].is_active and not devices["P1"].is_active    # read from the pin


def test_a_hall_latch_is_active_high_and_its_edges_are_quiet(mock_factory):
    realize_all()
    sink = Inbox()
    devices = build_inputs(PINS, 2, sink, mock_factory)
    drained(sink)
    pin = devices["HALL_A"].pin
    pin.drive_high()
    pin.drive_low()
    assert [(e.name, e.active) for e in drained(sink)] == [("HALL_A", True), ("HALL_A", False)]
    sink.snooze()                      # the loop waits for its frame: the hall's edge waits too
    pin.drive_high()
    assert drained(sink) == []
    assert sink.wake() == 1
    assert [(e.name, e.active) for e in drained(sink)] == [("HALL_A", True)]
