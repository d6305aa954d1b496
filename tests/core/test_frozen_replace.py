"""core.frozen.replace: the fast copy is exactly what dataclasses.replace makes, and falls back
to it (same errors) for anything that is not a plain dataclass."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from pi_companion.core.frozen import replace
from pi_companion.games import registry


@dataclass(frozen=True)
class Plain:
    a: int
    b: tuple[int, ...] = ()


@dataclass(frozen=True)
class Derived:
    a: int
    double: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", 2 * self.a)


def test_a_copy_with_changes_equal_to_the_standard_one_and_independent():
    old = Plain(1, (2,))
    new = replace(old, a=5)
    assert new == dataclasses.replace(old, a=5) == Plain(5, (2,))
    assert old == Plain(1, (2,)) and type(new) is Plain and new is not old
    assert hash(new) == hash(Plain(5, (2,)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        new.a = 3  # type: ignore[misc]


def test_unknown_fields_fail_as_dataclasses_replace_fails():
    with pytest.raises(TypeError):
        replace(Plain(1), c=2)


def test_a_class_with_post_init_still_runs_it():
    assert replace(Derived(1), a=4).double == 8


@pytest.mark.parametrize("name", registry.available())
def test_every_games_state_copies_like_the_standard_replace(name):
    rules = registry.get(name)
    players = tuple(f"P{i}" for i in range(1, rules.min_players + 1))
    state = rules.new_game(players, {}, 3)
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        assert replace(state, **{f.name: value}) == dataclasses.replace(state, **{f.name: value})
    assert replace(state) == state
