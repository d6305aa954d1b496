"""Every log the box writes resumes: a box driven through random presses, dial turns, hall
edges, menu paths (Change game, New game, Shut down, the game's own entries) and host remote
commands, then cut off, comes back with the game it was playing - never "corrupt", never a
fresh game. (A six-player Hands Up! switched to All Wound Up once wrote a log that resume
rejected: "all-wound-up takes 2 to 4 players".)"""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from helpers.common import Clock
from helpers.boxes import virtual_box

from pi_companion.box import Wake
from pi_companion.config import Config
from pi_companion.core.engine import fold_records
from pi_companion.core.records import header_seats
from pi_companion.core.events import Edge, HallLevel, HostCommand, Turn
from pi_companion.gamelog import open_log
from pi_companion.games import registry
from pi_companion.hub import parse_command

NAMES = ("Ada", "Ben", "Cy", "Di", "Eve", "Fay", "Gus", "Hal")
GAMES = tuple(registry.available())


def tap(button, hold=0.08):
    return [("press", button, 0.0), ("release", button, hold)]


def menu_path(first, confirm, second):
    """MENU, `first` detents, YES (again, for an entry that asks twice), `second` detents, YES."""
    steps = tap("MENU") + [("turn", 1, 0.05)] * first + tap("YES")
    if confirm:
        steps += tap("YES")
    return steps + [("turn", 1, 0.05)] * second + tap("YES")


def host(command, name="", player=-1):
    return [("host", HostCommand(0.0, command, player, name), 0.0)]


def players_path(to_players, count, names):
    """MENU, `to_players` detents back to Players, YES, `count` detents (how many), YES,
    `names` detents (whose names), YES, YES (a new game ends this one: asked again)."""
    return (tap("MENU") + [("turn", -1, 0.05)] * to_players + tap("YES") + [("turn", count, 0.05)]
            + tap("YES") + [("turn", 1, 0.05)] * names + tap("YES") + tap("YES"))


def host_players(names):
    """The host remote's `players` command, as the hub hands it over."""
    return [("host", parse_command({"cmd": "players", "names": list(names)}, NAMES[:2]), 0.0)]


buttons = st.sampled_from(("YES", "NO", "MENU") + tuple(f"P{i}" for i in range(1, 9)))
steps = st.one_of(
    st.builds(tap, buttons, st.sampled_from((0.08, 1.2, 2.3))),
    st.builds(menu_path, st.integers(0, 10), st.booleans(), st.integers(0, 6)),
    st.builds(lambda d: [("turn", d, 0.05)], st.sampled_from((1, -1))),
    st.builds(lambda s, lv: [("hall", (s, lv), 0.02)], st.sampled_from("AB"), st.integers(0, 1)),
    st.builds(lambda s: [("wait", None, s)], st.sampled_from((0.5, 1.6, 3.0))),
    st.builds(host, st.sampled_from(("yes", "no", "undo", "new"))),
    st.builds(lambda g: host("switch", g), st.sampled_from(GAMES)),
    st.builds(lambda p, n: host("rename", n, p), st.integers(0, 7), st.sampled_from(("Zoe", "Ben", ""))),
    st.builds(players_path, st.integers(0, 3), st.sampled_from((-3, -1, 0, 1, 4)), st.integers(0, 2)),
    st.builds(host_players, st.lists(st.sampled_from(NAMES), min_size=1, max_size=9, unique=True)),
)
tables = st.integers(2, 8).flatmap(lambda n: st.tuples(
    st.just(n), st.sampled_from([g for g in GAMES if registry.get(g).min_players <= n <= registry.get(g).max_players])))


def config(n, game):
    return Config(game=game, players=NAMES[:n], seed=3, sound=False,
                  pinmap="8players" if n > 4 else "4players")


def play(box, n, script, ended=None):
    """Feed `script` to the box as the loop would (inputs on its queue, timers on wake-ups).
    `ended` (a list) gets the report and notice of each game an input ended (New game, Change
    game, Players), as it was at that moment."""
    for kind, what, dt in script:
        engine = box.engine
        kept = archived(box)
        Clock.now += dt
        if kind == "press" or kind == "release":
            if what.startswith("P") and int(what[1:]) > n:
                continue                              # no such button on this box
            box.queue.put(Wake(Edge(Clock.now, what, kind == "press")))
        elif kind == "turn":
            box.queue.put(Wake(Turn(Clock.now, what)))
        elif kind == "hall":
            box.queue.put(Wake(HallLevel(Clock.now, *what)))
        elif kind == "host":
            box.put_host_command(what)
        box.queue.put(Wake())                         # timers due by now fire
        box.pump()
        Clock.now += 0.01
        if ended is not None and box.engine is not engine:
            if archived(box) < kept:                  # an undo brought the game before back
                ended.pop()                           # from history/ (this one is dropped)
            else:
                ended.append((engine.report(), engine.notice))


