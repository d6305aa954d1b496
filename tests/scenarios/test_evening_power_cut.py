"""The evening outlives a power cut: on the real daemon (its mock pins pressed by
tests/helpers/pinpad.py) two games of Grab Bag are played to their end, the daemon is killed
(SIGKILL) and started again, and the real web process gives the same standings; the host's
End evening (through the web process and the hub) closes it, and after another SIGKILL and
restart the podium and History still have it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from helpers.zygote import Child

from pi_companion.web.live import start_web, stop_web, until

HELPER = Path(__file__).parents[1] / "helpers" / "pinpad.py"
ROOT = Path(__file__).parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HELPER.parent), *sys.path]),
       "RUNTIME_DIRECTORY": ""}
CONFIG = """[box]
game = "grab-bag"
players = ["Ada", "Ben", "Cy"]
seed = 5
[games.grab-bag]
cards = 1
variant = "all-seekers"
[web]
enabled = true
"""


class Daemon:
    """`pi-companion run --pins mock --display dummy` with fingers on its pins."""

    def __init__(self, tmp: Path) -> None:
        argv = ["run", "--pins", "mock", "--display", "dummy", "--config", str(tmp / "box.toml"),
                "--state-dir", str(tmp / "state")]
        with open(tmp / "stderr.txt", "a") as stderr:
            self.proc = subprocess.Popen([sys.executable, str(HELPER), *argv], env=ENV,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=stderr, text=True)
        self.child = Child(self.proc.pid, self.proc.stdin, self.proc.stdout)
        assert self.child.out.readline().startswith("ready"), (tmp / "stderr.txt").read_text()[-800:]

    def tap(self, button: str) -> None:
        """A press held 80 ms, then 150 ms before anything else (the contacts' debounce)."""
        for edge in ("press", "release"):
            self.child.inp.write(f"{edge} {button}\n")
            self.child.inp.flush()
            time.sleep(0.08 if edge == "press" else 0.15)

    def report(self) -> dict[str, Any]:
        self.child.inp.write("report\n")
        self.child.inp.flush()
        return json.loads(self.child.out.readline().split(" ", 1)[1])["report"]

    def kill(self) -> None:
        self.child.kill()
        self.proc.wait()


def win(daemon: Daemon, seat: str) -> None:
    """A game of one card: `seat` buzzes, the host's YES judges it right: game over."""
    daemon.tap(seat)
    time.sleep(0.3)                                   # the settle window closes
    daemon.tap("YES")
    until(lambda: daemon.report()["over"], 10, "the game did not end")


def slowly(predicate, what: str) -> None:
    """`until`, asking four times a second (the web process limits requests per client)."""
    until(lambda: time.sleep(0.25) or predicate(), 10, what)


def get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=10) as r:
        body = r.read().decode()
    return json.loads(body) if path.startswith("/api/") else body


def post(base: str, token: str, body: dict) -> dict:
    req = urllib.request.Request(base + "/api/command", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "X-Host-Token": token})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def rows(view: dict) -> list[tuple]:
    return [(r["name"], r["rank"], r["played"], r["wins"], r["places"], r["per_game"]) for r in view["rows"]]


def test_two_finished_games_are_tonights_standings_across_a_power_cut(tmp_path):
    (tmp_path / "box.toml").write_text(CONFIG)
    state = tmp_path / "state"
    daemon = Daemon(tmp_path)
    try:
        win(daemon, "P2")                                # Ben
        daemon.tap("YES")
        daemon.tap("YES")                                # play again
        until(lambda: not daemon.report()["over"], 10, "no new game")
        win(daemon, "P3")                                # Cy
        until(lambda: len(list((state / "history").glob("game-*.log"))) == 2, 10, "not in history")
    finally:
        daemon.kill()                                    # the power cut
    daemon = Daemon(tmp_path)
    web, base = start_web(state, state / "hub.sock")
    try:
        second_and_third_boots(daemon, tmp_path, state, base)
    finally:
        stop_web(web, 10)


def second_and_third_boots(daemon: Daemon, tmp_path: Path, state: Path, base: str) -> None:
    """After the cut: the standings, End evening from the host, another cut, the podium."""
    try:
        view = get(base, "/api/evening")
        assert view["last"] is None and view["open"]["games"] == 2
        grab = "Grab Bag"
        assert rows(view["open"]) == [
            ("Ben", 1, 2, 1, [1, 1, 0], {grab: {"played": 2, "wins": 1}}),
            ("Cy", 1, 2, 1, [1, 1, 0], {grab: {"played": 2, "wins": 1}}),
            ("Ada", 3, 2, 0, [0, 2, 0], {grab: {"played": 2, "wins": 0}})]
        token = (state / "host-token").read_text().strip()
        assert post(base, token, {"cmd": "end-evening"}) == {"ok": True, "error": "", "saved": True}
        slowly(lambda: get(base, "/api/evening")["last"] is not None, "the evening did not end")
        assert daemon.report()["over"]                   # ending the evening leaves the table alone
    finally:
        daemon.kill()
    daemon = Daemon(tmp_path)
    try:
        view = get(base, "/api/evening")
        assert view["open"]["games"] == 0 and view["last"]["ended"] and view["last"]["games"] == 2
        assert [(r["name"], r["rank"]) for r in view["last"]["podium"]] == [("Ben", 1), ("Cy", 1), ("Ada", 3)]
        page = get(base, "/history")
        assert "Evening 1 (ended)" in page and "1st Ben (1)" in page
        daemon.tap("YES")
        daemon.tap("YES")                                # the next game starts the next evening
        until(lambda: not daemon.report()["over"], 10, "no new game")
        win(daemon, "P1")
        slowly(lambda: get(base, "/api/evening")["open"]["games"] == 1, "not in tonight's")
        assert get(base, "/api/evening")["open"]["rows"][0]["name"] == "Ada"
    finally:
        daemon.kill()
