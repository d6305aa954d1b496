"""Grab Bag rules from the rulebook and the replay contract, through the whole engine."""
from __future__ import annotations

import pytest

from helpers.common import replay, scenario, tap

P3 = ["Ada", "Ben", "Cy"]


def play(events, players=P3, **extra):
    return replay(scenario("grab-bag", players, events, **extra))


def seq(*steps):
    """Build taps 0.5 s apart: steps are button names."""
    out = []
    for i, button in enumerate(steps):
        out += tap(button, 1.0 + i * 0.5)
    return out


def test_defaults_standard_for_three():
    r = play([])
    assert r["variant"] == "standard" and r["grab_master"] == "Ada"
    assert r["phase"] == "searching" and r["round"] == 1 and r["deck"] == 12
    assert r["scores"] == {"Ada": 0, "Ben": 0, "Cy": 0} and r["last_buzz"] is None
    assert r["over"] is False and r["winners"] == [] and r["shutdown_requested"] is False


def test_correct_piece_wins_card_and_becomes_grab_master():
    r = play(seq("P2", "YES"))
    assert r["scores"]["Ben"] == 1 and r["deck"] == 11
    assert r["grab_master"] == "Ben" and r["round"] == 2 and r["phase"] == "searching"
    assert r["last_buzz"] == {"winner": "Ben", "order": [{"player": "Ben", "after_ms": 0.0}]}


def test_grab_master_press_is_ignored():
    r = play(seq("P1"))
    assert r["phase"] == "searching" and r["last_buzz"] is None


def test_wrong_piece_excludes_seeker_for_the_round():
    r = play(seq("P2", "NO", "P2"))
    assert r["phase"] == "searching" and r["scores"]["Ben"] == 0
    r = play(seq("P2", "NO", "P3", "YES"))
    assert r["scores"]["Cy"] == 1 and r["grab_master"] == "Cy"


def test_all_seekers_excluded_gives_grab_master_the_card():
    r = play(seq("P2", "NO", "P3", "NO"))
    assert r["scores"] == {"Ada": 1, "Ben": 0, "Cy": 0}
    assert r["grab_master"] == "Ada" and r["round"] == 2 and r["deck"] == 11


def test_nobody_found_it():
    r = play(seq("NO"))
    assert r["scores"]["Ada"] == 1 and r["grab_master"] == "Ada" and r["round"] == 2
    r = play(seq("YES"))   # YES while searching is ignored
    assert r["scores"]["Ada"] == 0 and r["round"] == 1


def test_exclusion_ends_with_the_round():
    r = play(seq("P2", "NO", "NO", "P2"))
    assert r["phase"] == "judging" and r["last_buzz"]["winner"] == "Ben"


def test_last_card_ends_game_and_ties_give_several_winners():
    r = play(seq("P2", "YES", "P1", "YES"), options={"cards": 2})
    assert r["over"] and r["phase"] == "over" and r["deck"] == 0
    assert r["winners"] == ["Ada", "Ben"]
    r = play(seq("P2", "YES", "P1", "YES", "P3", "YES"), options={"cards": 3})
    assert r["winners"] == ["Ada", "Ben", "Cy"]


def test_single_winner_and_nothing_after_the_end():
    r = play(seq("P2", "YES", "P3", "YES", "P2", "YES", "P1", "YES"), options={"cards": 3})
    assert r["winners"] == ["Ben"] and r["scores"]["Ben"] == 2


def test_strict_wrong_piece_gives_everyone_else_a_card_clockwise():
    r = play(seq("P2", "NO"), options={"variant": "strict"}, players=["Ada", "Ben", "Cy", "Di"])
    assert r["scores"] == {"Ada": 1, "Ben": 0, "Cy": 1, "Di": 1}
    assert r["grab_master"] == "Ada" and r["deck"] == 9 and r["round"] == 2


def test_strict_share_stops_when_deck_runs_out():
    r = play(seq("P3", "NO"), options={"variant": "strict", "cards": 2},
             players=["Ada", "Ben", "Cy", "Di"])
    # after Cy (P3) clockwise: Di, then Ada; Ben gets nothing
    assert r["scores"] == {"Ada": 1, "Ben": 0, "Cy": 0, "Di": 1}
    assert r["over"] and r["winners"] == ["Ada", "Di"]


def test_all_seekers_is_default_for_two_and_has_a_target():
    r = play([], players=["Ada", "Ben"])
    assert r["variant"] == "all-seekers" and r["grab_master"] is None
    assert isinstance(r["target"], str) and r["target"]


def test_all_seekers_rounds():
    r = play(seq("P1", "YES"), players=["Ada", "Ben"])
    assert r["scores"] == {"Ada": 1, "Ben": 0} and r["deck"] == 11 and r["round"] == 2
    r = play(seq("P1", "NO", "P2", "NO"), players=["Ada", "Ben"])
    assert r["scores"] == {"Ada": 0, "Ben": 0} and r["deck"] == 11 and r["set_aside"] == 1
    r = play(seq("NO"), players=["Ada", "Ben"])
    assert r["deck"] == 11 and r["round"] == 2


