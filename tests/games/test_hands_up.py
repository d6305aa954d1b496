"""Hands Up! rules from the rulebook and the replay contract: through the engine, the pure game and the screens."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from helpers.common import replay, run_cli, scenario, tap
from helpers.boxes import make_box
from pi_companion.core.engine import Engine
from pi_companion.core.events import Buzz, BuzzOpened, Edge, Judge, Sound, Tick
from pi_companion.games.hands_up import GAME, HandsUp, deal, share
from pi_companion.replay import ScenarioError, load_scenario
from pi_companion.ui import canvas
from pi_companion.ui.screens import render

P3 = ["Ada", "Ben", "Cy"]
P8 = ["Ada", "Benjamin", "Cy", "Dolores", "Eve", "Fritz", "Gus", "Hildegard"]
SCENARIOS = Path(__file__).resolve().parents[2] / "docs" / "scenarios"


def play(events: list[dict[str, Any]], players: list[str] = P3, **extra: Any) -> dict[str, Any]:
    return replay(scenario("hands-up", players, events, **extra))


def long_press(button: str, t: float) -> list[dict[str, Any]]:
    return [{"t": t, "press": button}, {"t": round(t + 1.2, 6), "release": button}]


def total(r: dict[str, Any]) -> int:
    return sum(r["hands"].values()) + sum(r["face_up"].values()) + sum(r["set_aside"].values())


# ---- deal and beats ----

def test_defaults_deal_sixty_cards_and_wait_for_the_first_beat():
    r = play([])
    assert r["hands"] == {"Ada": 20, "Ben": 20, "Cy": 20} and r["cards"] == 60
    assert r["face_up"] == r["set_aside"] == {"Ada": 0, "Ben": 0, "Cy": 0}
    assert r["phase"] == "flipping" and r["flips"] == 0 and r["mode"] == "classic"
    assert r["beat_ms"] == 2000 and r["over"] is False and r["winners"] == [] and r["last_buzz"] is None


@pytest.mark.parametrize("n", range(2, 9))
def test_deal_goes_one_card_at_a_time_from_the_first_player(n):
    for cards in range(n, 4 * n + 1):
        dealt = deal(cards, n)
        assert sum(dealt) == cards
        assert dealt == tuple(cards // n + (1 if i < cards % n else 0) for i in range(n))
    r = play([], players=P8[:n], options={"cards": 6 * n + n - 1})
    assert list(r["hands"].values()) == [7] * (n - 1) + [6]


def test_first_beat_comes_beat_ms_after_the_start_and_flips_one_card_each():
    assert play([], end=1.999)["flips"] == 0
    r = play([], end=2.0)
    assert r["flips"] == 1 and r["hands"] == {"Ada": 19, "Ben": 19, "Cy": 19}
    assert r["face_up"] == {"Ada": 1, "Ben": 1, "Cy": 1}
    r = play([], options={"beat_ms": 300}, end=3.0)
    assert r["flips"] == 10 and r["hands"]["Ada"] == 10


def test_flips_count_only_beats_at_which_a_card_was_flipped():
    r = play([], players=["Ada", "Ben"], options={"cards": 3, "beat_ms": 1000}, end=5.5)
    assert r["hands"] == {"Ada": 0, "Ben": 0} and r["face_up"] == {"Ada": 2, "Ben": 1}
    assert r["flips"] == 2 and r["beats"] == 2 and r["phase"] == "flipping"   # then no card to flip


def test_a_grab_stops_the_beats_when_its_settle_window_opens():
    # the window opens at 3.95 and closes at 4.05: the beat due at 4.0 never comes
    r = play(tap("P2", 3.95), options={"settle_ms": 100}, end=20.0)
    assert r["phase"] == "judging" and r["flips"] == 1 and r["grabber"] == "Ben"
    assert r["last_buzz"]["winner"] == "Ben"


def test_every_player_may_grab_and_the_earliest_press_wins():
    events = [{"t": 2.5003, "press": "P3"}, {"t": 2.5, "press": "P1"}]
    r = play(events, options={"settle_ms": 5}, end=3.0)
    assert r["grabber"] == "Ada"
    assert r["last_buzz"]["order"] == [{"player": "Ada", "after_ms": 0.0}, {"player": "Cy", "after_ms": 0.3}]


def test_next_beat_is_beat_ms_after_the_judgement():
    events = tap("P1", 2.5) + tap("YES", 4.92)     # judged at the release, 5.0
    assert play(events, end=6.999)["flips"] == 1
    assert play(events, end=7.0)["flips"] == 2


def test_judgements_while_flipping_are_ignored():
    r = play(tap("YES", 2.5) + tap("NO", 3.0) + long_press("YES", 3.5), end=5.0)
    assert r["judgements"] == [] and r["flips"] == 2 and r["phase"] == "flipping"


# ---- the three judgements ----

@pytest.mark.parametrize("n", range(2, 9))
def test_sharing_gives_floor_each_and_the_remainder_clockwise_from_the_left_neighbour(n):
    for grabber in range(n):
        for cards in range(0, 4 * n):
            got = share(cards, n, grabber)
            each, rest = divmod(cards, n - 1)
            lucky = {(grabber + k) % n for k in range(1, rest + 1)}
            assert got[grabber] == 0 and sum(got) == cards
            assert all(got[i] == each + (i in lucky) for i in range(n) if i != grabber)


def test_sharing_examples():
    assert share(7, 4, 1) == (2, 0, 3, 2)          # remainder 1: Cy, Ben's left neighbour
    assert share(5, 4, 3) == (2, 2, 1, 0)          # wraps: Ada then Ben
    assert share(3, 2, 0) == (0, 3)
    assert share(0, 8, 5) == (0,) * 8


@pytest.mark.parametrize("n", range(2, 9))
def test_theft_through_the_engine_for_every_table_size(n):
    players = P8[:n]
    grabber = n - 1                                 # the last player: the remainder wraps to Ada
    events = tap(f"P{n}", 3.5) + tap("YES", 4.0)
    r = play(events, players=players, options={"cards": 10 * n, "beat_ms": 1000})
    table = 3 * n
    each, rest = divmod(table, n - 1)
    expected = {p: 7 + (0 if i == grabber else each + (1 if i < rest else 0)) for i, p in enumerate(players)}
    assert r["hands"] == expected and set(r["face_up"].values()) == {0}
    assert total(r) == 10 * n


def test_false_alarm_grabber_takes_all_face_up_cards():
    r = play(tap("P2", 3.5) + tap("NO", 4.0), options={"cards": 30, "beat_ms": 1000})
    assert r["hands"] == {"Ada": 7, "Ben": 16, "Cy": 7}
    assert r["face_up"] == {"Ada": 0, "Ben": 0, "Cy": 0}
    assert r["judgements"][-1] == {"player": "Ben", "verdict": "false-alarm", "cards": 9,
                                   "received": {"Ben": 9}, "to": "hands"}


def test_police_shares_only_the_grabbers_cards_and_others_keep_theirs():
    r = play(tap("P2", 1.7) + long_press("YES", 2.0), players=["Ada", "Ben", "Cy", "Di"],
             options={"cards": 40, "beat_ms": 500}, end=3.4)
    assert r["hands"] == {"Ada": 8, "Ben": 7, "Cy": 8, "Di": 8}
    assert r["face_up"] == {"Ada": 3, "Ben": 0, "Cy": 3, "Di": 3}
    assert r["judgements"][-1]["verdict"] == "police" and r["flips"] == 3


def test_police_with_no_other_face_up_cards():
    # quick, 5 cards: Ada 3, Ben 2. After a theft by Ben and one more beat only Ada has a card up.
    events = tap("P2", 2.5) + tap("YES", 2.7) + tap("P1", 4.0) + long_press("YES", 4.2)
    r = play(events, players=["Ada", "Ben"], options={"mode": "quick", "cards": 5, "beat_ms": 1000})
    assert r["set_aside"] == {"Ada": 4, "Ben": 1} and r["face_up"] == {"Ada": 0, "Ben": 0}


def test_police_with_no_cards_at_all_moves_nothing_but_is_judged():
    events = tap("P1", 2.5) + tap("NO", 3.0) + tap("P2", 3.5) + long_press("YES", 3.7)
    r = play(events, options={"cards": 30, "beat_ms": 1000})
    assert r["hands"] == {"Ada": 14, "Ben": 8, "Cy": 8} and total(r) == 30
    assert r["judgements"][-1] == {"player": "Ben", "verdict": "police", "cards": 0, "received": {},
                                   "to": "hands"}


def test_quick_mode_puts_received_cards_on_the_set_aside_piles():
    r = play(tap("P2", 3.5) + tap("YES", 4.0), options={"mode": "quick", "cards": 30, "beat_ms": 1000})
    assert r["hands"] == {"Ada": 7, "Ben": 7, "Cy": 7}
    assert r["set_aside"] == {"Ada": 4, "Ben": 0, "Cy": 5} and total(r) == 30   # Cy: left of Ben


# ---- endings ----

def test_classic_single_winner_after_a_true_theft():
    # 3 cards, one each; after a beat Ben's right claim empties the table: Ben has nothing left
    r = play(tap("P2", 1.5) + tap("YES", 2.0), options={"cards": 3, "beat_ms": 1000}, end=9.0)
    assert r["over"] and r["phase"] == "over" and r["winners"] == ["Ben"]
    assert r["hands"] == {"Ada": 1, "Ben": 0, "Cy": 2}      # remainder to Cy, Ben's left neighbour
    assert r["flips"] == 1


def test_classic_simultaneous_winners_after_someone_elses_false_alarm():
    r = play(tap("P1", 2.5) + tap("NO", 3.0), options={"cards": 5, "beat_ms": 1000}, end=10.0)
    assert r["over"] and r["winners"] == ["Ben", "Cy"]
    assert r["hands"] == {"Ada": 5, "Ben": 0, "Cy": 0}


def test_classic_stops_beating_when_no_hand_has_a_card_to_flip():
    r = play([], options={"cards": 3, "beat_ms": 1000}, end=6.0)
    assert not r["over"] and r["flips"] == 1 and r["beats"] == 1     # the table waits for a grab
    engine = Engine(GAME, ("Ada", "Ben", "Cy"), {"cards": 3, "beat_ms": 1000}, 1)
    engine.advance(1.0)
    assert engine.next_deadline() is None                            # nothing left to time
    for event in [Edge(5.0, "P2", True), Edge(5.1, "P2", False), Edge(6.0, "NO", True),
                  Edge(6.1, "NO", False)]:                           # a false alarm: Ben takes 3
        engine.feed(event)
    assert engine.report()["over"] and engine.report()["winners"] == ["Ada", "Cy"]


def test_quick_ends_one_beat_after_the_last_hand_emptied():
    opts = {"mode": "quick", "cards": 4, "beat_ms": 1000}
    r = play([], players=["Ada", "Ben"], options=opts, end=2.999)
    assert r["hands"] == {"Ada": 0, "Ben": 0} and not r["over"]
    r = play([], players=["Ada", "Ben"], options=opts, end=3.0)
    assert r["over"] and r["winners"] == ["Ada", "Ben"] and r["flips"] == 2 and r["beats"] == 3


def test_quick_grab_in_the_last_beat_ends_at_its_judgement():
    events = tap("P1", 2.5) + tap("NO", 2.7)
    r = play(events, players=["Ada", "Ben"], options={"mode": "quick", "cards": 4, "beat_ms": 1000})
    assert r["over"] and r["winners"] == ["Ben"] and r["set_aside"] == {"Ada": 4, "Ben": 0}


def test_quick_grab_before_the_hands_run_out_does_not_end_it():
    events = tap("P1", 1.5) + tap("NO", 1.7)
    r = play(events, players=["Ada", "Ben"], options={"mode": "quick", "cards": 4, "beat_ms": 1000},
             end=3.7)
    assert not r["over"] and r["hands"] == {"Ada": 0, "Ben": 0} and r["set_aside"]["Ada"] == 2
    r = play(events, players=["Ada", "Ben"], options={"mode": "quick", "cards": 4, "beat_ms": 1000},
             end=3.8)
    assert r["over"] and r["winners"] == ["Ben"]


def test_nothing_happens_after_the_end():
    events = tap("P1", 2.5) + tap("NO", 3.0) + tap("P2", 4.0) + tap("YES", 4.5)
    r = play(events, options={"cards": 5, "beat_ms": 1000}, end=20.0)
    assert r["winners"] == ["Ben", "Cy"] and r["beats"] == 2 and len(r["judgements"]) == 1


# ---- undo ----

def test_undo_restores_the_grab_before_the_judgement_and_its_beats():
    events = tap("P3", 2.4) + tap("YES", 3.0) + long_press("NO", 3.5)
    r = play(events, players=["Ada", "Ben", "Cy", "Di"], options={"cards": 20, "beat_ms": 1000}, end=9.0)
    assert r["phase"] == "judging" and r["grabber"] == "Cy" and r["judgements"] == []
    # the theft's cards are back face up; the beat at 4.1 (before the NO was held 1 s) stays flipped
    assert r["hands"] == {"Ada": 2, "Ben": 2, "Cy": 2, "Di": 2} and r["flips"] == 3
    assert r["face_up"] == {"Ada": 3, "Ben": 3, "Cy": 3, "Di": 3}


def test_undo_after_flips_reached_the_cards_the_judgement_moved_is_refused():
    engine = Engine(GAME, ("Ada", "Ben", "Cy", "Di"), {"cards": 20, "beat_ms": 1000}, 1)
    for event in [Edge(2.4, "P3", True), Edge(2.5, "P3", False), Edge(3.0, "YES", True),
                  Edge(3.1, "YES", False)]:                    # 3 in each hand, Cy's theft
        engine.feed(event)
    engine.advance(10.0)                                        # 6 more beats: past the 3
    before = engine.report()
    assert before["flips"] == 8
    engine.feed(Edge(10.5, "NO", True))
    effects = engine.advance(11.6)
    assert engine.notice == "cannot undo past 6 flips" and Sound("wrong") in effects
    assert engine.report() == before and len(engine.undo_stack) == 1


def test_undo_label_names_the_verdict_and_the_grabber():
    engine = Engine(GAME, tuple(P3), {}, 1)
    for event in [Edge(2.5, "P2", True), Edge(2.6, "P2", False), Edge(3.0, "YES", True),
                  Edge(3.1, "YES", False), Edge(4.0, "NO", True)]:
        engine.feed(event)
    engine.advance(5.1)
    assert engine.notice == "Undone: theft for Ben"


# ---- manual mode ----

def test_manual_mode_has_no_beats_no_counts_and_keeps_the_judgement_history():
    events = tap("P3", 4.0) + tap("NO", 5.0) + tap("P1", 12.0) + long_press("YES", 13.0)
    r = play(events, options={"beat_ms": 0}, end=100.0)
    assert r["flips"] == 0 and r["beats"] == 0 and r["phase"] == "flipping" and not r["over"]
    assert r["hands"] is None and r["face_up"] is None and r["set_aside"] is None
    assert [(j["player"], j["verdict"]) for j in r["judgements"]] == [("Cy", "false-alarm"), ("Ada", "police")]
    r = play(tap("P2", 4.0), options={"beat_ms": 0}, end=100.0)
    assert r["phase"] == "judging" and r["last_buzz"]["winner"] == "Ben"


def test_manual_mode_undo():
    events = tap("P3", 4.0) + tap("NO", 5.0) + long_press("NO", 6.0)
    r = play(events, options={"beat_ms": 0})
    assert r["phase"] == "judging" and r["judgements"] == []


# ---- options, tempo, pause, sounds ----

@pytest.mark.parametrize("options, message", [
    ({"cards": 2}, "options.cards: must be an integer from 3 to 200"),
    ({"cards": 201}, "options.cards: must be an integer from 3 to 200"),
    ({"beat_ms": 299}, "options.beat_ms: must be 0 (manual mode) or an integer from 300 to 10000"),
    ({"beat_ms": 10001}, "options.beat_ms: must be 0 (manual mode) or an integer from 300 to 10000"),
    ({"beat_ms": 1.5}, "options.beat_ms: must be 0 (manual mode) or an integer from 300 to 10000"),
    ({"mode": "fast"}, "options.mode: must be one of classic, quick"),
    ({"colour": "red"}, "options.colour: unknown option"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(ScenarioError) as err:
        load_scenario(scenario("hands-up", P3, [], options=options))
    assert str(err.value).startswith(message)


def test_options_at_their_limits_are_accepted():
    for options in ({"cards": 3}, {"cards": 200}, {"beat_ms": 300}, {"beat_ms": 10000},
                    {"beat_ms": 0}, {"mode": "quick", "settle_ms": 0}):
        load_scenario(scenario("hands-up", P3, [], options=options))


def test_the_encoder_sets_the_tempo_clockwise_faster():
    r = play([{"t": 0.5, "turn": 1}], end=2.0)
    assert r["beat_ms"] == 1500 and r["flips"] == 1           # the first beat moved to 1.5 s
    r = play([{"t": 0.5, "turn": -1}, {"t": 0.6, "turn": -1}], end=2.99)
    assert r["beat_ms"] == 3000 and r["flips"] == 0
    r = play([{"t": 0.5 + i / 10, "turn": 1} for i in range(30)])
    assert r["beat_ms"] == 300


def test_pause_and_resume_from_the_menu():
    # MENU opens with "Pause beats" first; YES chooses it
    pause = tap("MENU", 2.5) + tap("YES", 2.8)
    r = play(pause, end=10.0)
    assert r["paused"] and r["flips"] == 1
    events = pause + tap("MENU", 10.0) + tap("YES", 10.3)
    r = play(events, end=12.3)
    assert not r["paused"] and r["flips"] == 1                  # resumed at 10.38: beat at 12.38
    r = play(events, end=12.4)
    assert r["flips"] == 2


def test_sounds_tick_on_each_beat_and_name_each_judgement():
    engine = Engine(GAME, tuple(P3), {"beat_ms": 1000}, 1)
    assert Sound("tick") in engine.advance(1.0) and Sound("tick") in engine.advance(2.0)
    for verdict_events, name in (([Edge(3.0, "YES", True), Edge(3.1, "YES", False)], "theft"),
                                 ([Edge(3.0, "NO", True), Edge(3.1, "NO", False)], "false-alarm"),
                                 ([Edge(3.0, "YES", True)], "police")):
        e = Engine(GAME, tuple(P3), {"beat_ms": 1000}, 1)
        e.feed(Edge(2.5, "P1", True))
        effects = e.advance(2.6)
        assert Sound("buzz:P1") in effects                  # Ada's own tune
        for event in verdict_events:
            effects = e.feed(event)
        effects += e.advance(4.05)
        assert Sound(name) in effects


def test_the_game_led_shows_the_grabber_while_judging():
    engine = Engine(GAME, tuple(P3), {"beat_ms": 1000}, 1)
    assert engine.lit() == {0, 1, 2}
    engine.feed(Edge(1.5, "P3", True))
    engine.advance(1.6)
    assert engine.lit() == {2}


# ---- the invariant, by property ----

ACTIONS = st.one_of(st.just(("beat",)), st.tuples(st.just("grab"), st.integers(0, 7)),
                    st.tuples(st.just("judge"), st.sampled_from(["yes", "no", "special"])),
                    st.just(("undo",)))


def check(state: HandsUp) -> None:
    counts = state.hands + state.face_up + state.set_aside
    assert min(counts) >= 0 and sum(counts) == state.cards
    report = GAME.report(state)
    assert report["over"] == (state.phase == "over") and bool(report["winners"]) == report["over"]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2, 8), extra=st.integers(0, 60), mode=st.sampled_from(["classic", "quick"]),
       actions=st.lists(ACTIONS, max_size=80))
def test_cards_are_never_lost_or_negative(n, extra, mode, actions):
    state = GAME.new_game(tuple(P8[:n]), {"mode": mode, "cards": n + extra, "beat_ms": 500}, 0)
    undo: list[HandsUp] = []
    clock = 0.0
    check(state)
    for action in actions:
        if action[0] == "beat" and GAME.next_timer(state) is not None:
            clock = GAME.next_timer(state)
            state, _ = GAME.step(state, Tick(clock))
        elif action[0] == "grab" and action[1] % n in GAME.buzzers(state):
            state, _ = GAME.step(state, BuzzOpened(clock))
            state, _ = GAME.step(state, Buzz(clock, action[1] % n))
        elif action[0] == "judge":
            clock += 0.1
            before = state
            state, _ = GAME.step(state, Judge(clock, action[1]))
            if state != before:
                undo.append(before)
        elif action[0] == "undo" and undo:
            state = undo.pop()
        check(state)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 8), presses=st.lists(
    st.tuples(st.sampled_from(["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "YES", "NO", "NO!", "YES!"]),
              st.floats(0.05, 3.0)), max_size=25))
def test_cards_are_never_lost_through_the_engine(n, presses):
    events, t = [], 0.0
    for button, gap in presses:
        t = round(t + gap, 3)
        if button[:1] == "P" and int(button[1:]) > n:
            continue
        events += long_press(button[:-1], t) if button.endswith("!") else tap(button, t)
        t += 1.3
    r = play(events, players=P8[:n], options={"cards": 4 * n + 1, "beat_ms": 700}, end=t + 5)
    assert total(r) == 4 * n + 1 and min(v for k in ("hands", "face_up", "set_aside") for v in r[k].values()) >= 0


# ---- the rules card and the screens ----

def test_rules_card_lines_fit_the_card():
    image = Image.new("1", (400, 20))
    draw = ImageDraw.Draw(image)
    lines = GAME.rules_card()
    assert any("diamond" in ln for ln in lines) and any("Police" in ln for ln in lines)
    for line in lines:
        left, _, right, _ = draw.textbbox((1, 0), line, font=canvas.font(9))
        assert right <= 127, line


class Shifted:
    """A drawing surface 64 px larger on every side: ink outside the 128x64 frame shows up."""

    def __init__(self, draw: ImageDraw.ImageDraw) -> None:
        self.inner = draw

    def _xy(self, xy: Any) -> Any:
        points = list(xy)
        if points and isinstance(points[0], (tuple, list)):
            return [(x + 64, y + 64) for x, y in points]
        return [v + 64 for v in points]

    def text(self, xy: Any, text: str, **kw: Any) -> None:
        self.inner.text(tuple(self._xy(xy)), text, **kw)

    def textbbox(self, xy: Any, text: str, **kw: Any) -> Any:
        return self.inner.textbbox(xy, text, **kw)

    def rectangle(self, xy: Any, **kw: Any) -> None:
        self.inner.rectangle(self._xy(xy), **kw)

    def line(self, xy: Any, **kw: Any) -> None:
        self.inner.line(self._xy(xy), **kw)

    def ellipse(self, xy: Any, **kw: Any) -> None:
        self.inner.ellipse(self._xy(xy), **kw)


def ink_inside(engine: Engine) -> bool:
    from pi_companion.ui import hands_up as screen
    image = Image.new("1", (256, 192))
    screen.draw(Shifted(ImageDraw.Draw(image)), engine)
    box = image.getbbox()
    return box is not None and box[0] >= 64 and box[1] >= 64 and box[2] <= 192 and box[3] <= 128


def session(n: int, mode: str) -> list[tuple[str, Engine]]:
    """Walk one game through every screen, keeping a copy of the engine at each."""
    import copy
    e = Engine(GAME, tuple(P8[:n]), {"mode": mode, "cards": 20 * n + 1, "beat_ms": 1000}, 1)
    shots = [("deal", copy.deepcopy(e))]
    e.advance(5.0)
    shots.append(("flipping", copy.deepcopy(e)))
    for verdict, button, t in (("theft", "YES", 5.5), ("false", "NO", 8.5), ("police", "YES!", 11.5)):
        e.feed(Edge(t, "P2", True))
        e.feed(Edge(t + 0.0004, "P1", True))
        e.advance(t + 0.1)
        e.feed(Edge(t + 0.1, "P2", False))
        e.feed(Edge(t + 0.1, "P1", False))
        shots.append(("grab", copy.deepcopy(e)))
        e.feed(Edge(t + 0.2, button[:3], True))
        e.feed(Edge(t + (1.3 if button.endswith("!") else 0.3), button[:3], False))
        shots.append((verdict, copy.deepcopy(e)))
        e.advance(t + 2.9)
    e.advance(400.0)                 # every hand flipped out: a false alarm now leaves winners
    for event in (Edge(400.1, "P1", True), Edge(400.2, "P1", False), Edge(400.3, "NO", True),
                  Edge(400.4, "NO", False)):
        e.feed(event)
    e.advance(410.0)
    shots.append(("end", copy.deepcopy(e)))
    return shots


@pytest.mark.parametrize("mode", ["classic", "quick"])
@pytest.mark.parametrize("n", range(2, 9))
def test_every_screen_stays_inside_the_frame(n, mode):
    for label, engine in session(n, mode):
        assert ink_inside(engine), f"{label} with {n} players ({mode}) runs off the edge"
        assert render(engine).getbbox() is not None


def test_screens_show_deal_grab_result_and_winners():
    shots = dict(session(3, "quick"))
    assert [e.game.phase for e in shots.values()] == ["flipping"] * 2 + ["judging"] + ["flipping"] * 3 + ["over"]
    assert [j.verdict for j in shots["end"].game.history] == ["yes", "no", "special"]
    assert shots["end"].game.phase == "over" and dict(session(3, "classic"))["end"].game.phase == "over"
    frames = {label: render(engine).tobytes() for label, engine in shots.items()}
    assert len(set(frames.values())) == len(frames)        # each screen looks different


def test_the_beat_mark_changes_on_every_beat():
    engine = Engine(GAME, tuple(P8), {"beat_ms": 500}, 1)
    engine.advance(1.0)
    frames = []
    for k in range(4):
        engine.advance(1.0 + 0.5 * k)
        frames.append(render(engine).crop((0, 0, 9, 9)).tobytes())
    assert all(a != b for a, b in zip(frames, frames[1:]))


@pytest.mark.parametrize("n", [2, 4])
def test_a_beat_changes_whole_panel_pages_only_where_the_counts_are(n):
    """The OLED is written in pages of 8 pixel rows: a beat redraws the beat mark (page 0) and
    the counts (pages 2-3 and 4-5), never the names' page 1, so each count is 2 pages tall."""
    from PIL import ImageChops
    engine = Engine(GAME, tuple(P8[:n]), {}, 1)
    engine.advance(2.0)
    for t in (4.0, 6.0, 8.0):
        before = render(engine)
        engine.advance(t)
        diff = ImageChops.difference(before, render(engine))
        assert diff.getbbox() is not None
        assert diff.crop((0, 8, 128, 16)).getbbox() is None      # page 1 untouched
        assert diff.crop((0, 0, 128, 8)).getbbox()[2] <= 8        # page 0: the beat mark only


