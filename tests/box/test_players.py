"""The players are set on the box (MENU > Players) and from the host's remote (`players`).

Both are logged inputs like a press: the live box on MockFactory pins with its real game log
in a real directory; the log is folded as a resume would, and a second box resumes it.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from helpers import boxes
from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.core.engine import Engine, fold_records
from pi_companion.core.events import Edge, HostCommand, Turn
from pi_companion.core.records import header_seats
from pi_companion.core.table import names_problem
from pi_companion.gamelog import GameLog
from pi_companion.games import registry
from pi_companion.hub import CommandError, parse_command
from pi_companion.hw.pinmap import load_pinmap
from pi_companion.ui.screens import render

FOUR = ("Red", "Blue", "Green", "Yellow")


def make_box(factory, state_dir, players=FOUR, game="grab-bag", pinmap="4players"):
    return boxes.make_box(factory, state_dir,
                          config=Config(game=game, players=players, seed=5, sound=False, pinmap=pinmap),
                          display="dummy")


class Hands:
    """Inputs as the pins deliver them (each stamped a little after the one before)."""

    def __init__(self, box):
        self.box = box
        self.t = box.now()

    def feed(self, *events):
        for event in events:
            self.box.queue.put(Wake(event))
        self.box.pump()

    def tap(self, button):
        self.t += 0.2
        self.feed(Edge(self.t, button, True), Edge(self.t + 0.05, button, False))

    def turn(self, delta):
        self.t += 0.2
        self.feed(Turn(self.t, delta))


def fold(path):
    header, records = GameLog(path).load() if path.is_dir() else _load_file(path)
    engine = Engine(registry.get(header["game"]), tuple(header["players"]), header["options"], header["seed"],
                    seats=header_seats(header))
    count, why, _ = fold_records(engine, records)
    assert why is None, why
    return header, engine


def _load_file(path):
    from pi_companion.gamelog import open_log
    with open_log(path) as reader:
        return reader.header, list(reader.records())


def lamps(factory, n=8, pinmap="4players"):
    pins = load_pinmap(pinmap)
    return frozenset(i for i in range(n) if f"LED{i + 1}" in pins and factory.pin(pins[f"LED{i + 1}"]).state)


def test_menu_players_sets_the_count_with_the_dial_and_names_then_a_new_game_that_resumes(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path)
    try:
        hands = Hands(box)
        hands.tap("P2")                                    # a buzz in the first game
        hands.tap("MENU")
        hands.turn(-2)                                     # the one before Show on TV: Players
        assert box.engine.menu.selected == "players"
        hands.tap("YES")
        assert [k for k, _ in box.engine.menu.items] == ["players:2", "players:3", "players:4"]
        assert box.engine.menu.selected == "players:4"     # the cursor starts at the table's count
        hands.turn(-1)
        hands.tap("YES")                                   # 3 players: now whose names
        labels = dict(box.engine.menu.items)
        assert labels == {"names:3:keep": "Red, Blue, Green", "names:3:numbers": "P1, P2, P3"}
        hands.turn(1)
        hands.tap("YES")                                   # asks again: a new game ends this one
        assert box.engine.menu.confirm == "names:3:numbers" and box.engine.players == FOUR
        hands.tap("YES")
        assert box.engine.menu is None
        assert box.engine.players == box.config.players == ("P1", "P2", "P3")
        assert box.engine.notice == "New game: 3 players"  # said on screen
        assert box.engine.game.phase == "searching" and box.engine.report()["last_buzz"] is None
        assert lamps(mock_factory) == box.engine.lit()     # the fourth lamp is dark
        assert 3 not in lamps(mock_factory)
        hands.tap("P3")                                    # the new game plays on
    finally:
        box.close()
    # The first game's log (now in history) holds the menu inputs: it folds to its own players.
    (old,) = sorted((tmp_path / "history").glob("*.log"))
    header, engine = fold(old)
    assert header["players"] == list(FOUR) and engine.players == FOUR
    assert engine.notice == "New game: 3 players"
    # The new game's log: its header has the new players; a resume reaches the same table.
    header, engine = fold(tmp_path)
    assert header["players"] == ["P1", "P2", "P3"] and engine.report()["last_buzz"]["winner"] == "P3"
    again = make_box(mock_factory, tmp_path)               # the power came back: same players
    try:
        assert again.engine.players == again.config.players == ("P1", "P2", "P3")
        assert again.engine.report()["last_buzz"]["winner"] == "P3"
    finally:
        again.close()


@pytest.mark.parametrize("game, counts", [("all-wound-up", (2, 3, 4)), ("hands-up", tuple(range(2, 9)))])
def test_menu_players_offers_the_counts_the_game_takes_on_a_box_with_eight_buttons(mock_factory, tmp_path,
                                                                                   game, counts):
    """MENU > Players counts within the game's range, not the box's buttons: eight buttons and
    All Wound Up (2 to 4) offer 2, 3, 4; Hands Up! (2 to 8) all eight."""
    box = make_box(mock_factory, tmp_path, players=FOUR[:2], game=game, pinmap="8players")
    try:
        hands = Hands(box)
        hands.tap("MENU")
        hands.turn(-2)
        assert box.engine.menu.selected == "players"
        hands.tap("YES")
        assert [k for k, _ in box.engine.menu.items] == [f"players:{n}" for n in counts]
        assert box.engine.menu.selected == "players:2"     # the table's count
    finally:
        box.close()


def test_the_hosts_players_command_is_logged_and_starts_a_new_game_with_them(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path, game="hands-up", pinmap="8players")
    try:
        cmd = parse_command({"cmd": "players", "names": [" Ada", "Ben", "Cy", "Dee", "Eve", "Fay"]}, FOUR)
        box.put_host_command(cmd)
        box.pump()
        assert box.engine.players == box.config.players == ("Ada", "Ben", "Cy", "Dee", "Eve", "Fay")
        assert box.engine.notice == "New game: 6 players"
        assert lamps(mock_factory, pinmap="8players") == box.engine.lit()
    finally:
        box.close()
    (old,) = sorted((tmp_path / "history").glob("*.log"))
    header, records = _load_file(old)
    (logged,) = [r for r in records if "host" in r]          # logged like a press
    assert logged["host"] == "players"
    assert logged["names"] == ["Ada", "Ben", "Cy", "Dee", "Eve", "Fay"]
    assert fold(old)[1].notice == "New game: 6 players"
    assert fold(tmp_path)[0]["players"] == ["Ada", "Ben", "Cy", "Dee", "Eve", "Fay"]


def test_a_box_with_four_buttons_refuses_six_players_and_its_log_says_why(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path, game="hands-up")
    try:
        box.put_host_command(parse_command({"cmd": "players", "names": list("ABCDEF")}, FOUR))
        box.pump()
        assert box.engine.players == FOUR
        assert box.engine.notice == "Players refused: the box has 4 player buttons"
        box.engine.notice = ""
        hands = Hands(box)
        hands.tap("MENU")
        hands.turn(-2)
        hands.tap("YES")                                   # Hands Up! takes 8: this box, 4
        assert [k for k, _ in box.engine.menu.items] == ["players:2", "players:3", "players:4"]
    finally:
        box.close()
    header, engine = fold(tmp_path)                        # the header says so: the fold agrees
    assert header["seats"] == 4 and engine.players == FOUR
    assert engine.menu is not None and engine.menu.selected == "players:4"


@pytest.mark.parametrize("names, why", [
    (["Ada", "Ada"], "same name"),
    (["Ada", "B\x1b[2Jen"], "control or invisible characters"),
    (["Ada", "B\u202een"], "control or invisible characters"),      # a bidi override too
    (["Ada", "x" * 17], "1 to 16 characters"),
    (["Ada", ""], "must not be empty"),
    ("Ada,Ben", "list of names"),
])
def test_the_hub_refuses_bad_names_with_the_rename_rules(names, why):
    with pytest.raises(CommandError, match=why):
        parse_command({"cmd": "players", "names": names}, FOUR)
    with pytest.raises(CommandError, match="1 to 16 characters"):
        parse_command({"cmd": "rename", "player": 0, "name": "x" * 17}, FOUR)


def test_the_table_refuses_a_count_the_game_cannot_take_and_keeps_the_game(mock_factory, tmp_path):
    box = make_box(mock_factory, tmp_path)
    try:
        hands = Hands(box)
        hands.tap("P2")
        before = box.engine.report()
        six = json.dumps(["A", "B", "C", "D", "E", "F"])
        hands.feed(HostCommand(hands.t + 0.1, "players", -1, "", six))
        assert box.engine.notice.startswith("Players refused: Grab Bag takes 2 to 4 players")
        assert box.engine.report() == before and box.engine.players == FOUR
        hands.feed(HostCommand(hands.t + 0.2, "players", -1, "", "not json"))
        assert box.engine.notice.startswith("Players refused") and box.engine.players == FOUR
    finally:
        box.close()
    assert not list((tmp_path / "history").glob("*.log"))     # no new game was started
    assert fold(tmp_path)[1].report() == before | {"shutdown_requested": False}


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=20), st.lists(st.one_of(st.text(max_size=20), st.integers()), max_size=10)))
def test_any_players_message_is_a_command_the_table_takes_or_one_clear_refusal(names):
    try:
        cmd = parse_command({"cmd": "players", "names": names}, FOUR)
    except CommandError as err:
        assert str(err) and "\n" not in str(err)
        return
    engine = registry.new_engine(registry.get("hands-up"), FOUR, {}, 1)
    effects = engine.feed(HostCommand(1.0, cmd.command, cmd.player, cmd.name, cmd.options))
    asked = [e for e in effects if getattr(e, "name", "") == "players"]
    if engine.notice.startswith("Players refused"):
        assert not asked
    else:
        assert [json.loads(e.arg) for e in asked] == [json.loads(cmd.options)]
        assert names_problem(json.loads(asked[0].arg)) is None
    render(engine)
