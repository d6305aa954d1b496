"""Removing a finished game from /history: the host only (the token, checked by the daemon's hub),
through the real `pi-companion web` and the real box (pi_companion.web.live); the game's log
moves to removed/ in the state directory (restorable by moving it back), never deleted at once;
the game just played (still the current log) is refused; a name that is not one plain history
file name is refused before anything is touched (property test on the parser)."""
from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from urllib.error import HTTPError

import pytest
from hypothesis import given, strategies as st

from pi_companion.gamelog import REMOVED_KEEP, GameLog, history_files
from pi_companion.hub import CommandError, history_name
from pi_companion.web.live import live_box
from pi_companion.webshots import judged


def command(base, body, token):
    req = urllib.request.Request(base + "/api/command", method="POST", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "X-Host-Token": token})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except HTTPError as err:
        return err.code, json.load(err)


def play_to_the_end(live):
    box = live.box
    while not box.engine.rules.is_over(box.engine.game):
        live.buzz([f"P{min(box.engine.rules.buzzers(box.engine.game)) + 1}"])
        judged(live)


def page(base):
    return urllib.request.urlopen(base + "/history", timeout=10).read().decode()


def test_the_host_removes_a_finished_game_into_removed(tmp_path):
    state = tmp_path / "state"
    with live_box(state, "grab-bag", {"cards": 2}) as live:
        play_to_the_end(live)
        before = live.box.store.seq
        live.new_game()
        live.until(lambda: live.box.store.seq >= before + 2 and live.box.store.flush())
        play_to_the_end(live)                       # the second game: over, still current.log
        folder = state / "history"
        live.until(lambda: len(history_files(folder)) == 2)
        first, second = (p.name for p in history_files(folder))
        assert first in page(live.base) and second in page(live.base)
        token = live.hub.token
        assert command(live.base, {"cmd": "forget", "game": first}, "AAAAAAAAAAAA")[0] == 403
        for bad in ("../current.log", "host-token", ".game.log", "a/b.log", first + "\n", 7):
            status, body = command(live.base, {"cmd": "forget", "game": bad}, token)
            assert status == 400 and "name of a finished game" in body["error"], bad
        status, body = command(live.base, {"cmd": "forget", "game": second}, token)
        assert status == 400 and "just played" in body["error"]
        status, body = command(live.base, {"cmd": "forget", "game": "game-000099-20200101-000000.log"}, token)
        assert status == 400 and "no such game" in body["error"]
        assert [p.name for p in history_files(folder)] == [first, second]      # nothing touched
        status, body = command(live.base, {"cmd": "forget", "game": first}, token)
        assert status == 200 and body["ok"], body
        assert [p.name for p in history_files(folder)] == [second]
        assert (state / "removed" / first).is_file()
        text = page(live.base)
        assert first not in text and second in text
        assert (state / "current.log").is_file() and (state / "host-token").is_file()


def test_removed_keeps_the_newest_and_never_overwrites(tmp_path):
    log = GameLog(tmp_path)
    (tmp_path / "history").mkdir()
    for i in range(REMOVED_KEEP + 3):
        (tmp_path / "history" / "game-000001-x.log").write_text(f"{i}\n")
        assert log.forget("game-000001-x.log") is None
    kept = sorted((tmp_path / "removed").glob("*.log"))
    assert len(kept) == REMOVED_KEEP
    assert {p.read_text() for p in kept} == {f"{i}\n" for i in range(3, REMOVED_KEEP + 3)}


def test_a_refused_move_loses_nothing(tmp_path, monkeypatch):
    import errno
    import os
    log = GameLog(tmp_path)
    (tmp_path / "history").mkdir()
    game = tmp_path / "history" / "game-000001-x.log"
    game.write_text("kept\n")

    def refuse(src, dst):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(os, "replace", refuse)
    why = log.forget(game.name)
    assert why is not None and "read-only" in why and "\n" not in why
    assert game.read_text() == "kept\n"


@given(st.one_of(st.text(max_size=140), st.integers(), st.none(), st.lists(st.text(max_size=5), max_size=2),
                 st.from_regex(r"[A-Za-z0-9./_\\ \n-]{0,12}\.log\n?", fullmatch=True)))     # names near the rule
def test_any_game_name_is_refused_or_one_plain_log_file(value):
    try:
        name = history_name(value)
    except CommandError as err:
        assert "\n" not in str(err)
        return
    base = Path("/state/history")
    assert (base / name).parent == base and (base / name).name == name
    assert name.endswith(".log") and name.count(".") == 1 and not name.startswith(("-", "_"))
    assert name.isascii() and name.isprintable()


@pytest.mark.parametrize("name", ["game-000042-20261201-213000.log", "grab-bag.log", "2026-12-01_2130.log"])
def test_history_names(name):
    assert history_name(name) == name
