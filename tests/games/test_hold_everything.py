"""Hold Everything! rules from the rulebook, through the whole engine, plus the die's fairness."""
from __future__ import annotations

from dataclasses import replace

import pytest
from helpers.common import replay, scenario, tap

from pi_companion.core import rand
from pi_companion.core.engine import Engine
from pi_companion.core.events import Dial, Judge, PlayerHold, PlayerPress, Sound, Tick
from pi_companion.games.hold_everything import CARDS, GAME, OBJECTS, roll_die
from pi_companion.replay import ScenarioError, load_scenario
from pi_companion.ui.screens import render

P3 = ["Ada", "Ben", "Cy"]
SIX = ["sock", "cup", "book", "hat", "shoe", "ball"]


class Table:
    """Builds a scenario step by step (one action a second) and replays it when asked."""

    def __init__(self, players: list[str] = P3, start: bool = True, **extra) -> None:
        self.players, self.extra, self.events, self.t = players, extra, [], 1.0
        if start:
            self.tap("YES")

    def tap(self, button: str, hold: float = 0.08) -> Table:
        self.events += tap(button, self.t, hold)
        self.t += max(1.0, hold + 0.5)
        return self

    def dial(self, delta: int) -> Table:
        for _ in range(abs(delta)):
            self.events.append({"t": round(self.t, 6), "turn": 1 if delta > 0 else -1})
            self.t += 0.1
        self.t += 0.5
        return self

    def report(self, **more) -> dict:
        """The report with the clock run on to now (so a roll in progress resolves)."""
        more = {"end": round(self.t, 6), **self.extra, **more}
        return replay(scenario("hold-everything", self.players, self.events, **more))

    def roll(self) -> Table:
        current = self.players.index(self.report()["current"])
        return self.tap(f"P{current + 1}")

    def card(self, name: str) -> Table:
        choice = self.report()["choice"]
        assert choice is not None, "not asking for a card"
        return self.dial((CARDS.index(name) - CARDS.index(choice)) % len(CARDS)).tap("YES")

    def turn(self, name: str) -> Table:
        return self.roll().card(name)

    def undo(self) -> Table:
        return self.tap("NO", hold=1.2)


# ---- setup ----

def test_setup_deals_three_objects_each_and_returns_every_card_to_the_stack():
    r = Table(start=False).report()
    assert r["phase"] == "setup" and r["over"] is False and r["winners"] == []
    assert r["objects"] == list(OBJECTS[:15]) and r["warning"] is None
    dealt = [obj for objs in r["dealt"].values() for obj in objs]
    assert all(len(objs) == 3 for objs in r["dealt"].values())
    assert len(set(dealt)) == 9 and set(dealt) <= set(r["objects"])
    assert r["stack"] == 15 and r["face_up"] == [] and r["removed"] == []
    assert r["last_buzz"] is None


def test_the_deal_is_seeded():
    deal = lambda seed: Table(start=False).report(seed=seed)["dealt"]
    assert deal(4) == deal(4)
    assert deal(4) != deal(5)


def test_object_list_option():
    r = Table(start=False, options={"objects": [f"thing {i}" for i in range(20)]}).report()
    assert r["objects"] == [f"thing {i}" for i in range(15)] and r["warning"] is None
    r = Table(start=False, options={"objects": [f"thing {i}" for i in range(12)]}).report()
    assert r["warning"] == "too few: 12 of 15 objects" and len(r["objects"]) == 12   # as the docs say
    with pytest.raises(ScenarioError, match=r"options.objects: 3 players need at least 9 objects"):
        load_scenario(scenario("hold-everything", P3, [], options={"objects": SIX}))
    with pytest.raises(ScenarioError, match="options.objects"):
        load_scenario(scenario("hold-everything", P3, [], options={"objects": ["a"] * 15}))
    with pytest.raises(ScenarioError, match="options.dice: unknown option"):
        load_scenario(scenario("hold-everything", P3, [], options={"dice": 2}))


def test_setup_pages_through_each_players_objects():
    table = Table(start=False)
    assert table.report()["showing"] == "Ada"
    assert table.tap("P3").report()["showing"] == "Cy"
    assert table.dial(1).report()["showing"] == "Ada"
    assert table.dial(-1).report()["showing"] == "Cy"
    r = table.tap("NO").report()
    assert r["phase"] == "setup" and r["extras"]["Ada"] == 0


def test_yes_starts_play_with_the_first_player():
    r = Table().report()
    assert r["phase"] == "turn" and r["current"] == "Ada" and r["turn"] == 1
    r = Table(options={"first_player": "Cy"}).report()
    assert r["current"] == "Cy"
    with pytest.raises(ScenarioError, match="options.first_player: must be one of the players"):
        load_scenario(scenario("hold-everything", P3, [], options={"first_player": "Zed"}))


