"""A settle window due while a press edge is still in flight waits for it (issue 15.1).

The rule, pure (time as data): when the window is due the box reads the player buttons; one
that reads pressed although its press edge has not reached the engine keeps the window open
for that edge, `PENDING_GRACE_S` at most (`Engine.look`, a `Pending` input). Then through the
box on mock pins whose callbacks are held back while the line level has already changed (as a
late GPIO backend's are), with the real game log: the look is logged, and resume and a fold
of the log decide exactly as the box did - also in random sessions of late edges.
"""
from __future__ import annotations

import shutil
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.common import Clock
from helpers.folds import fold, state, state_directory

from pi_companion.box import Wake
from pi_companion.core.engine import PENDING_GRACE_S, Engine
from pi_companion.core.events import Edge, HostCommand, Pending, Resume, Sound
from pi_companion.core.records import from_record, to_record
from pi_companion.games import registry
from pi_companion.hw.pinmap import load_pinmap
from helpers.boxes import LatePin, late_box, late_first_press_until_the_window_is_due

PINS = load_pinmap()
PLAYERS = ("Ada", "Ben", "Cy", "Di")


def seekers(**options: Any) -> Engine:
    """Grab Bag where every player may buzz, the default 2 ms settle window."""
    return Engine(registry.get("grab-bag"), PLAYERS, {"variant": "all-seekers", **options}, 1)


# ---- the rule, pure ----

def test_a_due_window_waits_for_a_press_in_flight_and_the_earlier_timestamp_wins():
    e = seekers()
    e.feed(Edge(5.0, "P2", True))                    # the later press arrives first
    assert e.window is not None and e.next_deadline() == pytest.approx(5.002)
    look = e.look({"P1", "P2"}, 5.0021)              # P1 reads down: its edge is in flight
    assert look == Pending(5.0021, ("P1",), pytest.approx(5.0021 + PENDING_GRACE_S))
    assert e.feed(look) == []
    assert e.advance(5.015) == [] and e.settling     # still waiting, past the 2 ms
    effects = e.feed(Edge(4.9995, "P1", True))       # it lands: the window closes at once
    assert not e.settling and Sound("buzz:P1") in effects
    buzz = e.table.last_buzz
    assert buzz is not None and buzz.winner == 0 and buzz.others == ((1, 5.0),)


def test_without_the_look_the_window_closes_when_due_on_what_it_holds():
    # What a log from before the look (or a replay scenario) folds to: unchanged.
    e = seekers()
    e.feed(Edge(5.0, "P2", True))
    e.advance(5.002)
    e.feed(Edge(4.9995, "P1", True))
    assert e.table.last_buzz is not None and e.table.last_buzz.winner == 1


def test_the_wait_is_bounded_and_a_button_that_never_sent_its_edge_is_not_waited_for_again():
    e = seekers()
    e.feed(Edge(5.0, "P2", True))
    look = e.look({"P1"}, 5.002)
    assert look is not None
    e.feed(look)
    e.advance(look.until - 1e-6)
    assert e.settling
    e.advance(look.until)                            # no edge came: decided without it
    assert not e.settling and e.table.last_buzz.winner == 1
    assert e.unheard == {"P1"}
    e.new_game()
    e.feed(Edge(6.0, "P3", True))
    assert e.look({"P1"}, 6.002) is None             # a pin that lies does not hold every window
    e.advance(6.002)
    e.new_game()
    e.feed(Edge(7.0, "P1", True))                    # its edges come through again:
    e.feed(Edge(7.1, "P1", False))
    e.new_game()
    e.feed(Edge(8.0, "P4", True))
    assert e.look({"P1"}, 8.002) is not None         # waited for again


