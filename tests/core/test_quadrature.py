"""The shared quadrature decoder: table, walks of the turntable, rocking, missed edges."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_companion.core.quadrature import Quadrature

# Clockwise seen from above, A leads B: the levels at positions 0, 1, 2, 3 of a turn.
CYCLE = [(0, 0), (1, 0), (1, 1), (0, 1)]


def levels(position: int) -> tuple[int, int]:
    return CYCLE[position % 4]


def walk(q: Quadrature, start: int, moves: list[int]) -> int:
    """Move the magnet by each of `moves` (+1 / -1 quarter steps); return the end position."""
    position = start
    for move in moves:
        position += move
        q.update(*levels(position))
    return position


# -- the full table ---------------------------------------------------------------------------

def expected(old: tuple[int, int], new: tuple[int, int]) -> str:
    if old == new:
        return "same"
    diff = (CYCLE.index(new) - CYCLE.index(old)) % 4
    return {1: "forward", 3: "backward", 2: "invalid"}[diff]


@pytest.mark.parametrize("old", CYCLE)
@pytest.mark.parametrize("new", CYCLE)
def test_every_transition_of_the_table(old: tuple[int, int], new: tuple[int, int]) -> None:
    q = Quadrature(*old)
    step = q.update(*new)
    kind = expected(old, new)
    assert step == {"same": 0, "forward": 1, "backward": -1, "invalid": 0}[kind]
    assert (q.net, q.forward, q.backward, q.invalid) == {
        "same": (0, 0, 0, 0),
        "forward": (1, 1, 0, 0),
        "backward": (-1, 0, 1, 0),
        "invalid": (0, 0, 0, 1),
    }[kind]
    assert (q.a, q.b) == new


def test_one_clockwise_turn_is_plus_four() -> None:
    q = Quadrature()
    for a, b in [(1, 0), (1, 1), (0, 1), (0, 0)]:
        assert q.update(a, b) == 1
    assert (q.net, q.forward, q.backward, q.invalid) == (4, 4, 0, 0)


def test_one_counterclockwise_turn_is_minus_four() -> None:
    q = Quadrature()
    for a, b in [(0, 1), (1, 1), (1, 0), (0, 0)]:
        assert q.update(a, b) == -1
    assert (q.net, q.forward, q.backward) == (-4, 0, 4)


def test_set_level_drives_one_sensor() -> None:
    q = Quadrature()
    assert q.set_level("A", 1) == 1
    assert q.set_level("B", 1) == 1
    assert q.set_level("B", 1) == 0          # same level again: nothing
    assert q.set_level("A", 0) == 1
    assert q.set_level("A", 1) == -1
    assert q.net == 2
    with pytest.raises(ValueError):
        q.set_level("C", 1)


def test_truthy_levels_are_normalised() -> None:
    q = Quadrature(a=True, b=0)
    assert (q.a, q.b) == (1, 0)
    assert q.update(5, 7) == 1 and (q.a, q.b) == (1, 1)


def test_missed_edge_counts_invalid_not_steps() -> None:
    q = Quadrature()
    assert q.update(1, 1) == 0               # 00 -> 11: a whole step skipped
    assert (q.net, q.forward, q.backward, q.invalid) == (0, 0, 0, 1)
    assert q.update(0, 1) == 1               # the state moved on: 11 -> 01 is forward
    assert q.invalid == 1 and q.net == 1


def test_reset_counts_keeps_levels() -> None:
    q = Quadrature()
    walk(q, 0, [1, 1, 1, 1, 1, -1])
    q.update(0, 0)
    q.reset_counts()
    assert (q.net, q.forward, q.backward, q.invalid) == (0, 0, 0, 0)
    assert (q.a, q.b) == (0, 0)


# -- properties ---------------------------------------------------------------------------------

rocks = st.lists(st.sampled_from([1, -1]), min_size=0, max_size=6).map(
    lambda first: [m for d in first for m in (d, -d)])     # there and back, at one edge
segments = st.one_of(
    st.lists(st.just(1), min_size=1, max_size=12),          # forward run
    st.lists(st.just(-1), min_size=1, max_size=12),         # backward run
    rocks,
)


@settings(max_examples=300, deadline=None)
@given(start=st.integers(0, 3), parts=st.lists(segments, max_size=30))
def test_random_walk_net_steps_equal_displacement(start: int, parts: list[list[int]]) -> None:
    moves = [m for part in parts for m in part]
    q = Quadrature(*levels(start))
    end = walk(q, start, moves)
    assert q.net == end - start == sum(moves)
    assert q.forward == moves.count(1) and q.backward == moves.count(-1)
    assert q.invalid == 0


@settings(max_examples=200, deadline=None)
@given(start=st.integers(0, 3), wiggles=st.lists(st.sampled_from([1, -1]), max_size=40))
def test_rocking_at_one_edge_never_counts(start: int, wiggles: list[int]) -> None:
    q = Quadrature(*levels(start))
    for d in wiggles:
        walk(q, start, [d, -d])              # over the edge and back
        assert q.net == 0
    assert q.forward == q.backward


@settings(max_examples=200, deadline=None)
@given(start=st.integers(0, 3), moves=st.lists(st.sampled_from([1, -1]), max_size=60),
       repeats=st.lists(st.integers(0, 60), max_size=10))
def test_repeated_levels_change_nothing(start: int, moves: list[int], repeats: list[int]) -> None:
    plain, echoed = Quadrature(*levels(start)), Quadrature(*levels(start))
    walk(plain, start, moves)
    position = start
    for i, move in enumerate(moves):
        position += move
        for _ in range(1 + repeats.count(i)):
            echoed.update(*levels(position))
    assert vars(plain) == vars(echoed)


@settings(max_examples=200, deadline=None)
@given(start=st.integers(0, 3), moves=st.lists(st.sampled_from([1, -1]), min_size=2,
                                                max_size=60), data=st.data())
def test_a_missed_edge_is_an_error_not_steps(start: int, moves: list[int],
                                             data: st.DataObject) -> None:
    """Skip one reading in the middle of a two-step run: one invalid, two steps lost."""
    i = data.draw(st.integers(0, len(moves) - 1))
    moves[i:i] = [1, 1]
    q = Quadrature(*levels(start))
    position = start
    for j, move in enumerate(moves):
        position += move
        if j != i:                           # the reading at position after move i is lost
            q.update(*levels(position))
    assert q.invalid == 1
    assert q.net == sum(moves) - 2
