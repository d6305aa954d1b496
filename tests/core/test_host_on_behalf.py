"""The host's `press` and `hold` (a player's button, on their behalf) through the engine, as the
box's queue hands it host commands: the same table as that player's own button for a press that
is no buzz (Hold Everything!'s roll and "who holds nothing?", All Wound Up's gate claim), and a
refusal in the table's notice for a press that would be a buzz; each record in the log's shape
and back; the hub's parser refuses a player not at the table in one line."""
from __future__ import annotations

import pytest

from pi_companion.core.events import Edge, HostCommand
from pi_companion.core.records import host_command, host_fields
from pi_companion.games import registry
from pi_companion.hub import CommandError, parse_command

PLAYERS = ("Ada", "Ben", "Cy")


def engine(game, seed=3):
    e = registry.new_engine(game, PLAYERS, {}, seed)
    e.advance(0.0)
    return e


def press_edges(e, button, t):
    e.feed(Edge(t, button, True))
    e.feed(Edge(t + 0.1, button, False))
    e.advance(t + 0.5)


def test_a_host_press_rolls_the_die_as_the_players_button_does():
    by_button, by_host = engine("hold-everything"), engine("hold-everything")
    for e in (by_button, by_host):
        e.feed(HostCommand(0.5, "yes"))                       # the deal seen: play
    first = by_button.players.index(by_button.report()["current"])
    press_edges(by_button, f"P{first + 1}", 1.0)
    by_host.feed(HostCommand(1.0, "press", first))
    by_host.advance(1.5)
    assert by_button.report()["phase"] == by_host.report()["phase"] == "rolling"
    assert by_button.game == by_host.game


def test_someone_has_won_is_finished_by_the_host_naming_the_player():
    e = engine("hold-everything")
    e.feed(HostCommand(0.5, "yes"))
    e.feed(HostCommand(1.0, "menu", name="claim"))
    assert e.report()["claiming"]
    e.feed(HostCommand(1.5, "press", 2))
    assert e.report()["over"] and e.report()["winners"] == ["Cy"]


def test_a_host_press_that_would_be_a_buzz_is_refused_and_changes_nothing():
    e = engine("grab-bag")
    before = e.game
    e.feed(HostCommand(1.0, "press", 1))
    e.advance(2.0)
    assert e.notice == "Ben's press is a buzz: not now"
    assert e.game == before and e.report()["last_buzz"] is None and e.window is None


def test_a_host_hold_claims_the_gate():
    e = engine("all-wound-up")
    e.feed(HostCommand(1.0, "hold", 1))
    assert e.report()["claim"] == "Ben"


@pytest.mark.parametrize("cmd", ["press", "hold"])
def test_the_record_names_the_player_and_reads_back(cmd):
    given = HostCommand(2.5, cmd, 2)
    assert host_fields(given) == {"player": 2}
    assert host_command(2.5, {"host": cmd, "player": 2}) == given


@pytest.mark.parametrize("player", [3, -1, True, "1", None, 1.0])
def test_the_hub_refuses_a_player_not_at_the_table_in_one_line(player):
    with pytest.raises(CommandError, match="^player must be 0 to 2$"):
        parse_command({"cmd": "press", "player": player}, PLAYERS)
    assert parse_command({"cmd": "hold", "player": 1}, PLAYERS) == HostCommand(0.0, "hold", 1)
