"""The evening's standings: each player's wins and places across the games of one evening.

A game's result is what its game over left: the players (in seat order) with their scores,
the winners and which way the score wins (`"high"`, `"low"`, or `""` when it does not decide).
A player's place in a game is one more than the number of players ahead of them (ties share
a place: 1, 2, 2, 4): a winner is ahead of every other player; between two others, the better
score is ahead when the score decides, else nobody is. Standings rank players by wins, then by
second places, then third places, then fewest games, then name; the podium is the first three
ranks (players with the same record share a step). Pure: results in, a JSON-able view out.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

PODIUM = 3       # steps: gold, silver, bronze


def places(players: Sequence[tuple[str, Any]], winners: Iterable[str], wins: str) -> dict[str, int]:
    """Each player's place in one finished game (see the module's rule)."""
    won = set(winners)

    def ahead(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
        if (a[0] in won) != (b[0] in won):
            return a[0] in won
        if a[0] in won or wins not in ("high", "low"):
            return False
        if not isinstance(a[1], (int, float)) or not isinstance(b[1], (int, float)):
            return False
        return a[1] > b[1] if wins == "high" else a[1] < b[1]
    return {p[0]: 1 + sum(ahead(o, p) for o in players) for p in players}


def standings(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The standings of the finished games `results` (each: `game` (its title), `players` as
    [name, score] pairs, `winners`, `score_wins`): `games` played, `rows` ranked (name, rank,
    played, wins, `places` counts of 1st/2nd/3rd, `per_game` {title: {played, wins}}),
    `per_game` (games of each title) and `podium` (the rows ranked 1 to 3)."""
    rows: dict[str, dict[str, Any]] = {}
    per_game: dict[str, int] = {}
    count = 0
    for result in results:
        pairs = [(str(n), s) for n, s in result.get("players", ())]
        if not pairs:
            continue
        count += 1
        title = str(result.get("game", "?"))
        per_game[title] = per_game.get(title, 0) + 1
        got = places(pairs, result.get("winners", ()), str(result.get("score_wins", "")))
        for name, place in got.items():
            row = rows.setdefault(name, {"name": name, "played": 0, "wins": 0, "places": [0, 0, 0],
                                         "per_game": {}})
            row["played"] += 1
            row["wins"] += place == 1
            if place <= PODIUM:
                row["places"][place - 1] += 1
            game = row["per_game"].setdefault(title, {"played": 0, "wins": 0})
            game["played"] += 1
            game["wins"] += place == 1

    def record(row: dict[str, Any]) -> tuple[int, int, int, int]:
        return (-row["wins"], -row["places"][1], -row["places"][2], row["played"])
    ranked = sorted(rows.values(), key=lambda r: (record(r), r["name"].casefold()))
    for i, row in enumerate(ranked):
        same = i > 0 and record(ranked[i - 1]) == record(row)
        row["rank"] = ranked[i - 1]["rank"] if same else i + 1
    return {"games": count, "per_game": per_game, "rows": ranked,
            "podium": [r for r in ranked if r["rank"] <= PODIUM and r["wins"] + sum(r["places"]) > 0]}
