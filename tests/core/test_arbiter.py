"""core/arbiter.py on its own: the earliest press *timestamp* wins whatever order the presses
arrived in; an exact tie is drawn from the seeded random source (the same draw every time)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_companion.core import rand
from pi_companion.core.arbiter import Window, complete, decide
from pi_companion.core.debounce import Debouncer

times = st.sampled_from([1.0, 1.0005, 1.001, 1.0015, 1.002])      # few values: ties are common
presses = st.dictionaries(st.integers(0, 7), times, min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)      # no timing: this machine is shared and loaded
@given(presses, st.integers(0, 2**64 - 1), st.randoms())
def test_the_earliest_timestamp_wins_whatever_the_arrival_order(got, seed, shuffle):
    rng = rand.seed_state(seed, 1)
    order = list(got.items())
    shuffle.shuffle(order)
    buzz, after = decide(dict(order), rng)
    first = min(got.values())
    assert buzz.winner_t == first and got[buzz.winner] == first
    assert sorted(p for p, _ in buzz.others) == sorted(p for p in got if p != buzz.winner)
    tied = sorted(p for p, t in got.items() if t == first)
    if len(tied) == 1:
        assert after == rng                                  # no draw without a tie
    else:
        assert (buzz.winner, after) == rand.choice(rng, tied)  # the seeded draw, nothing else


def test_an_exact_tie_goes_each_way_by_the_random_source():
    winners = {decide({0: 1.0, 1: 1.0, 2: 1.5}, rand.seed_state(seed, 1))[0].winner for seed in range(64)}
    assert winners == {0, 1}


def test_a_window_waiting_for_edges_is_complete_once_each_has_joined_or_settled():
    window = Window(2.0, frozenset({0, 1, 2}), {0: 1.0})
    buttons = {"P2": Debouncer()}
    window.waiting = {"P2": False}
    assert not complete(window, buttons)
    window.waiting["P2"] = True
    assert complete(window, buttons)
    buttons["P2"].settle_due = 2.1                           # heard, but still bouncing
    assert not complete(window, buttons)