def changed_panel_bytes(before: Image.Image, after: Image.Image) -> list[int]:
    """The panel bytes (page, column) that differ between two frames, as the OLED drivers see them."""
    from pi_companion.hw.ssd1306_dirty import page_bytes
    old, new = page_bytes(before, 8), page_bytes(after, 8)
    return [i for i, (a, b) in enumerate(zip(old, new)) if a != b]


def rounds_of_play() -> list[tuple[str, Image.Image]]:
    """Four players from the deal through three rounds (theft, false alarm, police), each
    grab with a runner-up: the screens the box shows, in order."""
    e = Engine(GAME, ("Ada", "Ben", "Cy", "Di"), {}, 1)
    shots = [("deal", render(e))]
    e.advance(2.0)
    shots.append(("first beat", render(e)))
    t = 2.0
    for k, (button, hold) in enumerate((("YES", 0.1), ("NO", 0.1), ("YES", 1.1))):
        for _ in range(5):
            t += 2.0
            e.advance(t)
        shots.append(("flipping", render(e)))
        t += 0.9
        e.feed(Edge(t, f"P{k + 2}", True))
        e.feed(Edge(t + 0.0006, "P1", True))
        e.advance(t + 0.1)
        e.feed(Edge(t + 0.1, f"P{k + 2}", False))
        e.feed(Edge(t + 0.1, "P1", False))
        assert e.game.phase == "judging" and e.game.grabber == k + 1
        grabber = e.players[k + 1]
        shots.append((f"grab {grabber}", render(e)))
        t += 3.0
        e.feed(Edge(t, button, True))
        e.feed(Edge(t + hold, button, False))
        assert e.game.history[-1].verdict == ("special" if hold > 1 else button.lower())
        shots.append((f"verdict {grabber}", render(e)))
        while render(e).tobytes() == shots[-1][1].tobytes():      # the result's time is up
            t = e.next_deadline()
            e.advance(t)
        shots.append(("flipping again", render(e)))
    return shots