# ---- the die and the pawns ----

def test_own_button_rolls_the_die_after_a_short_animation():
    table = Table().tap("P1")
    press = table.t - 1.0
    r = table.report(end=press + 0.5)
    assert r["phase"] == "rolling" and r["die"] is None and r["rolls"] == 0
    r = table.report(end=press + 0.61)
    assert r["phase"] == "colour" and 1 <= r["die"] <= 6 and r["rolls"] == 1
    assert r["pawns"] == {"Ada": r["die"], "Ben": 0, "Cy": 0}
    assert r["choice"] == "stop"              # an unknown card: the dial starts at the first


def test_the_roll_plays_the_roll_sound_and_ticks_four_faces():
    state = GAME.step(GAME.new_game(tuple(P3), {}, 1), Judge(0.5, "yes"))[0]
    state, effects = GAME.step(state, PlayerPress(1.0, 0))
    assert effects == (Sound("roll"),) and GAME.next_timer(state) == pytest.approx(1.15)
    faces = []
    while state.phase == "rolling":
        state, _ = GAME.step(state, Tick(GAME.next_timer(state)))
        faces.append(state.roll_frame)
    assert state.phase == "colour" and len(faces) == 4
    assert GAME.next_timer(state) is None


def test_another_players_button_does_not_roll():
    r = Table().tap("P2").report()
    assert r["phase"] == "turn" and r["rolls"] == 0 and r["dropper"] == "Ben"
    r = Table().tap("P2").tap("P2").report()
    assert r["dropper"] is None


def test_rolls_are_seeded_and_cannot_be_rerolled_by_undo():
    table = Table().turn("gift")
    first = table.report()
    second = Table().turn("gift").report()
    assert first["die"] == second["die"] and first["pawns"] == second["pawns"]
    r = table.undo().roll().report()
    assert r["die"] == first["die"] and r["phase"] == "colour"


# ---- the field cards ----

def test_stop_card_skips_that_players_next_turn():
    table = Table().turn("stop")
    r = table.report()
    assert r["card"] == "stop" and r["skips"] == ["Ada"] and r["current"] == "Ben"
    r = table.turn("gift").turn("gift").report()
    assert r["current"] == "Ben" and r["skips"] == [] and "Ada skips this turn" in r["last"]


def test_dice_card_rolls_again_in_the_same_turn():
    table = Table().turn("dice")
    r = table.report()
    assert r["phase"] == "turn" and r["current"] == "Ada" and r["turn"] == 1
    first = r["die"]
    r = table.roll().report()
    assert r["rolls"] == 2 and r["pawns"]["Ada"] == (first + r["die"]) % 15
    r = table.card("gift").report()
    assert r["current"] == "Ben" and r["turn"] == 2


def test_start_card_picks_a_random_fellow_player():
    partners = set()
    for seed in range(12):
        r = Table(seed=seed).turn("start").report()
        assert r["exchange_with"] in ("Ben", "Cy") and r["current"] == "Ben"
        assert f"start: swap with {r['exchange_with']}" in r["last"]
        partners.add(r["exchange_with"])
    assert partners == {"Ben", "Cy"}


def test_gift_card_goes_to_the_left_neighbour():
    table = Table().turn("gift")
    assert "gift: 1 object to Ben" in table.report()["last"]
    r = table.turn("gift").turn("gift").report()
    assert "gift: 1 object to Ada" in r["last"] and r["current"] == "Ada"


def test_stack_card_shows_the_top_card_and_it_leaves_the_game_if_held():
    table = Table().turn("stack")
    r = table.report()
    assert r["phase"] == "stack" and r["drawn"] in r["objects"] and r["stack"] == 14
    r = table.tap("YES").report()
    assert r["removed"] == [r["drawn"]] and r["face_up"] == [] and r["stack"] == 14
    assert r["current"] == "Ben" and f"{r['drawn']} leaves the game" in r["last"]


def test_stack_card_not_held_goes_face_up():
    r = Table().turn("stack").tap("NO").report()
    assert r["face_up"] == [r["drawn"]] and r["removed"] == [] and r["stack"] == 14
    assert f"Ada gets the {r['drawn']}" in r["last"]
    assert r["extras"]["Ada"] == 0 and r["current"] == "Ben"   # this NO was not a drop


def test_an_empty_stack_is_reshuffled_from_the_face_up_cards():
    table = Table(players=["Ada", "Ben"], options={"objects": SIX})
    assert table.report()["warning"] == "too few: 6 of 10 objects"
    seen = []
    for k in range(6):
        table.turn("stack")
        seen.append(table.report()["drawn"])
        table.tap("YES" if k == 0 else "NO")
    r = table.report()
    assert sorted(seen) == sorted(SIX)                          # each card drawn once
    assert r["removed"] == [seen[0]] and r["face_up"] == [] and r["stack"] == 5
    assert "stack reshuffled" in r["last"]
    table.turn("stack")
    assert table.report()["drawn"] in seen[1:]


