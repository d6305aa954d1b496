"""core/table.py on its own (no clock, no controls, no settle window): what each action does to
the table. A button action and the host's command for it enter at this same layer and leave the
table the same; undo restores the table as it was before the judgement."""
from __future__ import annotations

from pi_companion.core.events import Buzz, HostCommand, Request
from pi_companion.core.names import NAME_MAX
from pi_companion.core.table import Tabletop
from pi_companion.games import registry

PLAYERS = ("Ada", "Ben", "Cy")


def tabletop() -> Tabletop:
    table = Tabletop(registry.get("grab-bag"), PLAYERS, {}, 7)
    table.clock = 0.0
    return table


def buzzed(winner: int = 1) -> Tabletop:
    table = tabletop()
    table._step(Buzz(1.0, winner), judging=True)
    table._take_effects()
    return table


def test_a_short_yes_and_the_hosts_yes_leave_the_same_table():
    by_button, by_host = buzzed(), buzzed()
    by_button._short("YES", 2.0)
    by_host._host(HostCommand(2.0, "yes"))
    assert by_button.table == by_host.table != buzzed().table
    assert by_button.undo_stack == by_host.undo_stack and len(by_host.undo_stack) == 1


def test_a_long_no_and_the_hosts_undo_restore_the_table_before_the_judgement():
    before = buzzed()
    by_button, by_host = buzzed(), buzzed()
    for table in (by_button, by_host):
        table._short("NO", 2.0)
        assert table.table.game != before.table.game
    by_button._held("NO", 3.0)
    by_host._host(HostCommand(3.0, "undo"))
    assert by_button.table.game == by_host.table.game == before.table.game
    assert by_button.notice == by_host.notice == "Undone: NO for Ben" and by_host.undo_stack == []


def test_a_switch_the_players_cannot_play_is_refused_and_keeps_the_undo_steps():
    table = Tabletop(registry.get("hands-up"), ("Ada", "Ben", "Cy", "Di", "Eve"), {}, 7,
                     catalogue=registry.catalogue)
    table.clock = 0.0
    table._step(Buzz(1.0, 1), judging=True)
    table._short("YES", 2.0)
    before, steps = table.table, list(table.undo_stack)
    assert steps
    table._take_effects()
    table._host(HostCommand(3.0, "switch", name="grab-bag"))         # Grab Bag: 2 to 4 players
    assert table.notice == "2 to 4 players"
    assert table.table == before and table.undo_stack == steps and not table._take_effects()
    table._host(HostCommand(4.0, "switch", name="hold-everything"))   # 2 to 8: goes ahead
    assert Request("switch", "hold-everything", "") in table._take_effects()


def test_a_rename_reaches_the_game_and_every_state_undo_can_restore():
    table = buzzed()
    table._short("YES", 2.0)
    table._host(HostCommand(3.0, "rename", player=1, name="Bea"))
    assert table.players == ("Ada", "Bea", "Cy") and Request("rename") in table._take_effects()
    assert table.table.game.players == table.players
    assert all(t.game.players == table.players for t, _ in table.undo_stack)
    for name in ("x" * (NAME_MAX + 1), "Ada", "  "):
        table._host(HostCommand(4.0, "rename", player=2, name=name))
        assert table.notice == "Rename refused" and table.players[2] == "Cy"


def test_menu_then_dial_then_yes_chooses_and_a_long_menu_asks_to_shut_down():
    table = tabletop()
    table._short("MENU", 1.0)
    assert table.menu is not None
    keys = [k for k, _ in table.menu.items]
    for i in range(keys.index("close")):
        table._dial(1.1 + i * 0.01, 1)
    table._short("YES", 2.0)
    assert table.menu is None
    table._held("MENU", 3.0)
    assert table.shutdown_requested and Request("shutdown") in table._take_effects()
