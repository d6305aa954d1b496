"""The on-box menu: entries never move, the ones that end a game ask twice, game over says how to play again."""
from __future__ import annotations

from dataclasses import replace

from pi_companion.core.engine import Engine
from pi_companion.core.events import Edge, Request, Turn
from pi_companion.games import registry
from pi_companion.gallery import choose
from pi_companion.ui.screens import render


def tap(engine: Engine, button: str, t: float) -> list:
    engine.feed(Edge(t, button, True))
    return engine.feed(Edge(t + 0.05, button, False))


def keys_of_menu(engine: Engine, t: float) -> list[str]:
    tap(engine, "MENU", t)
    assert engine.menu is not None
    keys = [k for k, _ in engine.menu.items]
    tap(engine, "MENU", t + 0.2)
    return keys


def hands_up_to_the_end() -> tuple[Engine, list[str]]:
    """Two players, 2 cards: mid-game menu keys, then the game played out (both hands empty)."""
    engine = Engine(registry.get("hands-up"), ("Ada", "Ben"), {"mode": "quick", "cards": 2, "beat_ms": 1000}, 1)
    during = keys_of_menu(engine, 0.1)
    engine.advance(5.0)
    assert engine.report()["over"]
    return engine, during


def test_entries_keep_their_places_when_the_game_is_over():
    engine, during = hands_up_to_the_end()
    assert keys_of_menu(engine, 6.0) == during
    tap(engine, "MENU", 7.0)
    assert "pause" in engine.menu.disabled
    pause_row = engine.menu.items.index(("pause", "Pause beats"))
    assert engine.menu.cursor == pause_row
    tap(engine, "YES", 7.2)                       # greyed: nothing happens, the menu stays
    assert engine.menu is not None and engine.menu.cursor == pause_row


def test_greyed_entries_are_drawn_differently():
    engine, _ = hands_up_to_the_end()
    tap(engine, "MENU", 6.0)
    greyed = render(engine).tobytes()
    engine.menu = replace(engine.menu, disabled=frozenset())
    assert render(engine).tobytes() != greyed


def test_the_same_keys_at_game_over_cannot_shut_the_box_down():
    engine, during = hands_up_to_the_end()
    tap(engine, "MENU", 6.0)
    for i in range(4):                                 # MENU ] ] ] ] YES, as in the play-test
        engine.feed(Turn(6.1 + i * 0.01, 1))
    effects = tap(engine, "YES", 6.5)
    assert engine.menu.selected == "switch" and engine.menu.confirm == "switch"
    assert not any(isinstance(e, Request) for e in effects)
    tap(engine, "NO", 6.7)                             # NO: back to the list, nothing done
    assert engine.menu is not None and engine.menu.confirm == "" and engine.menu.selected == "switch"


def hold(engine: Engine, button: str, t: float, s: float = 1.2) -> list:
    engine.feed(Edge(t, button, True))
    effects = engine.advance(t + s)
    return effects + engine.feed(Edge(t + s + 0.05, button, False))


def test_shut_down_is_far_from_change_game_and_only_a_held_yes_powers_off(text_boxes):
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    tap(engine, "MENU", 1.0)
    keys = [k for k, _ in engine.menu.items]
    assert keys.index("shutdown") - keys.index("switch") >= 3
    for i in range(keys.index("shutdown")):
        engine.feed(Turn(1.1 + i * 0.01, 1))
    assert engine.menu.selected == "shutdown"
    assert tap(engine, "YES", 1.5) == [] and engine.menu.confirm == "shutdown"
    render(engine)
    assert "hold YES: off" in [text for text, _ in text_boxes]
    assert tap(engine, "YES", 1.7) == [] and tap(engine, "YES", 1.9) == []    # short YESes: nothing
    assert engine.menu is not None and not engine.shutdown_requested
    assert Request("shutdown") in hold(engine, "YES", 2.5)
    assert engine.shutdown_requested and engine.menu is None
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    tap(engine, "MENU", 1.0)
    assert Request("shutdown") not in hold(engine, "YES", 1.5)   # held YES on another entry
    assert engine.menu is not None and not engine.shutdown_requested
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 1)
    choose(engine, "switch", 2.0)                      # choose() gives both YES presses
    assert engine.menu.items[0][0].startswith("switch:")


def test_game_over_says_how_to_play_again_and_yes_twice_starts_a_new_game(text_boxes):
    engine = Engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {"cards": 1}, 1)
    engine.feed(Edge(1.0, "P2", True))
    engine.advance(1.1)
    tap(engine, "YES", 1.5)
    assert engine.report()["over"]
    render(engine)
    assert "YES: play again" in [text for text, _ in text_boxes]
    tap(engine, "YES", 2.0)
    assert engine.report()["over"] and engine.menu.confirm == "new"     # one YES is not enough
    tap(engine, "NO", 2.2)
    assert engine.menu is None and engine.report()["over"]
    tap(engine, "YES", 3.0)
    effects = tap(engine, "YES", 3.2)
    report = engine.report()
    assert Request("new") in effects and not report["over"] and report["players"] == ["Ada", "Ben", "Cy"]
    assert report["scores"] == {"Ada": 0, "Ben": 0, "Cy": 0}