def test_nothing_to_draw_when_every_card_has_left_the_game():
    state = GAME.new_game(("Ada", "Ben"), {}, 1)
    state = replace(state, phase="colour", die=2, choice=CARDS.index("stack"), stack=(), face_up=(),
                    removed=state.objects)
    state, _ = GAME.step(state, Judge(1.0, "yes"))
    assert state.phase == "turn" and state.current == 1 and "no cards left" in state.last[-1]


def test_pawns_already_on_the_card_receive_an_object():
    state = GAME.new_game(tuple(P3), {}, 1)
    state = replace(state, phase="rolling", roll_due=2.0, roll_frame=4)
    die, _ = roll_die(state.rng)
    state = replace(state, pawns=((4 - die) % 15, 4, 4))
    state, _ = GAME.step(state, Tick(2.0))
    assert state.pawns[0] == 4 and state.mates == (1, 2)
    state, _ = GAME.step(state, Dial(2.1, CARDS.index("gift")))
    state, _ = GAME.step(state, Judge(2.5, "yes"))
    assert state.last[0] == "give 1 to Ben or Cy" and "gift: 1 object to Ben" in state.last


def test_a_card_seen_before_is_offered_first():
    state = GAME.new_game(tuple(P3), {}, 1)
    die, _ = roll_die(state.rng)
    field = tuple("gift" if i == die else None for i in range(15))
    state = replace(state, phase="rolling", roll_due=2.0, roll_frame=4, field=field)
    state, _ = GAME.step(state, Tick(2.0))
    assert CARDS[state.choice] == "gift"


# ---- drops ----

def test_no_is_a_drop_by_the_current_player_at_most_four_per_turn():
    table = Table()
    for k in range(1, 5):
        r = table.tap("NO").report()
        assert r["extras"]["Ada"] == k and r["extras_this_turn"]["Ada"] == k
    r = table.tap("NO").report()
    assert r["extras"]["Ada"] == 4 and "4/4" in r["last_drop"]
    r = table.turn("gift").tap("P1").tap("NO").report()
    assert r["extras"]["Ada"] == 5 and r["extras_this_turn"] == {"Ada": 1, "Ben": 0, "Cy": 0}


def test_a_fellow_players_drop_needs_their_button_then_no():
    r = Table().tap("P3").tap("NO").report()
    assert r["extras"] == {"Ada": 0, "Ben": 0, "Cy": 1} and r["dropper"] is None
    r = Table().tap("P3").tap("YES").report()
    assert r["extras"]["Cy"] == 0 and r["dropper"] is None


def test_a_picked_player_is_let_go_after_five_seconds():
    table = Table().tap("P3")
    picked = table.t - 1.0
    assert table.report(end=picked + 4.9)["dropper"] == "Cy"
    assert table.report(end=picked + 5.0)["dropper"] is None
    table.t = picked + 5.5
    r = table.tap("NO").report()
    assert r["extras"] == {"Ada": 1, "Ben": 0, "Cy": 0}


def test_drops_while_the_card_or_the_stack_question_is_open():
    table = Table().roll().tap("NO")
    r = table.report()
    assert r["phase"] == "colour" and r["extras"]["Ada"] == 1
    r = table.card("stack").tap("P1").tap("NO").report()
    assert r["phase"] == "stack" and r["extras"]["Ada"] == 2 and r["face_up"] == []


# ---- the end ----

def test_holding_your_button_two_seconds_wins():
    table = Table().turn("gift").tap("P1", hold=2.2)
    r = table.report()
    assert r["over"] is True and r["phase"] == "over" and r["winners"] == ["Ada"]
    after = table.tap("P2").tap("NO").report()
    assert after["winners"] == ["Ada"] and after["extras"] == r["extras"] and after["rolls"] == r["rolls"]


def test_a_short_press_or_a_hold_during_setup_does_not_win():
    assert Table().tap("P2").report()["over"] is False
    assert Table(start=False).tap("P2", hold=2.2).report()["over"] is False


def test_the_menu_can_claim_the_win_for_the_next_button_pressed():
    table = Table().roll().tap("MENU").tap("YES")     # MENU > Someone has won (the first entry)
    assert table.report()["claiming"] is True
    r = table.tap("P3").report()
    assert r["over"] and r["winners"] == ["Cy"] and r["claiming"] is False
    r = Table().tap("MENU").tap("YES").tap("NO").tap("P1").report()
    assert r["over"] is False and r["claiming"] is False and r["rolls"] == 1   # P1 rolled again
    assert r["extras"]["Ada"] == 0                       # that NO cancelled; it was no drop
    assert "claim" in GAME.menu_disabled(GAME.new_game(tuple(P3), {}, 1))      # greyed in setup


