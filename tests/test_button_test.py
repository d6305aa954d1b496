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
