"""Tonight's names outlive a restart: names set through the host's commands on the real daemon
are on its disk and in each new game's header, so after a SIGKILL and a restart MENU > Players
offers them, whether the box resumes its game or starts afresh from no log at all."""
from __future__ import annotations

import json
import signal

from helpers.daemons import ready
from helpers.hub_client import HubLines

from pi_companion.core.events import Edge, Turn
from pi_companion.gamelog import open_log
from pi_companion.games import registry
from pi_companion.web.live import until

CONFIG = '[box]\nplayers = ["Red", "Blue", "Green"]\nseed = 1\n[web]\nenabled = true\n'


def host(state):
    until(lambda: (state / "host-token").exists() and (state / "hub.sock").exists(), 10, "no hub")
    token = (state / "host-token").read_text().strip()
    lines = HubLines(state / "hub.sock", "host")
    lines.reply("hello")
    return lines, token


def players_menu_offers(state) -> list[str]:
    """The name sets MENU > Players offers for 3 players in the game current.log folds to."""
    with open_log(state / "current.log") as reader:
        engine = registry.engine_for(reader.header)
        for _ in reader.records():
            pass
    t = 1000.0
    for button in ("MENU",):
        engine.feed(Edge(t, button, True))
        engine.feed(Edge(t + 0.05, button, False))
    keys = [k for k, _ in engine.menu.items]
    for i in range(keys.index("players")):
        engine.feed(Turn(t + 0.1 + i * 0.01, 1))
    engine.feed(Edge(t + 1, "YES", True))
    engine.feed(Edge(t + 1.05, "YES", False))                  # the counts
    engine.feed(Edge(t + 2, "YES", True))
    engine.feed(Edge(t + 2.05, "YES", False))                  # 3 players: the names
    return [label for _, label in engine.menu.items]


def test_names_set_on_the_phone_are_offered_by_the_players_menu_after_a_restart(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    state = tmp_path / "state"
    with ready(tmp_path, {"RUNTIME_DIRECTORY": ""}, args=("--config", str(config))) as (daemon, _):
        lines, token = host(state)
        reply = lines.send({"cmd": "players", "names": ["Ada", "Ben", "Cy"], "token": token})
        assert reply["ok"] and reply["saved"], reply
        reply = lines.send({"cmd": "rename", "player": 2, "name": "Dee", "token": token})
        assert reply["ok"] and reply["saved"], reply
        reply = lines.send({"cmd": "players", "names": ["Red", "Blue", "Green"], "token": token})
        assert reply["ok"] and reply["saved"], reply
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
    (tmp_path / "notify.sock").unlink()
    assert json.loads((state / "names.json").read_text()) == ["Red", "Blue", "Green", "Ada", "Ben", "Dee", "Cy"]

    with ready(tmp_path, {"RUNTIME_DIRECTORY": ""}, args=("--config", str(config))) as (daemon, _):
        lines, token = host(state)
        reply = lines.send({"cmd": "new", "token": token})     # a new log: its header from the resumed game
        assert reply["ok"] and reply["saved"], reply
        until(lambda: (state / "current.log").exists(), 10, "the new game's log")
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
    (tmp_path / "notify.sock").unlink()
    assert "Ada, Ben, Dee" in players_menu_offers(state)

    (state / "current.log").unlink()                 # no game to resume: the list comes from the disk
    with ready(tmp_path, {"RUNTIME_DIRECTORY": ""}, args=("--config", str(config))) as (daemon, _):
        until(lambda: (state / "current.log").exists(), 10, "no log")
        host(state)                                   # the hub is up: the header is handed over
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
    with open_log(state / "current.log") as reader:
        assert reader.header["players"] == ["Red", "Blue", "Green"]
        assert reader.header["names"] == ["Red", "Blue", "Green", "Ada", "Ben", "Dee", "Cy"]
    assert "Ada, Ben, Dee" in players_menu_offers(state)
