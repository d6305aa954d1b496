"""A slip on the menu never powers the box off: a scripted replay turns the encoder to every
entry (one detent too many after Change game among them) and presses YES twice; only YES held
on Shut down asks for the power-off."""
from __future__ import annotations

from pi_companion.core.events import Edge
from pi_companion.games import registry
from pi_companion.replay import load_scenario, run_scenario


def menu_keys() -> list[str]:
    """The entries MENU opens on in a fresh Grab Bag, in the order the encoder walks them."""
    engine = registry.new_engine(registry.get("grab-bag"), ("Ada", "Ben", "Cy"), {}, 3)
    engine.feed(Edge(1.0, "MENU", True))
    engine.feed(Edge(1.1, "MENU", False))
    return [k for k, _ in engine.menu.items]


def session(detents: int, *confirm: dict) -> dict:
    events: list[dict] = [{"t": 1.0, "press": "MENU"}, {"t": 1.1, "release": "MENU"}]
    events += [{"t": 1.5 + i * 0.1, "turn": 1} for i in range(detents)]
    events += [dict(e, t=e["t"] + detents * 0.1) for e in confirm]
    return run_scenario(load_scenario({"game": "grab-bag", "players": ["Ada", "Ben", "Cy"],
                                       "seed": 3, "events": events, "end": 30}))


TWO_YES = ({"t": 3.0, "press": "YES"}, {"t": 3.1, "release": "YES"},
           {"t": 3.4, "press": "YES"}, {"t": 3.5, "release": "YES"})


def test_one_detent_too_many_on_change_game_and_yes_yes_does_not_shut_down():
    keys = menu_keys()
    slip = keys.index("switch") + 1
    assert not session(slip, *TWO_YES)["shutdown_requested"]


def test_yes_yes_on_any_entry_never_shuts_down_and_a_held_yes_on_shut_down_does():
    keys = menu_keys()
    for detents in range(len(keys) + 1):
        assert not session(detents, *TWO_YES)["shutdown_requested"], detents
    held = ({"t": 3.0, "press": "YES"}, {"t": 3.0 + 1.2, "release": "YES"})
    assert session(keys.index("shutdown"), *held)["shutdown_requested"]
    assert not session(keys.index("switch"), *held)["shutdown_requested"]
