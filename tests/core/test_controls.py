"""core/controls.py on its own: contact edges become presses, long presses and holds; encoder
levels become detents; hall levels and the puck's counters become steps. A recording receiver
stands where the table is (what a press means is not the controls' business)."""
from __future__ import annotations

from pi_companion.core.controls import HOLD_S, LONG_S, Controls
from pi_companion.core.events import HallCounts, PuckStatus


class Recorder:
    """The receiver: notes every action; `hold_players` says whether a player's press is timed."""

    def __init__(self, hold_players: bool = True) -> None:
        self.seen: list[tuple[str, str, float | None]] = []
        self.hold_players = hold_players

    def _down(self, button: str, t: float) -> bool:
        self.seen.append(("down", button, t))
        return self.hold_players

    def _short(self, button: str, t: float) -> None:
        self.seen.append(("short", button, t))

    def _held(self, button: str, t: float) -> None:
        self.seen.append(("held", button, t))

    def _heard(self, button: str) -> None:
        self.seen.append(("heard", button, None))


def run_timers(controls: Controls, upto: float, actions: Recorder) -> None:
    """Fire every contact settle and long press due by `upto`, in due order (the engine's job)."""
    while True:
        due = sorted([(d.settle_due, 0, b) for b, d in controls.buttons.items() if d.settle_due is not None]
                     + [(at, 1, b) for b, at in controls.holds.items()])
        if not due or due[0][0] > upto:
            return
        at, kind, name = due[0]
        controls.settle(name, actions) if kind == 0 else controls.held(name, at, actions)


def test_a_chattering_press_is_one_press_stamped_with_its_first_edge():
    c, r = Controls(0.005), Recorder()
    for t, level in ((1.000, True), (1.001, False), (1.002, True), (1.003, False), (1.0035, True)):
        c.edge("P2", t, level, r)
    run_timers(c, 1.1, r)
    assert [s for s in r.seen if s[0] == "down"] == [("down", "P2", 1.000)]
    assert c.down() == ["P2"] and c.holds == {"P2": 1.000 + HOLD_S}


def test_a_short_yes_is_a_short_press_and_a_long_one_is_held_and_its_release_does_nothing():
    c, r = Controls(), Recorder()
    c.edge("YES", 1.0, True, r)
    c.edge("YES", 1.3, False, r)
    assert ("short", "YES", 1.3) in r.seen
    r.seen.clear()
    c.edge("YES", 2.0, True, r)
    run_timers(c, 2.0 + LONG_S["YES"], r)
    c.edge("YES", 3.5, False, r)
    assert [s for s in r.seen if s[0] != "heard"] == [("held", "YES", 2.0 + LONG_S["YES"])]


def test_a_player_press_the_table_does_not_time_gets_no_hold():
    c, r = Controls(), Recorder(hold_players=False)
    c.edge("P1", 1.0, True, r)
    run_timers(c, 10.0, r)
    assert c.holds == {} and not any(s[0] == "held" for s in r.seen)


def test_four_quadrature_steps_are_one_detent_and_a_cut_drops_half_a_detent():
    c = Controls()
    clockwise = [("A", 1), ("B", 1), ("A", 0), ("B", 0)]
    assert [c.encoder_level(s, v) for s, v in clockwise] == [0, 0, 0, 1]
    assert [c.encoder_level(s, v) for s, v in clockwise[:2]] == [0, 0]      # half a detent
    c.cut([], None, None)                                                    # ... then a power cut
    assert [c.encoder_level(s, v) for s, v in clockwise[2:]] == [0, 0]      # half after: none


def test_hall_levels_step_once_per_change_and_not_on_a_repeated_level():
    c = Controls()
    assert c.hall_level("A", 0) is None                   # the level it has: no edge
    first = c.hall_level("A", 1)
    assert first is not None and abs(first[0]) == 1 and first[1] is False
    assert c.hall_level("A", 1) is None


def test_the_pucks_counters_step_by_their_difference_within_one_boot():
    c = Controls()
    assert c.hall_counts(HallCounts(1.0, "b1", 10, 0)) is None          # first report of a boot
    assert c.hall_counts(HallCounts(1.1, "b1", 14, 0)) == (4, False)
    assert c.hall_counts(HallCounts(1.2, "b1", 14, 0)) is None          # nothing new
    assert c.hall_counts(HallCounts(1.3, "b2", 3, 0)) is None           # a new boot: from here
    assert c.puck_status(PuckStatus(1.4, False)) == (True, True)        # unplugged: void, changed
    assert c.puck is None and c.puck_connected is False
