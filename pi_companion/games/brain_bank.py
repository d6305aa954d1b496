"""All Wound Up's Brain tokens (rulebook Table 1): the bank, each player's holdings, gains, upgrades, spends.

25 tokens, 5 of each colour, ranked black 1, purple 2, green 3, yellow 4, red 5. A token is always
either in the bank or held by exactly one player: every move below keeps 5 per colour and 25 in all.
A gain or upgrade whose colour is gone takes the next rank up that the bank still has; with no
higher rank left there is nothing to take. Spending returns the token to the bank.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.frozen import replace

COLOURS = ("black", "purple", "green", "yellow", "red")
BLACK, PURPLE, GREEN, YELLOW, RED = range(5)
PER_COLOUR = 5
Counts = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class Bank:
    """The brain bank: the tokens it still holds and those each player holds."""
    supply: Counts                      # tokens still in the bank, by rank - 1
    held: tuple[Counts, ...]            # per player, by rank - 1
    brains: tuple[int, ...]             # Brains each player's character has touched (that paid out)


def new_bank(players: int) -> Bank:
    return Bank((PER_COLOUR,) * 5, ((0,) * 5,) * players, (0,) * players)


def available_from(supply: Counts, colour: int) -> int | None:
    """The colour a gain or upgrade to `colour` gets: it, or the next rank up the bank has."""
    for c in range(colour, len(COLOURS)):
        if supply[c] > 0:
            return c
    return None


def _moved(counts: Counts, colour: int, by: int) -> Counts:
    out = list(counts)
    out[colour] += by
    return tuple(out)  # type: ignore[return-value]


def _take(bank: Bank, player: int, colour: int) -> Bank:
    held = list(bank.held)
    held[player] = _moved(held[player], colour, 1)
    return replace(bank, supply=_moved(bank.supply, colour, -1), held=tuple(held))


def _give_back(bank: Bank, player: int, colour: int) -> Bank:
    held = list(bank.held)
    held[player] = _moved(held[player], colour, -1)
    return replace(bank, supply=_moved(bank.supply, colour, 1), held=tuple(held))


def _touched(bank: Bank, player: int) -> Bank:
    brains = list(bank.brains)
    brains[player] += 1
    return replace(bank, brains=tuple(brains))


def gain_colour(bank: Bank) -> int | None:
    """What a Brain's "gain a black" gives right now (None: the bank has nothing left)."""
    return available_from(bank.supply, BLACK)


def gain(bank: Bank, player: int) -> tuple[Bank, int] | None:
    """A Brain touched: the player gains a black, or the next rank up; (bank, colour gained)."""
    colour = gain_colour(bank)
    if colour is None:
        return None
    return _touched(_take(bank, player, colour), player), colour


def upgrade_colour(bank: Bank, player: int, colour: int) -> int | None:
    """What upgrading one held `colour` token would give (None: not held, or nothing higher left)."""
    if bank.held[player][colour] == 0 or colour + 1 >= len(COLOURS):
        return None
    return available_from(bank.supply, colour + 1)


def can_upgrade(bank: Bank, player: int) -> bool:
    """A later Brain may upgrade instead of gaining; the first Brain only gains."""
    return bank.brains[player] > 0


def upgrade(bank: Bank, player: int, colour: int) -> tuple[Bank, int] | None:
    """A later Brain: one held token goes back and the next available rank up comes in."""
    if not can_upgrade(bank, player):
        return None
    better = upgrade_colour(bank, player, colour)
    if better is None:
        return None
    return _touched(_take(_give_back(bank, player, colour), player, better), player), better


def spend(bank: Bank, player: int, colour: int) -> Bank | None:
    """A token used: it returns to the bank (None if the player holds none of that colour)."""
    if bank.held[player][colour] == 0:
        return None
    return _give_back(bank, player, colour)


def totals(bank: Bank) -> Counts:
    """Bank plus every player's holding, per colour (always 5 each)."""
    out = list(bank.supply)
    for held in bank.held:
        for c, k in enumerate(held):
            out[c] += k
    return tuple(out)  # type: ignore[return-value]


def by_name(counts: Counts) -> dict[str, int]:
    return dict(zip(COLOURS, counts))
