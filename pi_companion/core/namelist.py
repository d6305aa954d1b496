"""Tonight's names: the names the table has used, newest first, for MENU > Players to offer.

A table's names go in in seat order (a rename puts the whole table in front again), so the
names of the last table before this one come next to each other. The list only grows by names that are valid player names (core/names.py), holds each name
once (names that differ only in case are one name; the newest spelling is kept), keeps the
order a set of names was given in (seat 1 first), and keeps at most `KEPT` names: the oldest
fall off the end. Pure: the box keeps the list on its disk, the game log's header carries it.
"""
from __future__ import annotations

from typing import Any, Iterable

from .names import name_problem

KEPT = 24          # names: three tables of eight, more than an evening's guests


def grown(known: Iterable[Any], names: Iterable[Any], kept: int = KEPT) -> tuple[str, ...]:
    """`known` with `names` put in front in their own order; invalid entries (of either) are
    dropped, duplicates (ignoring case) kept once at their newest place, at most `kept` names."""
    out: list[str] = []
    seen: set[str] = set()
    for name in (*names, *known):
        if name_problem(name) is not None:
            continue
        name = name.strip()
        if name.casefold() in seen:
            continue
        seen.add(name.casefold())
        out.append(name)
    return tuple(out[:kept])


def tonight_set(known: tuple[str, ...], n: int, at_table: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The `n` names MENU > Players offers from tonight's list: its first `n` that are not at
    the table (those are offered already), then `P`-numbers not taken for the seats the list
    does not fill; empty if the list has no such name."""
    sitting = {x.casefold() for x in at_table}
    names = [x for x in known if x.casefold() not in sitting][:n]
    if not names:
        return ()
    taken = {x.casefold() for x in names}
    for i in range(len(names), n):
        names.append(next(f"P{j}" for j in range(i + 1, 99 + n) if f"p{j}" not in taken))
        taken.add(names[-1].casefold())
    return tuple(names)
