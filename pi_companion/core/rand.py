"""A pure, seedable random source whose state is an integer: games keep it in their state."""
from __future__ import annotations

from typing import Sequence, TypeVar

T = TypeVar("T")
_MASK = (1 << 64) - 1


def seed_state(seed: int, stream: int = 0) -> int:
    """A state for `seed`; different `stream`s give independent sequences."""
    return (seed * 0x9E3779B97F4A7C15 + stream * 0xD1B54A32D192ED03) & _MASK


def next_u64(state: int) -> tuple[int, int]:
    """splitmix64: (value, new_state)."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31), state


def below(state: int, n: int) -> tuple[int, int]:
    """A uniform integer in [0, n) without modulo bias: (value, new_state)."""
    if n <= 0:
        raise ValueError("n must be positive")
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        value, state = next_u64(state)
        if value < limit:
            return value % n, state


def choice(state: int, items: Sequence[T]) -> tuple[T, int]:
    index, state = below(state, len(items))
    return items[index], state


def shuffled(state: int, items: Sequence[T]) -> tuple[tuple[T, ...], int]:
    """Fisher-Yates: (a shuffled copy, new_state)."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j, state = below(state, i + 1)
        out[i], out[j] = out[j], out[i]
    return tuple(out), state