def test_screen_changes_of_a_round_rewrite_under_half_the_panel():
    """The OLED's bus time is the bytes it is sent: the deal, flipping, grab and result screens
    share one layout, so each change of screen in a round rewrites at most 440 of the 1 024
    panel bytes (with a screen of its own each, 470-590), and the names stay in place."""
    shots = rounds_of_play()
    for (was, before), (now, after) in zip(shots, shots[1:]):
        changed = changed_panel_bytes(before, after)
        assert len(changed) <= 440, f"{was} -> {now}: {len(changed)} bytes"
        names_page = [i for i in changed if i < 128 and i >= 8]       # page 0 right of the beat mark
        assert not names_page, f"{was} -> {now} moves the names"
        if was.startswith("grab") and now.startswith("verdict"):   # the grabber's name stays put
            grabber = now.split()[1]
            start = canvas.WIDTH - canvas.text_width(grabber.upper(), 22)
            name_box = [i for i in changed if 256 <= i < 512 and i % 128 >= start]     # pages 2-3
            assert not name_box, f"the verdict rewrites {grabber}'s name"


def test_manual_screens_stay_inside_the_frame():
    e = Engine(GAME, tuple(P8), {"beat_ms": 0}, 1)
    assert ink_inside(e)
    e.feed(Edge(1.0, "P8", True))
    e.advance(1.1)
    assert ink_inside(e) and e.game.phase == "judging"
    e.feed(Edge(2.0, "NO", True))
    e.feed(Edge(2.1, "NO", False))
    assert ink_inside(e)
    e.advance(30.0)
    assert ink_inside(e)


