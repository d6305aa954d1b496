"""What the OLED shows over the game, in the board view (core/snapshot.py `screen`): the menu
with its cursor and greyed entries, a text card whole, a question waiting for its second YES,
the QR screens (never a link: the host's token and the Wi-Fi password are the OLED's alone) and
the power-off countdown. Driven by the box's own buttons (edges into the
engine, as the loop feeds them)."""
from __future__ import annotations

import json

from pi_companion.core.events import Edge, HostCommand, Turn
from pi_companion.core.snapshot import table_view
from pi_companion.games import registry

PLAYERS = ("Ada", "Ben", "Cy")


def engine(game="hold-everything"):
    e = registry.new_engine(game, PLAYERS, {}, 3)
    e.advance(0.0)
    return e


def tap(e, button, t, hold=0.1):
    e.feed(Edge(t, button, True))
    e.feed(Edge(t + hold, button, False))
    e.advance(t + hold + 0.05)


def test_the_menu_shows_every_entry_its_cursor_and_what_is_greyed():
    e = engine()
    tap(e, "MENU", 1.0)
    m = table_view(e)["moment"]
    assert m["kind"] == "menu" and m["items"][0] == {"label": "Someone has won", "selected": True,
                                                     "enabled": False}     # greyed during the deal
    assert [i["label"] for i in m["items"]][-1] == "Show on TV / phone"
    e.feed(Turn(2.0, 1))
    assert [i["selected"] for i in table_view(e)["moment"]["items"]][:2] == [False, True]


def test_a_text_card_is_shown_whole_and_a_question_says_how_to_answer():
    e = engine()
    e.feed(HostCommand(1.0, "menu", name="stack"))
    m = table_view(e)["moment"]
    assert m["kind"] == "card" and m["title"] == "Card stack" and m["lines"][0].startswith("face down: ")
    e.feed(HostCommand(2.0, "no"))                      # the phone's NO leaves the card, judging nothing
    assert e.menu is None and table_view(e)["moment"]["kind"] == "text"
    tap(e, "MENU", 3.0)
    for t in (3.5, 3.6, 3.7, 3.8):                      # down to New game, then YES once
        e.feed(Turn(t, 1))
    while e.menu.selected != "new":
        e.feed(Turn(4.0, 1))
    tap(e, "YES", 5.0)
    m = table_view(e)["moment"]
    assert m["big"] == "New game?" and "YES again" in m["ask"]


def test_the_qr_screens_carry_no_link_and_the_countdown_is_said():
    e = engine()
    e.feed(HostCommand(0.5, "yes"))
    tap(e, "MENU", 1.0)
    while e.menu.selected != "web":
        e.feed(Turn(1.5, 1))
    tap(e, "YES", 2.0)
    while e.menu.selected != "web:host":
        e.feed(Turn(2.5, 1))
    tap(e, "YES", 3.0)
    view = table_view(e)
    assert view["moment"]["qr"] == "host" and "scan" in view["moment"]["small"]
    assert "http" not in json.dumps(view) and "#t=" not in json.dumps(view)
    tap(e, "NO", 4.0)
    e.feed(Edge(5.0, "MENU", True))
    e.advance(6.5)
    assert table_view(e)["moment"]["big"].startswith("Powering off in ")
    e.feed(Edge(6.6, "MENU", False))
    e.advance(7.0)
    assert not table_view(e)["moment"]["big"].startswith("Powering off")


def test_a_picked_player_and_the_discard_pick_are_said_as_the_oled_says_them():
    e = engine("hold-your-breath")
    e.feed(HostCommand(1.0, "press", 2))                 # Cy picked for a card
    assert table_view(e)["moment"]["small"] == "Cy: NO Panic \u00b7 YES Calm \u00b7 hold YES Shark"
    e.feed(HostCommand(2.0, "menu", name="pick"))
    assert table_view(e)["moment"]["small"].startswith("discard card ")
    e = engine("hold-everything")
    e.feed(HostCommand(0.5, "yes"))
    other = next(i for i, p in enumerate(PLAYERS) if p != e.report()["current"])
    e.feed(HostCommand(1.0, "press", other))             # not their turn: picked as the dropper
    m = table_view(e)["moment"]
    assert m["big"] == f"{PLAYERS[other]} dropped?" and m["small"].startswith("NO: drop")