def archived(box):
    """How many games history/ holds once the writer is done (undo of New game takes one out)."""
    if box.store is None:
        return 0
    box.store.wait()
    return len(list((box.store.dir / "history").glob("*.log")))


def check_resumes(tmp: Path, n: int, game: str, script: list) -> None:
    Clock.now = 0.0
    box = virtual_box(tmp, config=config(n, game))
    try:
        ended: list = []
        play(box, n, script, ended)
        box.store.wait()
        before = box.engine.report()
    finally:
        box.close()                                    # the last records are on disk; the power goes
    Clock.now += 30.0
    again = virtual_box(tmp, config=config(n, game))
    try:
        assert again.resumed, "the log was not resumed"
        assert not list(tmp.glob("corrupt-*")), "the log was moved aside as corrupt"
        assert again.engine.report() == {**before, "shutdown_requested": False}
    finally:
        again.close()
    # A game that MENU > Players, New game or a switch ended folds from its log in history to
    # what it was when it ended.
    # (The game still in current.log, if over, has its copy there too since game over: not ended.)
    mark = tmp / "finished"
    playing = mark.read_bytes().split(b"\n", 1)[0].decode() if mark.exists() else None
    finished = [p for p in sorted((tmp / "history").glob("*.log")) if p.name != playing]
    assert len(finished) == len(ended)
    for path, (report, notice) in zip(finished, ended):
        with open_log(path) as reader:
            header, records = reader.header, list(reader.records())
        # as the box folds a log (registry.new_engine: with the catalogue Change game offers)
        engine = registry.new_engine(header["game"], tuple(header["players"]), header["options"],
                                     header["seed"], seats=header_seats(header))
        assert fold_records(engine, records)[1] is None, path.name
        assert engine.report() == report, path.name
        # The notice it ended with ("New game: 3 players"), unless the box carried that over
        # from the game before (the box's own words on a new game: not in this game's log).
        assert engine.notice in (notice, ""), path.name


# Six players at Hands Up!, MENU > Change game (YES, YES) > All Wound Up: the evening.
SWITCH_TO_ALL_WOUND_UP = menu_path(4, True, 2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@example(table=(6, "hands-up"), script=[SWITCH_TO_ALL_WOUND_UP])
@example(table=(5, "hands-up"), script=[menu_path(4, True, 0)])          # to Grab Bag
@example(table=(8, "hold-everything"), script=[menu_path(5, True, 4)])   # to Hold Your Breath!
@example(table=(6, "hands-up"), script=[host("switch", "all-wound-up")])
@example(table=(4, "grab-bag"), script=[tap("P2"), players_path(2, -1, 1), tap("P3")])   # 3: P1, P2, P3
@example(table=(5, "hold-everything"), script=[players_path(2, 3, 2), tap("P3")])   # 8 from the short list
@example(table=(6, "hands-up"), script=[host_players(NAMES[:8]), tap("P8"), host_players(NAMES[:2])])
@example(table=(2, "grab-bag"), script=[host("new"), host("undo")])      # the game before comes back
@example(table=(2, "hold-everything"), script=[tap("YES", 0.08), tap("P1", 2.3)])   # over: copied
@example(table=(3, "grab-bag"), script=[host("new"), host("new"), tap("NO", 1.2), host("undo")])
# a refused rename, then a switch the players cannot play (refused in the log's own terms),
# then one they can: the game it ended folds to the notice it ended with (hypothesis found it)
@example(table=(5, "hands-up"), script=[host("rename", "Ben", 0), host("switch", "grab-bag"),
                                        host("switch", "hands-up")])
@given(table=tables, script=st.lists(steps, max_size=12))
def test_every_log_the_box_writes_resumes(tmp_path_factory, table, script):
    n, game = table
    check_resumes(tmp_path_factory.mktemp("state"), n, game, [s for step in script for s in step])


def test_the_change_game_menu_greys_a_game_the_players_cannot_play(tmp_path):
    """Six players: All Wound Up, Grab Bag and Hold Your Breath! are greyed, the title line says
    why, and YES on them keeps the game."""
    Clock.now = 0.0
    box = virtual_box(tmp_path, config=config(6, "hands-up"))
    try:
        play(box, 6, menu_path(4, True, 2))
        menu = box.engine.menu
        assert menu is not None and menu.selected == "switch:all-wound-up"
        assert menu.disabled == {"switch:all-wound-up", "switch:grab-bag", "switch:hold-your-breath"}
        assert menu.title == "2 to 4 players, not 6"
        assert box.engine.rules.name == "hands-up"
        play(box, 6, [("turn", 1, 0.05)])
        assert box.engine.menu.title == "MENU"               # Hold Everything! takes 2 to 8
    finally:
        box.close()
