"""The button test screen: any input is shown while held and lights its LED; nothing reaches the game."""
from __future__ import annotations

from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, HallLevel, Sound, Turn
from pi_companion.gallery import choose
from pi_companion.games import registry


def test_button_test_shows_inputs_and_lights_leds_without_playing():
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    effects = choose(engine, "test")
    assert engine.testing and Sound("correct") in effects      # the piezo is tested too
    engine.feed(Edge(3.0, "P2", True))
    assert engine.held() == ["P2"] and engine.lit() == {1}
    engine.feed(Edge(3.2, "MENU", True))
    engine.feed(Edge(3.3, "MENU", False))       # MENU is shown, and does not close the test
    engine.feed(Edge(3.4, "P2", False))
    assert engine.testing and engine.held() == [] and engine.lit() == frozenset()
    engine.feed(Turn(4.0, 1))
    engine.feed(Turn(4.1, 1))
    engine.feed(HallLevel(4.2, "A", 1))
    assert engine.menu.dial == 2 and engine.hall.net == 1
    engine.feed(Edge(5.0, "NO", True))
    engine.feed(Edge(5.2, "NO", False))          # short NO: just shown
    assert engine.testing
    assert engine.report()["phase"] == "searching" and engine.report()["last_buzz"] is None
    engine.feed(Edge(6.0, "YES", True))
    engine.advance(7.1)                          # held 1 s: leave the test
    assert engine.menu is None and not engine.testing
    assert engine.report()["round"] == 1


def test_a_long_rules_card_scrolls_with_the_encoder():
    engine = Engine(registry.get("hands-up"), ("Ada", "Ben", "Cy"), {}, 1)
    choose(engine, "rules", 0.2)
    card = engine.menu.card
    assert len(card) > 5 and engine.menu.top == 0
    for i in range(10):
        engine.feed(Turn(1.0 + i * 0.01, 1))
    assert engine.menu.top == len(card) - 5          # stops at the last line
    engine.feed(Turn(1.2, -1))
    assert engine.menu.top == len(card) - 6


def test_new_game_from_the_menu_starts_its_timers_from_now():
    engine = Engine(registry.get("hands-up"), ("Ada", "Ben"), {"beat_ms": 2000}, 1)
    choose(engine, "new", 100.0)                    # the beats ran meanwhile
    engine.advance(101.0)
    assert engine.report()["flips"] == 0 and engine.report()["hands"] == {"Ada": 30, "Ben": 30}
    engine.advance(102.7)                          # the first beat, 2 s after New game (two YES)
    assert engine.report()["flips"] == 1


def test_a_game_timer_that_does_not_move_cannot_hang_the_engine():
    from dataclasses import dataclass

    from pi_companion.games.base import Game

    @dataclass(frozen=True)
    class Stuck:
        ticks: int = 0

    class StuckGame(Game):
        name = "stuck"

        def new_game(self, players, options, seed):
            return Stuck()

        def step(self, state, action):
            from pi_companion.core.events import Tick
            return (Stuck(state.ticks + 1) if isinstance(action, Tick) else state), ()

        def report(self, state):
            return {"over": False, "winners": [], "phase": "x", "ticks": state.ticks}

        def next_timer(self, state):
            return 1.0                      # a bug: never moves on

    engine = Engine(StuckGame(), ("A", "B"), {}, 1)
    engine.advance(5.0)
    engine.feed(Edge(6.0, "P1", True))
    assert engine.report()["ticks"] == 1


def test_two_buttons_bouncing_at_the_same_instant_have_one_deadline():
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    for button in ("P2", "P3"):                        # same edge times on two buttons
        engine.feed(Edge(1.0, button, True))
        engine.feed(Edge(1.001, button, False))
        engine.feed(Edge(1.002, button, True))
    assert engine.next_deadline() == 1.007             # both buttons settle at the same moment
    engine.advance(1.01)
    buzz = engine.report()["last_buzz"]                # an exact tie, broken by the seeded source
    assert buzz["winner"] in ("Ben", "Cy") and buzz["order"][1]["after_ms"] == 0.0
