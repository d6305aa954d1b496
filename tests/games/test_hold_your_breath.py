"""Hold Your Breath! rules from the rulebook, through the whole engine: the depth board, cards, rounds, winners."""
from __future__ import annotations

from dataclasses import replace

import pytest
from helpers.common import replay, scenario, tap

from pi_companion.core.engine import Engine
from pi_companion.core.events import MenuChoice
from pi_companion.core.menu import Menu
from pi_companion.games.hold_your_breath import GAME
from pi_companion.replay import ScenarioError, load_scenario
from pi_companion.ui.screens import render

P3 = ["Ada", "Ben", "Cy"]


class Table:
    """Builds a scenario step by step and replays it when asked."""

    def __init__(self, players: list[str] = P3, **extra) -> None:
        self.players, self.extra, self.events, self.t = players, extra, [], 1.0

    def tap(self, button: str, hold: float = 0.08) -> Table:
        self.events += tap(button, self.t, hold)
        self.t += max(0.5, hold + 0.3)
        return self

    def dial(self, delta: int) -> Table:
        for _ in range(abs(delta)):
            self.events.append({"t": round(self.t, 6), "turn": 1 if delta > 0 else -1})
            self.t += 0.1
        return self

    def swim(self, feet: int) -> Table:
        """The current diver swims `feet` this turn and ends it."""
        return self.dial(feet // 5).tap("YES")

    def target(self, diver: str, verdict: str) -> Table:
        """Pick a diver by their button, then NO / YES / long YES."""
        self.tap(f"P{self.players.index(diver) + 1}")
        return self.tap("YES", hold=1.2) if verdict == "long" else self.tap(verdict)

    def deck_ran_out(self) -> Table:
        return self.tap("MENU").tap("YES")         # the first menu entry

    def undo(self) -> Table:
        return self.tap("NO", hold=1.2)

    def report(self, **more) -> dict:
        return replay(scenario("hold-your-breath", self.players, self.events, **{**self.extra, **more}))


def ascent(depths: list[int], **extra) -> Table:
    """A descent in which each diver swims `depths` in one turn, then the deck runs out."""
    table = Table(players=P3[:len(depths)] if len(depths) <= 3 else ["Ada", "Ben", "Cy", "Di"], **extra)
    for feet in depths:
        table.swim(feet)
    table.deck_ran_out()
    for _ in depths:
        table.tap("YES")
    return table


# ---- the descent ----

def test_the_board_starts_at_the_surface():
    r = Table().report()
    assert r["phase"] == "descent" and r["current"] == "Ada" and r["over"] is False
    assert r["depths"] == {"Ada": 0, "Ben": 0, "Cy": 0} and r["panic"] == {"Ada": 0, "Ben": 0, "Cy": 0}
    assert r["shark"] is None and r["anchors"] is None and r["winners"] == [] and r["last_buzz"] is None
    assert Table(options={"first_player": "Cy"}).report()["current"] == "Cy"


def test_options_are_checked():
    with pytest.raises(ScenarioError, match="options.first_player"):
        load_scenario(scenario("hold-your-breath", P3, [], options={"first_player": "Zed"}))
    with pytest.raises(ScenarioError, match="options.depth: unknown option"):
        load_scenario(scenario("hold-your-breath", P3, [], options={"depth": 5}))
    with pytest.raises(ScenarioError, match="players: Hold Your Breath! takes 2 to 4 players"):
        load_scenario(scenario("hold-your-breath", P3 + ["Di", "Ed"], []))


def test_the_encoder_sets_the_swim_in_steps_of_five_and_yes_dives():
    table = Table().dial(3)
    assert table.report()["swim"] == 15
    assert table.dial(-1).report()["swim"] == 10
    assert table.dial(-5).report()["swim"] == 0                  # never below zero
    r = table.dial(2).tap("YES").report()
    assert r["depths"]["Ada"] == 10 and r["swim"] == 0 and r["current"] == "Ben" and r["turns"] == 1
    r = table.swim(25).swim(0).swim(5).report()
    assert r["depths"] == {"Ada": 15, "Ben": 25, "Cy": 0} and r["current"] == "Ben"


def test_no_air_lays_a_panic_card_and_the_diver_cannot_swim():
    table = Table().dial(2).tap("NO")
    r = table.report()
    assert r["panic"]["Ada"] == 1 and r["swim"] == 0
    r = table.dial(3).tap("YES").report()
    assert r["depths"]["Ada"] == 0 and r["current"] == "Ben"
    r = Table().tap("NO").tap("NO").report()                     # face-down panics pile up
    assert r["panic"]["Ada"] == 2


def test_calm_clears_one_of_your_own_panic_cards():
    table = Table().tap("NO").tap("NO").target("Ada", "YES")
    r = table.report()
    assert r["panic"]["Ada"] == 1 and r["selected"] is None
    r = table.target("Ada", "YES").dial(2).tap("YES").report()
    assert r["panic"]["Ada"] == 0 and r["depths"]["Ada"] == 10


def test_calm_only_on_yourself_and_only_with_a_panic():
    r = Table().target("Ben", "NO").target("Ben", "YES").report()
    assert r["panic"]["Ben"] == 1 and r["selected"] == "Ben"       # refused, still picked
    r = Table().target("Ada", "YES").report()
    assert r["panic"]["Ada"] == 0 and r["selected"] == "Ada"


def test_panic_on_an_opponent_only_if_they_have_none():
    table = Table().target("Ben", "NO")
    assert table.report()["panic"] == {"Ada": 0, "Ben": 1, "Cy": 0}
    r = table.target("Ben", "NO").report()
    assert r["panic"]["Ben"] == 1 and r["selected"] == "Ben"        # refused: nothing changed
    table.t += 5.0                                                  # ... and the pick lapses
    r = table.swim(10).dial(2).tap("YES").report()                   # Ben is stuck
    assert r["depths"] == {"Ada": 10, "Ben": 0, "Cy": 0}


def test_a_second_press_unpicks_the_diver_and_a_pick_lapses_after_five_seconds():
    assert Table().tap("P2").tap("P2").report()["selected"] is None
    table = Table().tap("P2").tap("P3")
    assert table.report()["selected"] == "Cy"
    assert table.report(end=table.t - 0.5 + 4.9)["selected"] == "Cy"
    assert table.report(end=table.t - 0.5 + 5.0)["selected"] is None
    table.t += 5.0
    r = table.dial(1).tap("YES").report()
    assert r["depths"]["Ada"] == 5


def test_the_shark_goes_on_an_opponent_moves_and_is_eaten_by_the_kraken():
    table = Table().target("Ben", "long")
    assert table.report()["shark"] == "Ben"
    assert table.target("Ada", "long").report()["shark"] == "Ben"      # not on yourself
    r = table.target("Cy", "long").report()                              # a Calm moves it on
    assert r["shark"] == "Cy" and r["panic"] == {"Ada": 0, "Ben": 0, "Cy": 0}
    assert table.target("Cy", "long").report()["shark"] is None         # the Kraken


def test_the_shark_comes_on_top_of_a_panic_and_a_calm_does_not_remove_it():
    table = Table().target("Ben", "NO").target("Ben", "long").swim(5)
    r = table.dial(4).tap("YES").report()
    assert r["shark"] == "Ben" and r["panic"]["Ben"] == 1 and r["depths"]["Ben"] == 0
    table.swim(5).swim(5)                                            # Cy, Ada
    r = table.target("Ben", "YES").dial(4).tap("YES").report()       # Ben calms his panic only
    assert r["panic"]["Ben"] == 0 and r["shark"] == "Ben" and r["depths"]["Ben"] == 0


def test_the_shark_holder_moves_it_on_with_a_calm_on_their_turn():
    table = Table().target("Ben", "long").swim(5).target("Cy", "long")
    r = table.report()
    assert r["current"] == "Ben" and r["shark"] == "Cy"
    r = table.dial(2).tap("YES").report()
    assert r["depths"]["Ben"] == 10


# ---- the end of the descent ----

def test_deck_ran_out_gives_everyone_a_last_turn_then_anchors_are_set():
    table = Table().swim(20).swim(35).deck_ran_out()
    r = table.report()
    assert r["phase"] == "descent-last" and r["last_turns"] == 3 and r["current"] == "Cy"
    table.swim(15).swim(5)
    r = table.report()
    assert r["phase"] == "descent-last" and r["last_turns"] == 1 and r["current"] == "Ben"
    r = table.swim(5).report()
    assert r["phase"] == "ascent" and r["anchors"] == {"Ada": 25, "Ben": 40, "Cy": 15}
    assert r["current"] == "Cy" and r["ascent_first"] == "Cy" and r["ascent_tied"] == []
    assert r["last_turns"] is None and r["totals"] == {"Ada": 25, "Ben": 40, "Cy": 15}


def test_deck_ran_out_is_a_menu_entry_only_until_chosen():
    state = GAME.new_game(tuple(P3), {}, 1)
    assert ("deck", "Deck ran out") in GAME.menu_items(state)
    state, _ = GAME.step(state, MenuChoice(1.0, "deck"))
    assert ("deck", "Deck ran out") in GAME.menu_items(state) and "deck" in GAME.menu_disabled(state)
    again, _ = GAME.step(state, MenuChoice(2.0, "deck"))
    assert again == state


def test_panic_and_shark_stay_on_for_the_ascent_also_on_a_diver_at_the_surface():
    """The rulebook: "any Shark or Panic cards in the player's Swim Pile remain in place for the
    Ascent" - for a diver who never left the surface too; each counts -10 while on them."""
    table = Table().swim(10).target("Ada", "NO").target("Cy", "long").swim(20).swim(0)
    r = table.deck_ran_out().tap("YES").tap("YES").tap("YES").report()
    assert r["phase"] == "ascent" and r["panic"]["Ada"] == 1        # Ada is at 10 ft: it stays
    assert r["surfaced"] == ["Cy"] and r["shark"] == "Cy"             # Cy never left the surface
    assert r["totals"] == {"Ada": 0, "Ben": 20, "Cy": -10}
    table = Table().swim(10).target("Cy", "NO").swim(20).swim(0)     # a Panic on Cy, at 0 ft
    assert table.report()["panic"]["Cy"] == 1
    r = table.deck_ran_out().tap("YES").tap("YES").tap("YES").report()
    assert r["surfaced"] == ["Cy"] and r["panic"]["Cy"] == 1 and r["totals"]["Cy"] == -10
    assert table.target("Cy", "NO").report()["panic"]["Cy"] == 1      # nothing new on a surfaced diver


def test_a_tie_for_shallowest_is_drawn_by_the_box():
    starters = set()
    for seed in range(16):
        r = ascent([10, 30, 10], seed=seed).report()
        assert r["ascent_tied"] == ["Ada", "Cy"] and r["ascent_first"] in ("Ada", "Cy")
        assert r["current"] == r["ascent_first"]
        starters.add(r["ascent_first"])
    assert starters == {"Ada", "Cy"}
    assert ascent([10, 30, 10], seed=3).report() == ascent([10, 30, 10], seed=3).report()


# ---- the ascent ----

def test_swimming_up_stops_at_the_surface_and_shallow_divers_do_not_end_it():
    table = ascent([15, 40, 25])                 # Ada starts
    assert table.dial(5).report()["swim"] == 15
    r = table.tap("YES").report()
    assert r["depths"]["Ada"] == 0 and r["surfaced"] == ["Ada"] and r["over"] is False
    r = table.swim(10).report()
    assert r["depths"]["Ben"] == 30 and r["current"] == "Cy"
    r = table.swim(25).report()
    assert r["surfaced"] == ["Ada", "Cy"] and r["over"] is False and r["current"] == "Ada"
    r = table.dial(3).tap("YES").report()        # Ada is out of the water: no swimming
    assert r["depths"]["Ada"] == 0 and r["surfaced"] == ["Ada", "Cy"]


def test_the_deepest_diver_surfacing_wins():
    table = ascent([15, 40, 25])
    table.swim(0).swim(40)
    r = table.report()
    assert r["over"] is True and r["phase"] == "over" and r["winners"] == ["Ben"]
    assert r["ended_by"] == "surface" and r["surfaced"] == ["Ben"]
    assert table.swim(10).report()["depths"] == r["depths"]          # nothing after the end


def test_among_tied_deepest_the_first_up_wins():
    table = ascent([30, 30, 10])                 # Cy starts
    table.swim(10).swim(20).swim(25)             # Cy up; Ada 10 below; Ben 5 below
    r = table.report()
    assert r["over"] is False and r["surfaced"] == ["Cy"] and r["depths"] == {"Ada": 10, "Ben": 5, "Cy": 0}
    r = table.swim(5).swim(10).report()          # Cy (already up), then Ada
    assert r["over"] is True and r["winners"] == ["Ada"]


def test_surfaced_divers_take_no_panic_or_shark():
    table = ascent([5, 40, 25]).swim(5)          # Ada surfaces first
    r = table.target("Ada", "NO").target("Ada", "long").report()
    assert r["panic"]["Ada"] == 0 and r["shark"] is None


def test_deck_running_out_in_the_ascent_scores_distance_minus_ten_per_hindrance():
    table = ascent([15, 40, 25])                 # Ada, Ben, Cy
    table.swim(15)                               # Ada surfaces: 15 + 15 = 30
    table.swim(10).target("Ben", "NO")           # Ben up 10 -> 30; Cy panics Ben
    table.swim(20)                               # Cy up 20 -> 5 below
    table.deck_ran_out()
    assert table.report()["phase"] == "ascent-last"
    table.swim(0).swim(0).swim(0)                # Ada, Ben (stuck), Cy: last turns
    r = table.report()
    assert r["over"] is True and r["ended_by"] == "deck"
    assert r["totals"] == {"Ada": 30, "Ben": 40, "Cy": 45}       # Ben: 40 + 10 - 10
    assert r["winners"] == ["Cy"]


def test_a_tie_in_total_distance_shares_the_win():
    table = ascent([20, 20])
    table.swim(10).swim(10).deck_ran_out().swim(0).swim(0)
    r = table.report()
    assert r["totals"] == {"Ada": 30, "Ben": 30} and r["winners"] == ["Ada", "Ben"]


def test_the_deepest_surfacing_during_the_last_turns_still_wins_by_surfacing():
    table = ascent([15, 40, 25]).deck_ran_out().swim(0).swim(40)
    r = table.report()
    assert r["winners"] == ["Ben"] and r["ended_by"] == "surface"


def test_nobody_dived_everyone_shares_the_win():
    r = ascent([0, 0, 0]).report()
    assert r["over"] and r["winners"] == ["Ada", "Ben", "Cy"] and r["ended_by"] == "surface"


# ---- undo ----

def test_undo_takes_back_a_panic_and_a_turn():
    r = Table().target("Ben", "NO").undo().report()
    assert r["panic"]["Ben"] == 0
    r = Table().swim(10).undo().report()
    assert r["depths"]["Ada"] == 0 and r["current"] == "Ada"


# ---- menu and screens ----

def test_the_depth_board_card():
    state = replace(GAME.new_game(tuple(P3), {}, 1), depths=(10, 35, 0), panic=(0, 2, 0), shark=2)
    title, lines = GAME.menu_card(state, "board")
    assert title == "Depth board" and lines[:3] == ("Ada 10 ft", "Ben 35 ft P2", "Cy 0 ft S")
    _, lines = GAME.menu_card(replace(state, anchors=(20, 35, 5)), "board")
    assert lines[0] == "Ada 10 ft (20)" and lines[-1] == "(anchor) P: Panic S: Shark"


def test_the_board_is_a_picture_that_fits(text_boxes):
    players = tuple(f"Player{i}longname" for i in range(1, 5))
    engine = Engine(GAME, players, {}, 3)
    base = engine.table.game
    variants = [
        base, replace(base, depths=(35, 80, 10, 0), panic=(0, 2, 0, 5), shark=2, swim=10),
        replace(base, depths=(35, 80, 10, 0), selected=1), replace(base, depths=(35, 0, 0, 0), shark=0),
        replace(base, phase="descent-last", last_turns=3, depths=(400, 5, 0, 0)),
        replace(base, phase="ascent", anchors=(60, 80, 40, 5), depths=(35, 80, 10, 0), surfaced=(3,), swim=20),
        replace(base, phase="over", anchors=(60, 80, 40, 5), depths=(0, 80, 10, 0), winners=(0,), ended_by="surface"),
        replace(base, phase="over", anchors=(60, 80, 40, 5), depths=(5, 20, 10, 0), winners=(0, 2), ended_by="deck"),
    ]
    frames = []
    for index, state in enumerate(variants):
        engine.table = replace(engine.table, game=state)
        image = render(engine)
        frames.append(image.tobytes())
        for text, (x0, y0, x1, y1) in text_boxes:
            assert x0 >= 0 and y0 >= 0 and x1 <= 128 and y1 <= 64, f"variant {index}: {text!r}"
        text_boxes.clear()
        assert image.getbbox() is not None
    assert len(set(frames)) == len(frames)
    engine.menu = Menu((("board", "Depth board"),)).show_card(*GAME.menu_card(variants[5], "board"))
    render(engine)
    for text, (x0, y0, x1, y1) in text_boxes:
        assert x0 >= 0 and y0 >= 0 and x1 <= 128 and y1 <= 64, f"board card: {text!r}"
    assert any("(60)" in text for text, _ in text_boxes)


def test_the_gauge_marker_moves_down_with_depth():
    engine = Engine(GAME, ("Ada", "Ben"), {}, 1)
    lows = []
    for depth in (0, 25, 50):
        engine.table = replace(engine.table, game=replace(engine.game, depths=(depth, 0)))
        image = render(engine)
        column = [y for y in range(12, 64) if all(image.getpixel((x, y)) for x in range(17, 22))]
        lows.append(max(column))
    assert lows[0] < lows[1] < lows[2]


def test_the_box_picks_the_card_a_discard_card_takes():
    from pi_companion.core.engine import Engine
    from pi_companion.core.events import Edge
    from pi_companion.gallery import choose
    from pi_companion.ui.screens import render

    def pick(seed, target=None):
        engine = Engine(GAME, ("Ada", "Ben", "Cy"), {}, seed)
        if target:
            engine.feed(Edge(0.5, target, True))
            engine.feed(Edge(0.55, target, False))
        choose(engine, "pick")
        return engine

    picks = [pick(seed).report()["pick"] for seed in range(40)]
    assert all(p.startswith("discard card ") and p.endswith(" of 5 in the hand") for p in picks)
    assert {p.split()[2] for p in picks} == {"1", "2", "3", "4", "5"}
    assert picks == [pick(seed).report()["pick"] for seed in range(40)]          # seeded
    engine = pick(3, target="P2")
    assert engine.report()["pick"].endswith("in Ben's hand")
    before = render(engine).tobytes()
    engine.feed(Edge(9.0, "P3", True))                                          # next action
    assert engine.report()["pick"] is None and render(engine).tobytes() != before


def test_a_refused_card_while_a_discard_pick_is_shown_is_no_undo_step():
    table = Table().target("Ben", "NO")                         # a real Panic on Ben
    table.tap("MENU").dial(1).tap("YES")                         # MENU > Discard: pick a card
    assert table.report()["pick"] is not None
    table.tap("YES", hold=1.2)                                   # long YES, no diver picked: nothing
    r = table.report()
    assert r["panic"]["Ben"] == 1
    r = table.undo().report()                                    # the Discard pick is a step of its own
    assert r["panic"]["Ben"] == 1 and r["pick"] is None
    assert table.undo().report()["panic"]["Ben"] == 0            # then the real Panic
    table = Table().target("Ben", "NO").tap("P2").tap("MENU").dial(1).tap("YES").tap("P2").tap("NO")
    assert table.report()["panic"]["Ben"] == 1                   # refused: he has one already
    assert table.undo().undo().report()["panic"]["Ben"] == 0     # the pick, then the Panic


def test_a_discard_pick_uses_up_the_pick():
    """Every card uses up the pick: after MENU > Discard, pressing that opponent picks them again
    (it does not let them go), and NO with nobody picked is the current diver's no air."""
    table = Table().tap("P2").tap("MENU").dial(1).tap("YES")     # Ben picked, then the Discard pick
    r = table.report()
    assert r["selected"] is None and "Ben's hand" in r["pick"]
    assert table.tap("P2").tap("NO").report()["panic"] == {"Ada": 0, "Ben": 1, "Cy": 0}
    table = Table().tap("P2").tap("MENU").dial(1).tap("YES").tap("NO")
    assert table.report()["panic"] == {"Ada": 1, "Ben": 0, "Cy": 0}   # no air for Ada


def test_a_menu_choice_that_changes_the_board_is_one_undo_step():
    """Long NO after MENU > Deck ran out takes back that alone, not the end of turn before it."""
    table = Table().swim(10).deck_ran_out()
    assert table.report()["phase"] == "descent-last"
    r = table.undo().report()
    assert r["phase"] == "descent" and r["last_turns"] is None
    assert r["depths"]["Ada"] == 10 and r["current"] == "Ben"      # Ada's turn stays ended
    r = table.undo().report()
    assert r["depths"]["Ada"] == 0 and r["current"] == "Ada"