# ---- undo ----

def test_undo_takes_back_the_card_colour():
    table = Table().roll()
    before = table.report()
    r = table.card("stop").undo().report()
    assert r["phase"] == "colour" and r["skips"] == [] and r["current"] == "Ada"
    assert r["die"] == before["die"] and r["pawns"] == before["pawns"]


def test_undo_takes_back_a_drop():
    r = Table().tap("NO").tap("NO").undo().report()
    assert r["extras"]["Ada"] == 1


# ---- the die's fairness ----

def chi_square(counts: list[int]) -> float:
    expected = sum(counts) / len(counts)
    return sum((c - expected) ** 2 / expected for c in counts)


CRITICAL_5DF_P001 = 20.515


def count_faces(die, rolls: int = 60_000, seed: int = 2026) -> list[int]:
    counts = [0] * 6
    state = rand.seed_state(seed, 3)
    for _ in range(rolls):
        face, state = die(state)
        counts[face - 1] += 1
    return counts


def test_the_die_is_fair_over_sixty_thousand_seeded_rolls():
    counts = count_faces(roll_die)
    assert sum(counts) == 60_000 and min(counts) > 0
    assert chi_square(counts) < CRITICAL_5DF_P001


def test_the_same_check_rejects_a_biased_die():
    def loaded(state: int) -> tuple[int, int]:
        face, state = roll_die(state)
        if face == 1:                      # one roll in 24 turns a one into a six
            extra, state = rand.below(state, 4)
            face = 6 if extra == 0 else face
        return face, state
    assert chi_square(count_faces(loaded)) > CRITICAL_5DF_P001


# ---- the menu and the screens ----

def test_the_menu_shows_the_card_stack():
    card = GAME.menu_card(GAME.new_game(tuple(P3), {}, 1), "stack")
    assert card == ("Card stack", ("face down: 15", "face up: 0", "out of game: 0", "last drawn: -"))
    assert ("stack", "Card stack") in GAME.menu_items(GAME.new_game(tuple(P3), {}, 1))


def test_every_phase_draws_inside_the_screen_with_eight_long_names(text_boxes):
    players = tuple(f"Player{i}longname" for i in range(1, 9))
    engine = Engine(GAME, players, {}, 3)
    base = engine.table.game
    variants = [
        base, replace(base, warning="only 12 objects: rulebook wants 40"),
        replace(base, phase="turn", last=("give 1 to Player2longname or Player3longname",
                                          "gift: give 1 object to Player2longname", "x skips")),
        replace(base, phase="turn", dropper=7), replace(base, phase="turn", again=True, last_drop="a: +1 (2/4)"),
        replace(base, phase="rolling", roll_frame=2),
        replace(base, phase="colour", die=6, mates=(1, 2, 3, 4, 5, 6, 7), choice=4),
        replace(base, phase="colour", die=1, choice=3, dropper=2),
        replace(base, phase="stack", drawn="plastic plate"), replace(base, phase="stack", drawn="x", dropper=1),
        replace(base, phase="over", winner=7), replace(base, phase="turn", claiming=True),
    ]
    frames = set()
    for index, state in enumerate(variants):
        engine.table = replace(engine.table, game=state)
        image = render(engine)
        assert image.getbbox() is not None
        frames.add(image.tobytes())
        for text, (x0, y0, x1, y1) in text_boxes:
            assert x0 >= 0 and y0 >= 0 and x1 <= 128 and y1 <= 64, f"variant {index}: {text!r}"
        text_boxes.clear()
    assert len(frames) == len(variants)


def test_a_hold_in_the_colour_phase_still_wins_directly():
    state = replace(GAME.new_game(tuple(P3), {}, 1), phase="colour", die=3)
    state, _ = GAME.step(state, PlayerHold(5.0, 2))
    assert GAME.is_over(state) and GAME.report(state)["winners"] == [2]


def test_letting_go_of_a_picked_dropper_is_no_undo_step():
    r = Table().tap("NO").tap("P2").tap("YES").undo().report()   # drop, pick Ben, let go, undo
    assert r["extras"]["Ada"] == 0 and r["dropper"] is None     # the drop was undone


def test_drawn_stays_the_last_card_drawn_after_the_next_roll():
    table = Table().turn("stack").tap("YES")
    drawn = table.report()["drawn"]
    assert drawn is not None
    assert table.roll().report()["drawn"] == drawn


def test_the_start_card_cannot_be_declared_another_colour():
    state = replace(GAME.new_game(("Ada", "Ben", "Cy"), {}, 1), phase="colour", choice=CARDS.index("start"))
    assert state.pawns[state.current] == 0
    state, _ = GAME.step(state, Dial(1.0, 1))
    assert CARDS[state.choice] == "start"
