"""The button test screen: any input is shown while held and lights its LED; nothing reaches the game."""
from __future__ import annotations

from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, HallLevel, Turn
from pi_companion.games import registry


def open_test(engine):
    engine.feed(Edge(1.0, "MENU", True))
    engine.feed(Edge(1.05, "MENU", False))
    keys = [k for k, _ in engine.menu.items]
    engine.menu = engine.menu.move(keys.index("test"))
    engine.feed(Edge(2.0, "YES", True))
    engine.feed(Edge(2.05, "YES", False))
    assert engine.testing


def test_button_test_shows_inputs_and_lights_leds_without_playing():
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    open_test(engine)
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
    engine.feed(Edge(0.5, "MENU", True))
    engine.feed(Edge(0.55, "MENU", False))
    keys = [k for k, _ in engine.menu.items]
    engine.menu = engine.menu.move(keys.index("rules"))
    engine.feed(Edge(0.6, "YES", True))
    engine.feed(Edge(0.65, "YES", False))
    card = engine.menu.card
    assert len(card) > 5 and engine.menu.top == 0
    for i in range(10):
        engine.feed(Turn(0.7 + i * 0.01, 1))
    assert engine.menu.top == len(card) - 5          # stops at the last line
    engine.feed(Turn(0.9, -1))
    assert engine.menu.top == len(card) - 6


def test_new_game_from_the_menu_starts_its_timers_from_now():
    engine = Engine(registry.get("hands-up"), ("Ada", "Ben"), {"beat_ms": 2000}, 1)
    engine.feed(Edge(100.0, "MENU", True))          # the beats ran meanwhile
    engine.feed(Edge(100.05, "MENU", False))
    keys = [k for k, _ in engine.menu.items]
    engine.menu = engine.menu.move(keys.index("new"))
    engine.feed(Edge(100.1, "YES", True))
    engine.feed(Edge(100.15, "YES", False))
    engine.advance(101.0)
    assert engine.report()["flips"] == 0 and engine.report()["hands"] == {"Ada": 30, "Ben": 30}
    engine.advance(102.2)
    assert engine.report()["flips"] == 1