# ---- the scenario docs ----

def scenario_files() -> list[Path]:
    return sorted(p for p in SCENARIOS.glob("hands-up-*.json") if not p.name.endswith(".expected.json"))


def test_there_are_scenario_docs():
    assert len(scenario_files()) >= 5


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.stem)
def test_scenario_doc_matches_its_expected_report(path):
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    report = replay(json.loads(path.read_text()))
    assert {k: report.get(k) for k in expected} == expected


def test_a_scenario_doc_through_the_cli():
    out = run_cli("replay", str(SCENARIOS / "hands-up-quick-ending.json"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["winners"] == ["Ben"]


def test_the_log_of_an_idle_box_stops_growing(mock_factory, tmp_path):
    """Every hand empty, cards face up: no beat is due, so no `advance` line is written while idle."""
    from pi_companion.box import Wake
    from pi_companion.config import Config
    config = Config(game="hands-up", players=("Ada", "Ben"), seed=1, sound=False,
                    games={"hands-up": {"cards": 4, "beat_ms": 300}})
    box = make_box(mock_factory, tmp_path, config=config)
    log = tmp_path / "current.log"
    try:
        lengths = []
        for _ in range(4):
            box.t0 -= 5.0                               # five more seconds of an idle table
            box.queue.put(Wake())
            box.pump()
            lengths.append(len(log.read_text().splitlines()))
        assert box.engine.report()["hands"] == {"Ada": 0, "Ben": 0}
        assert lengths[1] == lengths[2] == lengths[3]
    finally:
        box.close()


# ---- text never runs into other text ----

@pytest.fixture
def ink_boxes(monkeypatch):
    """(text, box) of every piece of text drawn: Pillow's box of the text as drawn (its ink,
    without the line's descender room)."""
    monkeypatch.setattr(canvas, "TEXT_CACHE", False)
    boxes: list[tuple[str, tuple[int, int, int, int]]] = []
    original = ImageDraw.ImageDraw.text

    def text(self, xy, text, fill=None, font=None, *args, **kwargs):
        boxes.append((text, self.textbbox(xy, text, font=font)))
        return original(self, xy, text, fill, font, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", text)
    return boxes


def apart(boxes: list[tuple[str, tuple[int, int, int, int]]]) -> None:
    """Every piece of text inside the frame, and no two pieces of text touching: a column of
    blank pixels between any two that share rows."""
    for text, (x0, y0, x1, y1) in boxes:
        assert x0 >= 0 and y0 >= 0 and x1 <= 128 and y1 <= 64, f"{text!r} runs off the frame"
    for i, (a, (ax0, ay0, ax1, ay1)) in enumerate(boxes):
        for b, (bx0, by0, bx1, by1) in boxes[i + 1:]:
            if ay0 < by1 and by0 < ay1:
                assert ax1 < bx0 or bx1 < ax0, f"{a!r} runs into {b!r}"


def grab_after_beats(players: tuple[str, ...], beats: int, grabber: int = 1, second: int = 0,
                     beat_ms: int = 1000) -> Engine:
    """`beats` beats of flips (seconds of manual play), then a grab by `grabber` with `second`
    pressing 12 ms later."""
    e = Engine(GAME, players, {"cards": 200, "beat_ms": beat_ms}, 1)
    e.advance(float(beats))
    t = beats + 0.5
    e.feed(Edge(t, f"P{grabber + 1}", True))
    e.feed(Edge(t + 0.012, f"P{second + 1}", True))
    e.advance(t + 0.1)
    e.feed(Edge(t + 0.1, f"P{grabber + 1}", False))
    e.feed(Edge(t + 0.1, f"P{second + 1}", False))
    assert e.game.phase == "judging" and e.game.grabber == grabber
    return e


@pytest.mark.parametrize("beat_ms", [1000, 0])
@pytest.mark.parametrize("second", ["Wilhelmina Grace", "Bartholomew-Jone", "WWWWWWWWWWWWWWWW"])
def test_a_long_named_runner_up_keeps_off_the_table_count(ink_boxes, second, beat_ms):
    # The grab's foot: the table count on the left (not in manual mode), the runner-up and
    # margin on the right. A runner-up named with the 16 characters the host may give ran off
    # the frame's left edge, over the table count.
    e = grab_after_beats(("Ada", second, "Cy"), beats=30, grabber=0, second=1, beat_ms=beat_ms)
    render(e)
    assert any(text.startswith("table ") for text, _ in ink_boxes) == (beat_ms > 0)
    foot = [text for text, _ in ink_boxes if text.endswith(" ms")]
    assert len(foot) == 1 and foot[0].endswith(" +12 ms")           # the margin stays whole
    apart(ink_boxes)


@pytest.mark.parametrize("beats", [9, 20])
def test_eight_players_each_receiving_two_digits_keep_them_apart(ink_boxes, beats):
    # Eight players, `beats` beats flipped (72 or 160 cards face up), then a theft: each of
    # the seven others receives 10 to 23 cards. Each "+NN" ran into its neighbour's.
    e = grab_after_beats(tuple(P8), beats)
    e.feed(Edge(beats + 1.0, "YES", True))
    e.feed(Edge(beats + 1.1, "YES", False))
    received = e.game.history[-1].received
    assert min(c for c in received if c) >= 10
    ink_boxes.clear()
    render(e)
    shown = sorted(int(text.lstrip("+")) for text, _ in ink_boxes if text.lstrip("+").isdigit())
    assert shown == sorted(c for c in received if c)                 # each receiver's count
    assert any(text.startswith("+") for text, _ in ink_boxes)        # marked as received
    apart(ink_boxes)


def test_eight_players_a_hand_of_three_digits_keeps_off_its_neighbours(ink_boxes):
    # Eight players, 160 cards face up, a false alarm: the grabber takes them all into hand.
    # Their three digits ran into the count on their left: Ada's 0 and Ben's 157 read "0157".
    e = grab_after_beats(tuple(P8), 20)
    e.feed(Edge(21.0, "NO", True))
    e.feed(Edge(21.1, "NO", False))
    e.advance(30.0)
    assert e.game.phase == "flipping" and e.game.hands[1] >= 100 and e.game.hands[0] == 0
    ink_boxes.clear()
    render(e)
    assert "0" in [text for text, _ in ink_boxes] and str(e.game.hands[1]) in [t for t, _ in ink_boxes]
    apart(ink_boxes)