def test_presses_already_delivered_held_buttons_and_players_who_cannot_buzz_are_not_in_flight():
    e = seekers()
    e.feed(Resume(0.0, ("P3",)))                      # held down at start (stuck, or leaned on)
    e.feed(Edge(5.0, "P2", True))
    e.feed(Edge(5.0005, "P4", True))
    # P2 opened the window, P4 joined it, P3's press was delivered long ago (it is held):
    assert e.look({"P2", "P3", "P4"}, 5.002) is None
    e.advance(5.002)
    assert e.table.last_buzz.winner == 1
    # Standard Grab Bag: the Grab Master cannot buzz, so their button is never waited for.
    g = Engine(registry.get("grab-bag"), PLAYERS, {}, 1)
    master = g.game.grab_master
    buzzer = next(p for p in range(4) if p != master)
    g.feed(Edge(5.0, f"P{buzzer + 1}", True))
    assert g.settling and g.look({f"P{master + 1}"}, 5.002) is None
    # A game without buzzing (Hold Everything: hands busy, a press is a move) opens no window.
    h = Engine(registry.get("hold-everything"), PLAYERS, {}, 1)
    h.feed(Edge(5.0, "P1", True))
    assert not h.settling and h.look({"P1", "P2"}, 5.002) is None


def test_a_window_is_looked_at_once():
    e = seekers()
    e.feed(Edge(5.0, "P2", True))
    look = e.look({"P1"}, 5.002)
    e.feed(look)
    assert e.look({"P1", "P3"}, 5.003) is None
    e.feed(Pending(5.003, ("P3",), 5.5))             # a second one changes nothing
    assert e.next_deadline() == look.until


def test_a_bouncing_contact_in_flight_is_waited_for_until_it_settles():
    e = seekers()
    e.feed(Edge(4.0, "P1", True))
    e.advance(4.002)
    e.new_game()
    e.feed(Edge(4.9985, "P1", False))                # released 1.5 ms before P2's press
    e.feed(Edge(5.0, "P2", True))
    look = e.look({"P1"}, 5.002)                     # down again: an edge in flight
    assert look is not None
    e.feed(look)
    e.feed(Edge(5.001, "P1", True))                  # within the debounce time: bounce so far
    e.advance(5.0059)
    assert e.settling                                # heard, but its contact has not settled
    e.advance(5.006)                                 # it settles (5 ms after its last edge):
    assert not e.settling                            # the press joined, the window closed
    assert e.table.last_buzz.winner == 1 and e.table.last_buzz.others == ((0, 5.001),)


def test_pending_records_round_trip_and_bad_ones_are_refused():
    event = Pending(5.002, ("P1", "P3"), 5.022)
    rec = to_record(event)
    assert rec == {"t": 5.002, "pending": ["P1", "P3"], "until": 5.022}
    assert from_record(rec) == event
    for bad in ({"t": 5.0, "pending": "P1", "until": 5.02}, {"t": 5.0, "pending": ["P1"], "until": 4.9},
                {"t": 5.0, "pending": ["P1"], "until": 7.0}, {"t": 5.0, "pending": ["P1"]}):
        with pytest.raises((ValueError, KeyError)):
            from_record(bad)


# ---- through the box, with the game log ----

def test_a_late_press_is_decided_live_by_timestamp_and_resume_decides_the_same(tmp_path):
    Clock.now, LatePin.held = 5.0, []
    box = late_box(tmp_path)
    try:
        late_first_press_until_the_window_is_due(box)
        assert box.engine.settling                    # P1 reads down: waiting for its edge
        Clock.now = 5.0035
        LatePin.deliver()                             # 3 ms late
        box.pump()
        live = box.engine.report()["last_buzz"]
        assert live["winner"] == "Ada" and live["order"][1] == {"player": "Ben", "after_ms": 0.5}
        assert box.leds.lit == {0}
        records = box.store.load()[1]
        assert {"t": 0.0026, "pending": ["P1"], "until": 0.0226} in records   # game time
        assert state(fold(box.store)) == state(box.engine)
    finally:
        box.close()
        box.factory.reset()
    Clock.now = 9.0
    again = late_box(tmp_path)                        # the power came back: resume
    try:
        assert again.engine.report()["last_buzz"] == live
    finally:
        again.close()
        again.factory.reset()


def race_beside_a_stuck_p1(box, start, on_due=None):
    """P2 buzzes at `start` while P1 reads down with no edge (lost); the window is looked at
    when due, then its 20 ms wait runs out. Whether it waited at the due time."""
    Clock.now = start
    box.factory.pin(PINS["P2"]).drive_low()
    LatePin.deliver()
    box.pump()
    Clock.now = start + 0.0025                        # due: P1 reads down, no edge has come
    box.queue.put(Wake())
    box.pump()
    waited = box.engine.settling
    if on_due is not None:
        on_due(waited)
    Clock.now = start + 0.0225                        # the wait is over: decided without it
    box.queue.put(Wake())
    box.pump()
    assert not box.engine.settling and box.engine.table.last_buzz.winner == 1
    box.factory.pin(PINS["P2"]).drive_high()
    LatePin.deliver()
    box.pump()
    return waited


