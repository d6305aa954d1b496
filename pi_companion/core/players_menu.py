"""MENU > Players: how many players (the dial, within the game's range and the box's buttons),
then whose names: the names at the table (`P`-numbers for new seats), `P1..Pn`, tonight's names
(core/namelist.py) and the short list of colours. Two offers of the same names are one entry.
"""
from __future__ import annotations

from typing import Any

from .game import Game, players_problem
from .menu import Menu
from .names import name_problem
from .namelist import tonight_set

# The short list of names MENU > Players offers besides P1..P8 and the names at the table.
NAME_LIST = ("Red", "Blue", "Green", "Yellow", "Purple", "Orange", "Pink", "White")


def names_problem(names: Any, rules: Game | None = None) -> str | None:
    """Why `names` cannot be the players (None: they can): each a valid name (core/names.py),
    no two alike, and as many as `rules` (the game in play) takes."""
    if not isinstance(names, (list, tuple)) or not names:
        return "players must be a list of names"
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            return problem
    stripped = [n.strip() for n in names]
    if len(set(stripped)) != len(stripped):
        return "two players have the same name"
    return None if rules is None else players_problem(rules, len(names))


def name_sets(players: tuple[str, ...], n: int, tonight: tuple[str, ...] = ()
              ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What MENU > Players offers for `n` players, as (key, names), each offer once."""
    kept = list(players[:n])
    for i in range(len(kept), n):
        kept.append(next(f"P{j}" for j in range(i + 1, 99) if f"P{j}" not in kept))
    sets = (("keep", tuple(kept)), ("numbers", tuple(f"P{i + 1}" for i in range(n))),
            ("tonight", tonight_set(tonight, n, players)), ("list", NAME_LIST[:n]))
    seen: list[tuple[str, tuple[str, ...]]] = []
    for key, names in sets:
        if names and all(names != other for _, other in seen):
            seen.append((key, names))
    return tuple(seen)


def players_menu(key: str, rules: Any, players: tuple[str, ...], seats: int,
                 tonight: tuple[str, ...] = ()) -> Menu:
    """The list MENU > Players shows for `key`: `players` (the counts, the cursor on the count
    at the table) or `players:N` (the names for N players)."""
    if key == "players":
        counts = range(rules.min_players, min(rules.max_players, seats) + 1)
        return Menu(tuple((f"players:{n}", f"{n} players") for n in counts),
                    cursor=max(0, min(len(players), rules.max_players) - rules.min_players))
    n = int(key.split(":")[1])
    return Menu(tuple((f"names:{n}:{k}", ", ".join(names) if len(", ".join(names)) <= 20
                       else f"{names[0]}..{names[-1]}") for k, names in name_sets(players, n, tonight)))
