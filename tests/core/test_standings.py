"""The evening's standings from finished games' results: places by the game's own way of
winning, ties sharing a place, ranks by wins then second and third places."""
from __future__ import annotations

from pi_companion.core.standings import places, standings


def game(title, pairs, winners, wins):
    return {"game": title, "players": [list(p) for p in pairs], "winners": winners, "score_wins": wins}


def test_places_follow_the_way_each_game_is_won_and_ties_share():
    assert places([("Ada", 3), ("Ben", 5), ("Cy", 3), ("Dee", 1)], ["Ben"], "high") == \
        {"Ben": 1, "Ada": 2, "Cy": 2, "Dee": 4}
    # Hands Up!: cards in hand, the fewest wins.
    assert places([("Ada", 0), ("Ben", 4), ("Cy", 2)], ["Ada"], "low") == {"Ada": 1, "Cy": 2, "Ben": 3}
    # A score that does not decide (a pawn's space): the winner, then everyone else together.
    assert places([("Ada", 9), ("Ben", 12), ("Cy", 3)], ["Cy"], "") == {"Cy": 1, "Ada": 2, "Ben": 2}
    assert places([("Ada", None), ("Ben", None)], ["Ada", "Ben"], "high") == {"Ada": 1, "Ben": 1}


def test_standings_rank_by_wins_then_places_and_the_podium_shares_steps():
    view = standings([
        game("Grab Bag", [("Ada", 1), ("Ben", 3), ("Cy", 2)], ["Ben"], "high"),
        game("Hands Up!", [("Ada", 0), ("Ben", 5), ("Cy", 2)], ["Ada"], "low"),
        game("Grab Bag", [("Ada", 1), ("Ben", 2), ("Cy", 3), ("Dee", 0)], ["Cy"], "high"),
        game("Grab Bag", [], [], "high"),                      # no players: not a game
    ])
    assert view["games"] == 3 and view["per_game"] == {"Grab Bag": 2, "Hands Up!": 1}
    table = [(r["name"], r["rank"], r["wins"], r["places"], r["played"]) for r in view["rows"]]
    # One win each for Cy, Ben and Ada: then second places decide (Cy 2, Ben 1, Ada 0).
    assert table == [("Cy", 1, 1, [1, 2, 0], 3), ("Ben", 2, 1, [1, 1, 1], 3), ("Ada", 3, 1, [1, 0, 2], 3),
                     ("Dee", 4, 0, [0, 0, 0], 1)]
    assert view["rows"][0]["per_game"] == {"Grab Bag": {"played": 2, "wins": 1}, "Hands Up!": {"played": 1, "wins": 0}}
    assert [r["name"] for r in view["podium"]] == ["Cy", "Ben", "Ada"]
    same = standings([game("Grab Bag", [("Ada", 1), ("Ben", 1)], ["Ada", "Ben"], "high")])
    assert [(r["name"], r["rank"]) for r in same["podium"]] == [("Ada", 1), ("Ben", 1)]