def test_a_pin_that_reads_pressed_but_never_sends_its_edge_holds_one_window_20_ms_only(tmp_path):
    Clock.now, LatePin.held = 5.0, []
    box = late_box(tmp_path)
    try:
        box.factory.pin(PINS["P1"]).drive_low()       # its callback never comes (lost edge)
        LatePin.held = []
        for start, waits in ((5.0, True), (6.0, False)):
            def at_due(waited, start=start, waits=waits):
                assert waited == waits
                if waits:                             # until 20 ms after the look (game time)
                    assert box.engine.next_deadline() == pytest.approx(start - 5.0 + 0.0225)
            race_beside_a_stuck_p1(box, start, at_due)
            box.engine.new_game()
        assert sum("pending" in r for r in box.store.load()[1]) == 1
    finally:
        box.close()
        box.factory.reset()


def test_a_pin_stuck_down_without_its_edge_holds_no_window_of_the_next_game(tmp_path):
    """A new game is a new engine: it knew nothing of the stuck button, read it as an edge in
    flight and held its first window 20 ms again, in every game. Like a button down at start, a
    button down when a new game starts is held (a `resume` record) and ignored until released."""
    Clock.now, LatePin.held = 5.0, []
    box = late_box(tmp_path)
    try:
        box.factory.pin(PINS["P1"]).drive_low()       # its callback never comes (lost edge)
        LatePin.held = []
        for start in (5.0, 6.0):
            waited = race_beside_a_stuck_p1(box, start)
            assert waited == (start == 5.0)           # waited in the first game only
            box.put_host_command(HostCommand(0.0, "new"))   # the host's phone: a new game
            box.pump()
        header, records = box.store.load()
        assert not any("pending" in r for r in records)
        assert records[0] == {"t": 0.0, "resume": 1, "held": ["P1"]}
        assert box.engine.held() == ["P1"] and state(fold(box.store)) == state(box.engine)
    finally:
        box.close()
        box.factory.reset()


BUZZERS = ("P1", "P2", "P3", "P4")
step = st.one_of(
    st.tuples(st.just("edge"), st.sampled_from(BUZZERS), st.floats(0, 0.008)),
    st.tuples(st.just("deliver"), st.just(""), st.integers(0, 3)),
    st.tuples(st.just("wake"), st.just(""), st.floats(0, 0.03)),
    st.tuples(st.just("race"), st.permutations(BUZZERS), st.floats(0, 0.002)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=40))
def test_live_and_folded_state_agree_after_every_record_with_edges_in_flight(tmp_path_factory, steps):
    state_dir = state_directory(tmp_path_factory)
    Clock.now, LatePin.held = 50.0, []
    box = late_box(state_dir)
    records = 0
    try:
        for kind, button, x in steps:
            if kind == "edge":                        # a contact changes; its callback waits
                Clock.now += x
                pin = box.factory.pin(PINS[button])
                pin.drive_high() if pin.state == 0 else pin.drive_low()
            elif kind == "deliver":                   # the backend catches up, some or all
                LatePin.deliver(min(int(x), len(LatePin.held)) or None)
            elif kind == "race":                      # two press x s apart, the later one's
                first, second = (box.factory.pin(PINS[b]) for b in button[:2])   # callback first
                for pin in (first, second):
                    Clock.now += x
                    pin.drive_high() if pin.state == 0 else pin.drive_low()
                LatePin.held.insert(0, LatePin.held.pop())
                LatePin.deliver(len(LatePin.held) - 1)
            else:                                     # the loop wakes (a window due, or idle)
                Clock.now += x
                box.queue.put(Wake())
            box.pump()
            now = len(box.store.load()[1])
            if now != records:
                records = now
                assert state(fold(box.store)) == state(box.engine), f"after record {now}"
    finally:
        box.close()
        box.factory.reset()
        LatePin.held = []
        shutil.rmtree(state_dir, ignore_errors=True)