def test_all_seekers_targets_are_seeded_and_follow_the_shuffle():
    a = [play(seq(*["NO"] * k), players=["Ada", "Ben"], seed=3)["target"] for k in range(12)]
    assert sorted(a) == sorted(set(a)) and len(a) == 12   # twelve different pieces
    assert a == [play(seq(*["NO"] * k), players=["Ada", "Ben"], seed=3)["target"] for k in range(12)]
    assert a != [play(seq(*["NO"] * k), players=["Ada", "Ben"], seed=4)["target"] for k in range(12)]


def test_first_grab_master_option():
    r = play(seq("P1", "YES"), options={"first_grab_master": "Cy"})
    assert r["scores"]["Ada"] == 1 and r["grab_master"] == "Ada"


def test_undo_restores_the_state_before_the_last_judgement():
    r = play(seq("P2", "YES") + [{"t": 3.0, "press": "NO"}, {"t": 4.2, "release": "NO"}])
    assert r["scores"]["Ben"] == 0 and r["grab_master"] == "Ada"
    assert r["phase"] == "judging" and r["last_buzz"]["winner"] == "Ben" and r["deck"] == 12


def test_repeated_undo_goes_further_back_and_stops_at_the_start():
    long_no = lambda t: [{"t": t, "press": "NO"}, {"t": t + 1.1, "release": "NO"}]  # noqa: E731
    events = seq("P2", "YES", "P3", "YES") + long_no(5) + long_no(7)
    r = play(events)
    assert r["scores"] == {"Ada": 0, "Ben": 0, "Cy": 0} and r["phase"] == "judging"
    r = play(events + long_no(9) + long_no(11))
    assert r["scores"] == {"Ada": 0, "Ben": 0, "Cy": 0} and r["round"] == 1


def test_undo_with_nothing_to_undo_does_nothing():
    r = play([{"t": 1.0, "press": "NO"}, {"t": 2.5, "release": "NO"}])
    assert r["phase"] == "searching" and r["round"] == 1 and r["scores"]["Ada"] == 0


def test_ignored_judgements_are_not_undo_steps():
    long_no = [{"t": 9.0, "press": "NO"}, {"t": 10.5, "release": "NO"}]
    r = play(seq("P2", "YES", "YES") + long_no)    # second YES (searching) changed nothing
    assert r["scores"]["Ben"] == 0 and r["phase"] == "judging"


@pytest.mark.parametrize("variant", ["standard", "all-seekers", "strict"])
def test_card_accounting_holds_in_every_variant(variant):
    players = ["Ada", "Ben", "Cy", "Di"]
    steps = ["P2", "NO", "P3", "YES", "NO", "P4", "NO", "P2", "NO", "P1", "YES"] * 3
    r = play(seq(*steps), players=players, options={"variant": variant, "cards": 10})
    assert sum(r["scores"].values()) + r["deck"] + r["set_aside"] == 10


def test_menu_open_does_not_swallow_a_buzz_and_yes_no_navigate_it():
    events = [{"t": 1.0, "press": "MENU"}, {"t": 1.05, "release": "MENU"},
              {"t": 1.5, "press": "YES"}, {"t": 1.55, "release": "YES"}]   # YES picks a menu entry
    r = play(events)
    assert r["phase"] == "searching" and r["round"] == 1
    r = play(events[:2] + tap("P3", 2.0))
    assert r["phase"] == "judging" and r["last_buzz"]["winner"] == "Cy"


def test_menu_held_three_seconds_requests_shutdown_short_does_not():
    assert play([{"t": 1.0, "press": "MENU"}, {"t": 4.1, "release": "MENU"}])["shutdown_requested"]
    assert not play([{"t": 1.0, "press": "MENU"}, {"t": 3.9, "release": "MENU"}])["shutdown_requested"]
    r = play([{"t": 1.0, "press": "MENU"}], end=4.0)     # acts at 3 s while still held
    assert r["shutdown_requested"]


def test_each_variant_has_its_own_rules_card():
    from pi_companion.core.engine import Engine
    from pi_companion.gallery import choose
    from pi_companion.games.grab_bag import GAME as BAG
    cards = {}
    for variant in ("standard", "all-seekers", "strict"):
        engine = Engine(BAG, ("Ada", "Ben", "Cy"), {"variant": variant}, 1)
        choose(engine, "rules")
        cards[variant] = " ".join(engine.menu.card)
    assert len(set(cards.values())) == 3
    assert "master gets the card" not in cards["all-seekers"]      # there is no Grab Master
    assert "set aside, nobody scores" in cards["all-seekers"]
    assert "others get a card" in cards["strict"]
