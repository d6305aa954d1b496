"""A finished game is in history/ at its game over, not only once the next game starts: the real
box (loop thread, game log on disk, mock pins: pi_companion.web.live) played to the end. The
copy goes away when an undo takes the game out of its game over, comes back with the same
number when it ends again (its time in the name is the new end's), and the next game moves the log over it under that name. A copy the
disk refuses is one journal line; the game plays on and reaches history/ with the next game."""
from __future__ import annotations

import errno
import logging

from pi_companion.core.events import HostCommand
from pi_companion.gamelog import GameLog, history_files
from pi_companion.web.history import history
from pi_companion.web.live import live_box
from pi_companion.webshots import judged


def play_to_the_end(live):
    box = live.box
    while not box.engine.rules.is_over(box.engine.game):
        seekers = sorted(box.engine.rules.buzzers(box.engine.game))
        live.buzz([f"P{seekers[0] + 1}"])
        judged(live)


def settled(live):
    """Everything the loop handed the writer is done (the copy included)."""
    live.until(lambda: live.box.queue.empty())
    assert live.box.store.flush()


def listed(live, names, timeout=5.0):
    """history/ holds `names` (the loop tells the writer at the end of the input's turn, a
    moment after the engine's state a test can see changed)."""
    folder = live.state / "history"
    live.until(lambda: [p.name[:len(n)] for p, n in zip(history_files(folder), names)] == names
               and len(history_files(folder)) == len(names), timeout)
    settled(live)


def next_game(live):
    """The host's new game, once its log is started (the loop installs the engine just before
    it hands the writer the new header: the "new" record, then the header)."""
    before = live.box.store.seq
    live.new_game()
    live.until(lambda: live.box.store.seq >= before + 2)
    settled(live)


def test_a_finished_game_is_in_history_at_game_over(tmp_path):
    state = tmp_path / "state"
    with live_box(state, "grab-bag", {"cards": 3}, web=False) as live:
        play_to_the_end(live)
        listed(live, ["game-000001"])
        files = history_files(state / "history")
        games, totals = history(state)
        assert len(games) == 1 and games[0]["over"] and games[0]["file"] == files[0].name
        assert sum(t["buzzes"] for t in totals.values()) == 3
        name = files[0].name
        live.box.put_host_command(HostCommand(0.0, "undo"))            # out of the game over
        live.until(lambda: not live.box.engine.rules.is_over(live.box.engine.game))
        listed(live, [])
        judged(live)                                                   # and over again: the same
        listed(live, [name[:len("game-000001")]])                       # number (its time is the new end's)
        name = history_files(state / "history")[0].name
        log_now = (state / "current.log").read_bytes()
        next_game(live)
        files = history_files(state / "history")
        assert [p.name for p in files] == [name]                       # the same game, once
        assert files[0].read_bytes().startswith(log_now)               # (and the "new" that ended it)
        play_to_the_end(live)                                          # the next one: number 2
        listed(live, ["game-000001", "game-000002"])
        assert len(history(state)[0]) == 2


def test_a_copy_the_disk_refuses_loses_nothing(tmp_path, monkeypatch, caplog):
    state = tmp_path / "state"
    real = GameLog._atomic

    def refuse(self, path, data, mode):
        if path.parent.name == "history":
            raise OSError(errno.EIO, "Input/output error")
        return real(self, path, data, mode)
    monkeypatch.setattr(GameLog, "_atomic", refuse)
    with caplog.at_level(logging.WARNING), live_box(state, "grab-bag", {"cards": 3}, web=False) as live:
        play_to_the_end(live)
        live.until(lambda: any("not in history/ yet" in r.getMessage() for r in caplog.records))
        settled(live)
        assert history_files(state / "history") == []
        assert sum("not in history/ yet (disk error)" in r.getMessage() for r in caplog.records) == 1
        log_now = (state / "current.log").read_bytes()
        next_game(live)
        files = history_files(state / "history")
        assert len(files) == 1 and files[0].read_bytes().startswith(log_now), sorted(str(p) for p in state.rglob("*"))
        assert history(state)[0][0]["over"]


def test_a_restart_keeps_the_finished_games_copy(tmp_path):
    """At start the box removes a copy that undo of New game left in history/ (a power cut
    between its rename and its unlink): the newest history file whose bytes all begin
    current.log. The finished game's own copy is such a prefix too, and must stay listed."""
    state = tmp_path / "state"
    with live_box(state, "grab-bag", {"cards": 3}, web=False) as live:
        play_to_the_end(live)
        listed(live, ["game-000001"])
        name = history_files(state / "history")[0].name
    with live_box(state, "grab-bag", {"cards": 3}, web=False) as live:   # the box starts again
        assert live.box.engine.rules.is_over(live.box.engine.game)
        assert [p.name for p in history_files(state / "history")] == [name]
        assert history(state)[0][0]["file"] == name
